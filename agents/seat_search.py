"""A search of one reply over the seat-value network: each move of a two-player decision before
the last round is worth what the opponent's best answer leaves it, averaged over sampled deals.

``SeatValueAgent`` values the position a move leaves as the mover sees it, the replies folded
into the network's estimate. ``SeatSearchAgent`` looks one ply further. It deals the cards it has
not seen at random (``agents.determinize``), ``samples`` times. In each deal the opponent holds
a known hand, so for every move of mine it plays each legal reply and the network values the
position that reply leaves *as the opponent sees it*: its own hand, the cards it has not seen
(mine and the stock), the table and both piles. The opponent picks its best reply by those
values, and my move is worth the negation, the network's values being point differences for the
seat that moved. The mean over the deals ranks my moves. A move that ends the round leaves no
reply: then the moves are valued as ``seat_value`` values them. The last round is solved as
``last_round`` plays it.

Every row of a batch, all its deals and replies, is valued in one forward pass.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.determinize import Determinizer
from agents.seat_value import SeatValueAgent, afterstate_row
from agents.seats import SeatView
from scopa_env.engine import MaskMove
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


class SeatSearchAgent(SeatValueAgent):
    """Plays each decision before the last round by the opponent's best reply in sampled deals,
    as the seat-value network values it (module doc); the last round as ``last_round``.

    Args:
        rules: the rules (a ``Rules``, preset name or option dict); the networks' must match.
        seed: seeds the sampled deals.
        network: the path of a ``SeatValue``; the shipped one by default.
        value: the path of the last round's ``LastRoundValue``; the shipped one by default.
        samples: the deals sampled a decision.
        torch_threads: torch's threads, for the whole process.
    """

    name = "seat_search"

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        network: str | None = None,
        value: str | None = None,
        samples: int = 16,
        torch_threads: int = 1,
    ) -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise PlayerError(f"seat_search needs samples >= 1, got {samples!r}")
        super().__init__(rules, seed, network, value, torch_threads)
        if self.net.plays:
            raise PlayerError(
                "seat_search values replies whose plays this round it does not track: give a "
                "seat-value network made without plays"
            )
        self.samples = samples
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampled deals (``None`` keeps the stream); nothing else is remembered."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def rows_to_value(
        self,
        info: InfoState,
        vector: np.ndarray,
        moves: list[MaskMove],
        afterstates: list[tuple[int, ...]],
    ) -> tuple[list[tuple[int, ...]], Callable[[np.ndarray], np.ndarray]]:
        """The opponent's afterstates of every reply to every move in each sampled deal, and
        how their values make each move's: minus the best reply's, averaged over the deals."""
        if info.opp_hand_size == 0:  # my move ends the round
            return super().rows_to_value(info, vector, moves, afterstates)
        sampler = Determinizer(SeatView.from_info(info, vector), self.rules)
        rows: list[tuple[int, ...]] = []
        replies: list[int] = []
        for _ in range(self.samples):
            deal = sampler.sample(self.rng)
            for card, capture in moves:
                child = deal.copy()
                child.play_unchecked(card, capture)
                answers = child.legal_mask_moves()
                rows.extend(afterstate_row(child, c, k)[0] for c, k in answers)
                replies.append(len(answers))

        def move_values(values: np.ndarray) -> np.ndarray:
            best = np.maximum.reduceat(values, np.cumsum([0, *replies[:-1]]))
            return -best.reshape(self.samples, len(moves)).mean(axis=0)

        return rows, move_values

    def __repr__(self) -> str:
        return (
            f"SeatSearchAgent(width={self.net.width}, samples={self.samples}, rules={self.rules})"
        )
