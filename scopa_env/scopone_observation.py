"""The observation vector of ``scopone_v0``, seen from one of the four seats.

Seats are named from the observer: *next* is the opponent who plays right after me, *partner*
sits opposite and plays second after me, *prev* is the opponent who plays right before me
(seat ``(me + 1) % 4``, ``(me + 2) % 4`` and ``(me + 3) % 4``). Captures, scope, match points
and the last capturer are per partnership: *ours* (me and my partner) and *theirs*. The vector
holds nothing the observer could not know: the other three hands appear only as the ``unseen``
plane and their sizes. Card planes come first, as in ``scopa_env.observation`` (whose plane
encoding this module shares), so ``obs[:NUM_PLANES * 40].reshape(NUM_PLANES, 40)`` is a
(plane, card) image. Use the named slices in ``OBS_SLICES`` (or ``plane(obs, name)``).

=====  ===================  ======  =========================================================
Index  Name                 Size    Meaning (1.0 = yes unless stated)
=====  ===================  ======  =========================================================
0      ``hand``             40      the card is in my hand (not the pending card)
40     ``table``            40      the card is on the table
80     ``our_captures``     40      the card is in my partnership's capture pile
120    ``their_captures``   40      the card is in the opponents' capture pile
160    ``my_played``        40      I played the card this deal
200    ``next_played``      40      the next player (an opponent) played the card
240    ``partner_played``   40      my partner played the card
280    ``prev_played``      40      the previous player (an opponent) played the card
320    ``unseen``           40      the card is in another player's hand
360    ``pending``          40      the card I have played and am capturing with
400    ``picked``           40      the table cards I have picked so far for that capture
440    ``phase``            2       one-hot: [choose a card to play, pick table cards]
442    ``hand_sizes``       3       cards in hand / 10: [next, partner, prev]
445    ``scope``            2       scope this deal [ours, theirs] / 20
447    ``match_score``      2       match points before this deal [ours, theirs] / target,
                                    capped at 4
449    ``target``           1       the match target / 100
450    ``dealer``           4       one-hot, who deals: [me, next, partner, prev]
454    ``last_capturer``    3       one-hot: [my partnership, the opponents, nobody yet]
=====  ===================  ======  =========================================================

All values lie in [0, 1] except ``match_score`` (in [0, 4]). The vector is float32.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from scopa_env.cards import NUM_CARDS
from scopa_env.info_state import InfoState, register_decoder
from scopa_env.observation import (
    MATCH_SCORE_CAP,
    PHASE_VALUES,
    TARGET_SCALE,
    DealView,
    ObservationWriter,
    layout_slices,
    live_cards,
    pack_floats,
    planes_to_masks,
    seat_blocks,
    split_pending,
    write_observation,
)

PLANES = (
    "hand",
    "table",
    "our_captures",
    "their_captures",
    "my_played",
    "next_played",
    "partner_played",
    "prev_played",
    "unseen",
    "pending",
    "picked",
)
NUM_PLANES = len(PLANES)
SCALARS = (
    ("phase", 2),
    ("hand_sizes", 3),
    ("scope", 2),
    ("match_score", 2),
    ("target", 1),
    ("dealer", 4),
    ("last_capturer", 3),
)
#: Seat offsets from the observer of the ``*_played`` planes, ``hand_sizes`` and ``dealer``.
NEXT, PARTNER, PREV = 1, 2, 3


#: Name -> slice of the observation vector.
OBS_SLICES: dict[str, slice] = layout_slices(PLANES, SCALARS)
OBS_SIZE: int = OBS_SLICES["last_capturer"].stop
HAND_SCALE = 10.0
SCOPE_SCALE = 20.0

#: Upper bound of each feature, for the observation space.
OBS_HIGH = np.ones(OBS_SIZE, dtype=np.float32)
OBS_HIGH[OBS_SLICES["match_score"]] = MATCH_SCORE_CAP
#: The scalars as the encoder gives them: ``phase``, ``deal_block``'s and ``last_capturer``,
#: which take few values, come packed ahead as float32 bytes (as in
#: ``scopa_env.table_observation``), since each value handed to ``struct`` costs about as
#: much as a whole group.
_WIDTH = dict(SCALARS)
_SCALARS = struct.Struct(
    f"<{4 * _WIDTH['phase']}s{_WIDTH['hand_sizes']}f{_WIDTH['scope']}f"
    f"{4 * (_WIDTH['match_score'] + _WIDTH['target'] + _WIDTH['dealer'])}s"
    f"{4 * _WIDTH['last_capturer']}s"
)
#: Per observer seat: the seats at offsets 0 (me), 1 (next), 2 (partner), 3 (prev).
_SEATS = tuple(tuple((player + offset) % 4 for offset in range(4)) for player in range(4))
#: Per dealer offset from the observer: the one-hot ``dealer`` feature.
_DEALER = tuple(tuple(float(k == i) for i in range(4)) for k in range(4))
#: The ``hand_sizes`` feature of each number of cards a hand mask can hold (looked up: a
#: division costs twice as much).
_HAND_VALUES = [k / HAND_SCALE for k in range(NUM_CARDS + 1)]
#: The one-hot ``last_capturer`` feature, packed: [my partnership, the opponents, nobody yet].
_LAST = tuple(pack_floats(float(k == i) for i in range(3)) for k in range(3))
#: The ``phase`` feature, packed: [play, pick].
_PHASE = tuple(pack_floats(phase) for phase in PHASE_VALUES)


def plane(obs: np.ndarray, name: str) -> np.ndarray:
    """The named feature of a Scopone observation (a view; works on batches too)."""
    return obs[..., OBS_SLICES[name]]


def deal_block(match_score: tuple[int, int], target: int, dealer: int, player: int) -> bytes:
    """The ``match_score``, ``target`` and ``dealer`` features of seat ``player``, together in
    the vector, packed as float32: they change only between deals, so the environment works
    them out once a deal."""
    team = player & 1
    return pack_floats(
        (
            min(match_score[team] / target, MATCH_SCORE_CAP),
            min(match_score[1 - team] / target, MATCH_SCORE_CAP),
            target / TARGET_SCALE,
            *_DEALER[(dealer - player) % 4],
        )
    )


#: Every seat's ``deal_block``, for the environment's new deals.
deal_blocks = seat_blocks(deal_block, 4)


def writer() -> ObservationWriter:
    """A writer of this layout's vectors, for the environment's hot path."""
    return ObservationWriter(NUM_PLANES, _SCALARS)


def view_features(
    view: DealView,
    player: int,
    pending_card: int | None,
    picked: int,
    block: bytes,
) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The card planes (bit masks) and scalar values of seat ``player``'s observation, from a
    deal's ``view`` (its stock size unused: Scopone deals every card) and the seat's
    ``deal_block``: what ``encode`` and the environment's hot path both run."""
    hands, table, piles, played, _stock, scope, last_capturer, _dealer, live = view
    me, after, partner, before = _SEATS[player]
    ours, theirs = piles[me] | piles[partner], piles[after] | piles[before]
    hand = hands[me]
    unseen = live ^ hand
    if pending_card is None:
        pending, phase = 0, _PHASE[0]
    else:
        hand, pending, _values = split_pending(hand, pending_card)
        phase = _PHASE[1]
    return (
        hand,
        table,
        ours,
        theirs,
        played[me],
        played[after],
        played[partner],
        played[before],
        unseen,
        pending,
        picked,
    ), (
        phase,
        _HAND_VALUES[hands[after].bit_count()],
        _HAND_VALUES[hands[partner].bit_count()],
        _HAND_VALUES[hands[before].bit_count()],
        (scope[me] + scope[partner]) / SCOPE_SCALE,
        (scope[after] + scope[before]) / SCOPE_SCALE,
        block,
        _LAST[2 if last_capturer is None else last_capturer & 1 != me & 1],
    )


def encode(
    hands: tuple[int, ...],
    table: int,
    piles: tuple[int, ...],
    played: tuple[int, ...],
    scope: tuple[int, ...],
    last_capturer: int | None,
    dealer: int,
    player: int,
    *,
    pending_card: int | None = None,
    picked: int = 0,
    match_score: tuple[int, int] = (0, 0),
    target: int = 11,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The observation of seat ``player`` from a four-seat deal's masks (``Deal.masks``).

    ``hands``, ``piles``, ``played`` and ``scope`` are per seat; ``match_score`` is per
    partnership (seats 0 and 2, then 1 and 3).
    """
    view = (hands, table, piles, played, 0, scope, last_capturer, dealer, live_cards(table, piles))
    block = deal_block(match_score, target, dealer, player)
    planes, values = view_features(view, player, pending_card, picked, block)
    return write_observation(planes, NUM_PLANES, _SCALARS, values, out)


def decode(observation: np.ndarray) -> InfoState:
    """What the observer knows, read back from one observation vector (pairs and the last
    capturer per partnership, ``other_hands`` the next, partner and previous hand sizes)."""
    obs = np.asarray(observation, dtype=np.float32)
    planes = planes_to_masks(obs, NUM_PLANES)
    masks = {name: int(m) for name, m in zip(PLANES, planes, strict=True)}

    def scalars(name: str, scale: float) -> tuple[int, ...]:
        return tuple(round(float(x) * scale) for x in obs[OBS_SLICES[name]])

    target = scalars("target", TARGET_SCALE)[0]
    sizes = scalars("hand_sizes", HAND_SCALE)
    last = int(np.argmax(obs[OBS_SLICES["last_capturer"]]))
    pending = masks["pending"]
    return InfoState(
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
        scope=scalars("scope", SCOPE_SCALE),  # type: ignore[arg-type]
        match_score=scalars("match_score", target),  # type: ignore[arg-type]
        target=target,
        is_dealer=bool(obs[OBS_SLICES["dealer"]][0] > 0.5),
        last_capturer=None if last == 2 else last,
        other_hands=sizes,
    )


register_decoder(OBS_SIZE, decode)


def encode_dealt(
    hands: tuple[int, ...],
    table: int,
    piles: tuple[int, ...],
    played: tuple[int, ...],
    stock_size: int,
    *rest: Any,
    **options: Any,
) -> np.ndarray:
    """``encode`` called as ``observation.encode`` (the environments' encoder signature): all
    cards are dealt, so the stock (always empty) is not observed."""
    return encode(hands, table, piles, played, *rest, **options)
