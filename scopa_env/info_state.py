"""What one player knows at a decision point, as card bit masks and counts.

Every observation layout decodes into an ``InfoState`` (each layout module owns its encoder and
its decoder and registers the decoder here), so every player works from the same reading of an
observation whatever the table. The legal moves and the action that carries a move out follow
from it alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scopa_env.actions import PICK_OFFSET
from scopa_env.captures import capture_table, consistent_sets
from scopa_env.cards import CAPTURE_VALUE, cards_of
from scopa_env.engine import MaskMove
from scopa_env.rules import Rules

_VALUE = [int(v) for v in CAPTURE_VALUE]
_DECODERS: dict[int, Callable[[np.ndarray], InfoState]] = {}


def register_decoder(size: int, decode: Callable[[np.ndarray], InfoState]) -> None:
    """Let ``InfoState.from_observation`` read observations of ``size`` with ``decode``."""
    _DECODERS[size] = decode


@dataclass(frozen=True, slots=True)
class InfoState:
    """Everything one player knows at a decision point, as card bit masks and counts.

    ``hand`` excludes a ``pending`` card (the card being played while table cards are picked).
    Pairs are ``(mine, the opponent's)``; ``last_capturer`` is 0 (me), 1 (opponent) or ``None``.
    In Scopone the pairs and ``last_capturer`` are per partnership (mine and my partner's, the
    opponents'), ``opp_hand_size`` is the hand of the next player (the opponent who replies to
    my move) and ``other_hands`` holds the next player's, my partner's and the previous player's
    hand sizes; it is empty with two players. At the other tables of more seats
    (``scopa_env.table_observation``) the pairs are (my side, every other side together),
    ``match_score`` is (my side's, the best other side's) and ``other_hands`` lists every other
    seat's hand from the next seat on; the observation itself keeps each seat apart.
    """

    hand: int
    table: int
    piles: tuple[int, int]
    played: tuple[int, int]
    unseen: int
    pending: int | None
    picked: int
    stock_size: int
    opp_hand_size: int
    scope: tuple[int, int]
    match_score: tuple[int, int]
    target: int
    is_dealer: bool
    last_capturer: int | None
    other_hands: tuple[int, ...] = ()

    @classmethod
    def from_observation(cls, observation: np.ndarray) -> InfoState:
        """Decode one observation vector (the ``"observation"`` entry of the dict) of any
        registered layout (``register_decoder``), told apart by its size."""
        obs = np.asarray(observation, dtype=np.float32)
        decode = _DECODERS.get(obs.shape[-1]) if obs.ndim == 1 else None
        if decode is None:
            raise ValueError(
                f"unexpected observation shape {obs.shape}; known layouts have sizes "
                f"{sorted(_DECODERS)}"
            )
        return decode(obs)

    @property
    def seats(self) -> int:
        """The players at the table: two where ``other_hands`` is empty."""
        return len(self.other_hands) + 1 if self.other_hands else 2

    @property
    def cards_to_play(self) -> int:
        """The cards everyone has still to play this deal, mine (a pending card too) included."""
        others = sum(self.other_hands) if self.other_hands else self.opp_hand_size
        return self.full_hand.bit_count() + others + self.stock_size

    @property
    def in_pick_phase(self) -> bool:
        return self.pending is not None

    @property
    def full_hand(self) -> int:
        """My hand including a pending card: the hand of the position before the play."""
        return self.hand if self.pending is None else self.hand | 1 << self.pending

    @property
    def is_last_play(self) -> bool:
        """Whether my play now is the last of the deal (no scopa on it by default)."""
        return self.full_hand.bit_count() == 1 and not self.opp_hand_size and not self.stock_size

    def legal_moves(self, rules: Rules) -> list[MaskMove]:
        """My legal ``(card, capture mask)`` moves now.

        In the pick phase only the pending card's captures that contain every picked card.
        """
        capture_sets = capture_table(rules)
        if self.pending is not None:
            options = capture_sets(self.table, _VALUE[self.pending])
            return [(self.pending, s) for s in consistent_sets(options, self.picked)]
        moves: list[MaskMove] = []
        for card in cards_of(self.hand):
            options = capture_sets(self.table, _VALUE[card])
            if options:
                moves.extend((card, s) for s in options)
            else:
                moves.append((card, 0))
        return moves

    def action(self, move: MaskMove) -> int:
        """The ``scopa_v0`` action that carries out ``move`` from this decision point.

        Play phase: the card. Pick phase: one table card of the chosen capture not yet picked.
        """
        card, capture = move
        if self.pending is None:
            return card
        remaining = capture & ~self.picked
        if card != self.pending or not remaining:
            raise ValueError(f"move {move} does not continue the capture with the pending card")
        return PICK_OFFSET + (remaining & -remaining).bit_length() - 1
