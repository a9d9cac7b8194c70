"""A search shown the whole deal: what the hidden cards are worth to ``alphabeta_value``.

``OracleAgent`` is ``alphabeta_value``'s search (``agents.alphabeta_value``) run on the true
deal instead of deals sampled from what the player has seen. It cheats, so it is not a player
of the game: it plays only where the evaluation harness shows it the deal before each move
(``show``; ``evaluation.harness.play_game``), and refuses an observation alone. Beside
``alphabeta_value`` on the same decks (``scopa eval oracle ismcts`` and ``scopa eval
alphabeta_value ismcts``, paired by ``scopa compare``) it measures the most that any better
guess of the hidden cards could add to that search, and whether a deeper search pays once the
cards are known (``depth=5``).

``hidden="all"`` searches the one true deal: the opponent's hand and the order of the stock.
``hidden="hand"`` knows the opponent's hand but not the stock, which it shuffles anew in each
of ``samples`` deals. Two-player Scopa, as ``alphabeta_value``.
"""

from __future__ import annotations

from agents.alphabeta_value import ValueAlphaBetaAgent
from agents.determinize import Determinizer
from scopa_env.engine import Deal
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.players import Observation
from scopa_env.rules import Rules

HIDDEN = ("all", "hand")


class OracleAgent(ValueAlphaBetaAgent):
    """``alphabeta_value``'s search on the deal the harness shows it (module doc).

    Args:
        rules: the rules (a ``Rules``, preset name or option dict).
        hidden: what it is shown of the cards the player cannot see: ``all`` (the opponent's
            hand and the stock's order; one deal searched) or ``hand`` (the opponent's hand;
            the stock shuffled in each of ``samples`` deals).
        samples: deals searched a decision with ``hidden="hand"``.
        depth: plies of every line, the root move included (as ``alphabeta_value``).
        value: the path of a ``DealValue`` network; the shipped one by default.
        blend: ``DealValue``'s share of a leaf's value, the rest the material balance.
        seed: seed of the stock's shuffles (``hidden="hand"``).
    """

    def __init__(
        self,
        rules: Rules | str | None = None,
        hidden: str = "all",
        samples: int = 16,
        depth: int = 3,
        value: str | None = None,
        blend: float = 0.7,
        seed: int | None = None,
    ) -> None:
        if hidden not in HIDDEN:
            raise ValueError(f"hidden is one of {list(HIDDEN)}, got {hidden!r}")
        super().__init__(
            rules, samples=samples, depth=depth, value=value, blend=blend, seed=seed, infer=False
        )
        self.hidden = hidden
        self._deal: Deal | None = None

    def show(self, deal: Deal) -> None:
        """The true deal of the next ``act``, the seat to move being this player's (read, never
        changed)."""
        self._deal = deal

    def act(self, observation: Observation) -> int:
        if self._deal is None:
            raise PlayerError(
                "oracle searches the true deal, which the evaluation harness shows it before "
                "each move (show); it cannot play from an observation alone"
            )
        try:
            return super().act(observation)
        finally:
            self._deal = None

    def deals_searched(self, info: InfoState) -> int:
        return 1 if self.hidden == "all" else super().deals_searched(info)

    def sampled_deals(self, determinizer: Determinizer, info: InfoState) -> list[tuple[Deal, int]]:
        """The true deal, or with ``hidden="hand"`` the true hands with the stock shuffled, in
        the searching player's frame (``Determinizer.deal``)."""
        assert self._deal is not None
        hand = list(self._deal.hands[1 - self._deal.current_player])
        stock = list(self._deal.stock)
        if self.hidden == "all":
            return [(determinizer.deal(hand + stock), 1)]
        shuffles = (self.rng.permutation(stock).tolist() for _ in range(self.deals_searched(info)))
        return [(determinizer.deal(hand + order), 1) for order in shuffles]
