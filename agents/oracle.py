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
of ``samples`` deals. ``reveal`` shows it the cards only at some decisions, and at the others
it plays as ``alphabeta_value`` does: ``after_its_play``, where the opponent has played this
round, bounds what any reading of those plays could add (``infer``); ``before_its_play``, where
it has not, is what no reading of this round's plays can reach. Two-player Scopa, as
``alphabeta_value``.
"""

from __future__ import annotations

from agents.alphabeta_value import ValueAlphaBetaAgent
from agents.determinize import Determinizer
from scopa_env.engine import Deal
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.players import Observation
from scopa_env.rules import Rules
from scopa_env.tables import SCOPA

HIDDEN = ("all", "hand")
REVEAL = ("always", "after_its_play", "before_its_play")


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
        reveal: at which decisions it is shown the cards: ``always``, ``after_its_play``
            (where the opponent has played a card this round) or ``before_its_play`` (where it
            has not); at the others it searches ``samples`` deals drawn as ``alphabeta_value``
            draws them.
        infer: draw those deals by the opponent's plays this round (``alphabeta_value``'s
            default); without ``reveal`` it draws none.
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
        reveal: str = "always",
        infer: bool = False,
    ) -> None:
        if hidden not in HIDDEN:
            raise ValueError(f"hidden is one of {list(HIDDEN)}, got {hidden!r}")
        if reveal not in REVEAL:
            raise ValueError(f"reveal is one of {list(REVEAL)}, got {reveal!r}")
        super().__init__(
            rules, samples=samples, depth=depth, value=value, blend=blend, seed=seed, infer=infer
        )
        self.hidden = hidden
        self.reveal = reveal
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

    def revealed(self, info: InfoState) -> bool:
        """Whether it is shown the cards at the decision ``info`` reads."""
        if self.reveal == "always":
            return True
        played = info.opp_hand_size < SCOPA.hand_size
        return played == (self.reveal == "after_its_play")

    def deals_searched(self, info: InfoState) -> int:
        if self.hidden == "all" and self.revealed(info):
            return 1
        return super().deals_searched(info)

    def sampled_deals(self, determinizer: Determinizer, info: InfoState) -> list[tuple[Deal, int]]:
        """The true deal, or with ``hidden="hand"`` the true hands with the stock shuffled, in
        the searching player's frame (``Determinizer.deal``); where ``reveal`` hides them,
        ``alphabeta_value``'s samples."""
        assert self._deal is not None
        if not self.revealed(info):
            return super().sampled_deals(determinizer, info)
        hand = list(self._deal.hands[1 - self._deal.current_player])
        stock = list(self._deal.stock)
        if self.hidden == "all":
            return [(determinizer.deal(hand + stock), 1)]
        shuffles = (self.rng.permutation(stock).tolist() for _ in range(self.deals_searched(info)))
        return [(determinizer.deal(hand + order), 1) for order in shuffles]
