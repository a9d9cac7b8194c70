"""What a player knows, rebuilt from its observation, and deals consistent with it.

``InfoState.from_observation`` decodes ``scopa_v0``'s observation vector (layout in
``scopa_env.observation``), or ``scopone_v0``'s (``scopa_env.scopone_observation``), back into
card bit masks and counts, so every player works from the same reading of it. ``Determinizer``
turns a two-player ``InfoState`` into full ``Deal`` positions by dealing the unseen cards at
random to the opponent's hand and the stock: the forward model that search players (ISMCTS)
sample. In every determinized deal the observing player is player 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scopa_env import scopone_observation as scopone
from scopa_env.captures import capture_table, consistent_sets
from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, cards_of, mask_of
from scopa_env.engine import Deal
from scopa_env.observation import (
    HAND_SCALE,
    NUM_PLANES,
    OBS_SLICES,
    PLANES,
    SCOPE_SCALE,
    STOCK_SCALE,
    TARGET_SCALE,
)
from scopa_env.rules import Rules

_VALUE = [int(v) for v in CAPTURE_VALUE]
_BIT_WEIGHTS = np.uint64(1) << np.arange(NUM_CARDS, dtype=np.uint64)
_PLANE_INDEX = {name: i for i, name in enumerate(PLANES)}


def plane_masks(observations: np.ndarray) -> np.ndarray:
    """The card planes of one observation ``(obs_size,)`` or a batch ``(n, obs_size)`` as masks.

    Returns uint64 bit masks of shape ``(..., NUM_PLANES)`` in the order of ``PLANES``.
    """
    planes = np.asarray(observations)[..., : NUM_PLANES * NUM_CARDS]
    bits = planes.reshape(*planes.shape[:-1], NUM_PLANES, NUM_CARDS) > 0.5
    return (bits.astype(np.uint64) * _BIT_WEIGHTS).sum(axis=-1, dtype=np.uint64)


Move = tuple[int, int]
"""A move as ``(card, capture mask)``; a zero mask trails the card."""


@dataclass(frozen=True, slots=True)
class InfoState:
    """Everything one player knows at a decision point, as card bit masks and counts.

    ``hand`` excludes a ``pending`` card (the card being played while table cards are picked).
    Pairs are ``(mine, the opponent's)``; ``last_capturer`` is 0 (me), 1 (opponent) or ``None``.
    In Scopone the pairs and ``last_capturer`` are per partnership (mine and my partner's, the
    opponents'), ``opp_hand_size`` is the hand of the next player (the opponent who replies to
    my move) and ``other_hands`` holds the next player's, my partner's and the previous player's
    hand sizes; it is empty with two players.
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
        """Decode one observation vector (the ``"observation"`` entry of the dict)."""
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape == (scopone.OBS_SIZE,):
            return cls._from_scopone_observation(obs)
        masks = [int(m) for m in plane_masks(obs)]
        pending_mask = masks[_PLANE_INDEX["pending"]]
        target = round(float(obs[OBS_SLICES["target"]][0]) * TARGET_SCALE)
        scope = obs[OBS_SLICES["scope"]]
        match = obs[OBS_SLICES["match_score"]]
        last = int(np.argmax(obs[OBS_SLICES["last_capturer"]]))
        return cls(
            hand=masks[_PLANE_INDEX["hand"]],
            table=masks[_PLANE_INDEX["table"]],
            piles=(masks[_PLANE_INDEX["my_captures"]], masks[_PLANE_INDEX["opp_captures"]]),
            played=(masks[_PLANE_INDEX["my_played"]], masks[_PLANE_INDEX["opp_played"]]),
            unseen=masks[_PLANE_INDEX["unseen"]],
            pending=pending_mask.bit_length() - 1 if pending_mask else None,
            picked=masks[_PLANE_INDEX["picked"]],
            stock_size=round(float(obs[OBS_SLICES["stock_size"]][0]) * STOCK_SCALE),
            opp_hand_size=round(float(obs[OBS_SLICES["opp_hand_size"]][0]) * HAND_SCALE),
            scope=(round(float(scope[0]) * SCOPE_SCALE), round(float(scope[1]) * SCOPE_SCALE)),
            match_score=(round(float(match[0]) * target), round(float(match[1]) * target)),
            target=target,
            is_dealer=bool(obs[OBS_SLICES["dealer"]][0] > 0.5),
            last_capturer=None if last == 2 else last,
        )

    @classmethod
    def _from_scopone_observation(cls, obs: np.ndarray) -> InfoState:
        bits = obs[: scopone.NUM_PLANES * NUM_CARDS].reshape(scopone.NUM_PLANES, NUM_CARDS) > 0.5
        weights = (bits.astype(np.uint64) * _BIT_WEIGHTS).sum(axis=1, dtype=np.uint64)
        masks = {name: int(mask) for name, mask in zip(scopone.PLANES, weights, strict=True)}

        def scalars(name: str, scale: float) -> tuple[int, ...]:
            return tuple(round(float(x) * scale) for x in obs[scopone.OBS_SLICES[name]])

        target = scalars("target", TARGET_SCALE)[0]
        sizes = scalars("hand_sizes", scopone.HAND_SCALE)
        last = int(np.argmax(obs[scopone.OBS_SLICES["last_capturer"]]))
        pending = masks["pending"]
        return cls(
            hand=masks["hand"],
            table=masks["table"],
            piles=(masks["our_captures"], masks["their_captures"]),
            played=(
                masks["my_played"] | masks["partner_played"],
                masks["next_played"] | masks["prev_played"],
            ),
            unseen=masks["unseen"],
            pending=pending.bit_length() - 1 if pending else None,
            picked=masks["picked"],
            stock_size=0,
            opp_hand_size=sizes[0],
            scope=scalars("scope", scopone.SCOPE_SCALE),  # type: ignore[arg-type]
            match_score=scalars("match_score", target),  # type: ignore[arg-type]
            target=target,
            is_dealer=bool(obs[scopone.OBS_SLICES["dealer"]][0] > 0.5),
            last_capturer=None if last == 2 else last,
            other_hands=sizes,
        )

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

    def legal_moves(self, rules: Rules) -> list[Move]:
        """My legal ``(card, capture mask)`` moves now.

        In the pick phase only the pending card's captures that contain every picked card.
        """
        capture_sets = capture_table(rules)
        if self.pending is not None:
            options = capture_sets(self.table, _VALUE[self.pending])
            return [(self.pending, s) for s in consistent_sets(options, self.picked)]
        moves: list[Move] = []
        for card in cards_of(self.hand):
            options = capture_sets(self.table, _VALUE[card])
            if options:
                moves.extend((card, s) for s in options)
            else:
                moves.append((card, 0))
        return moves

    def action(self, move: Move) -> int:
        """The ``scopa_v0`` action that carries out ``move`` from this decision point.

        Play phase: the card. Pick phase: one table card of the chosen capture not yet picked.
        """
        card, capture = move
        if self.pending is None:
            return card
        remaining = capture & ~self.picked
        if card != self.pending or not remaining:
            raise ValueError(f"move {move} does not continue the capture with the pending card")
        return NUM_CARDS + (remaining & -remaining).bit_length() - 1


class Determinizer:
    """Samples full deals consistent with an ``InfoState`` (the observer is player 0).

    The unseen cards (opponent's hand and the stock) are shuffled and dealt: the first
    ``opp_hand_size`` to the opponent, the rest to the stock in random order. Every such deal is
    equally likely given what the observer has seen, which is what SO-ISMCTS needs.
    """

    def __init__(self, info: InfoState, rules: Rules) -> None:
        if info.other_hands:
            raise ValueError("the determinizer deals two-player Scopa positions, not Scopone")
        unseen = cards_of(info.unseen)
        if len(unseen) != info.opp_hand_size + info.stock_size:
            raise ValueError(
                f"observation is inconsistent: {len(unseen)} unseen cards but the opponent holds "
                f"{info.opp_hand_size} and the stock {info.stock_size}"
            )
        self.info = info
        self.rules = rules
        self._unseen = np.array(unseen, dtype=np.int64)
        h = info.opp_hand_size
        # One validated position; samples are copies with the hidden cards dealt anew.
        self._template = Deal.from_position(
            hands=(cards_of(info.full_hand), unseen[:h]),
            table=cards_of(info.table),
            stock=unseen[h:],
            captures=(cards_of(info.piles[0]), cards_of(info.piles[1])),
            current_player=0,
            first_player=1 if info.is_dealer else 0,
            last_capturer=info.last_capturer,
            scope=info.scope,
            rules=rules,
        )

    def sample(self, rng: np.random.Generator) -> Deal:
        """One deal drawn uniformly from those consistent with the information state."""
        cards = rng.permutation(self._unseen).tolist()
        h = self.info.opp_hand_size
        # Only the opponent's hand and the stock differ from the validated template. The engine
        # has no public setter for them, and a validating ``from_position`` per sample would
        # cost about a third of a greedy rollout.
        deal = self._template.copy()
        deal._hands[1] = mask_of(cards[:h])
        deal._stock = tuple(cards[h:])
        return deal
