"""The observation vector shared by ``scopa_v0`` and the batched engine.

Every observation is seen from one player's seat and holds only what that player knows.
``encode`` builds it from a deal's masks; ``decode`` reads it back into an ``InfoState``.
Card features come first as 40-wide planes in card-id order, so
``obs[:NUM_PLANES * 40].reshape(NUM_PLANES, 40)`` is a (plane, card) image; scalar features
follow. Use the named slices in ``OBS_SLICES`` (or ``plane(obs, name)``) instead of offsets.

=====  ==================  ======  ==========================================================
Index  Name                Size    Meaning (1.0 = yes unless stated)
=====  ==================  ======  ==========================================================
0      ``hand``            40      the card is in my hand (not the pending card)
40     ``table``           40      the card is on the table
80     ``my_captures``     40      the card is in my capture pile
120    ``opp_captures``    40      the card is in the opponent's capture pile
160    ``my_played``       40      I played the card this deal
200    ``opp_played``      40      the opponent played the card this deal
240    ``unseen``          40      the card is in the opponent's hand or the stock
280    ``pending``         40      the card I have played and am capturing with
320    ``picked``          40      the table cards I have picked so far for that capture
360    ``phase``           2       one-hot: [choose a card to play, pick table cards]
362    ``stock_size``      1       cards left in the stock / 30
363    ``opp_hand_size``   1       cards in the opponent's hand / 3
364    ``scope``           2       scope this deal [mine, opponent's] / 18
366    ``match_score``     2       match points before this deal [mine, opponent's] / target,
                                   capped at 4
368    ``target``          1       the match target / 100
369    ``dealer``          1       I am the dealer of this deal
370    ``last_capturer``   3       one-hot: [me, the opponent, nobody yet]
=====  ==================  ======  ==========================================================

All values lie in [0, 1] except ``match_score`` (in [0, 4]). The vector is float32.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from scopa_env.cards import ALL_CARDS_MASK, NUM_CARDS
from scopa_env.info_state import InfoState, register_decoder

PLANES = (
    "hand",
    "table",
    "my_captures",
    "opp_captures",
    "my_played",
    "opp_played",
    "unseen",
    "pending",
    "picked",
)
NUM_PLANES = len(PLANES)
SCALARS = (
    ("phase", 2),
    ("stock_size", 1),
    ("opp_hand_size", 1),
    ("scope", 2),
    ("match_score", 2),
    ("target", 1),
    ("dealer", 1),
    ("last_capturer", 3),
)


def layout_slices(planes: Iterable[str], scalars: Iterable[tuple[str, int]]) -> dict[str, slice]:
    """Name -> slice of a layout: 40-wide card planes first, then the sized scalar features."""
    planes = tuple(planes)
    slices = {name: slice(i * NUM_CARDS, (i + 1) * NUM_CARDS) for i, name in enumerate(planes)}
    start = len(planes) * NUM_CARDS
    for name, size in scalars:
        slices[name] = slice(start, start + size)
        start += size
    return slices


#: Name -> slice of the observation vector.
OBS_SLICES: dict[str, slice] = layout_slices(PLANES, SCALARS)
OBS_SIZE: int = OBS_SLICES["last_capturer"].stop
MATCH_SCORE_CAP = 4.0
STOCK_SCALE = 30.0
HAND_SCALE = 3.0
SCOPE_SCALE = 18.0
TARGET_SCALE = 100.0

#: Upper bound of each feature, for the observation space.
OBS_HIGH = np.ones(OBS_SIZE, dtype=np.float32)
OBS_HIGH[OBS_SLICES["match_score"]] = MATCH_SCORE_CAP

#: Row ``b`` holds the 8 bits of byte ``b``, least significant first, as float32.
_BYTE_BITS = np.unpackbits(
    np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little"
).astype(np.float32)
_BYTE_BITS_INT8 = _BYTE_BITS.astype(np.int8)
_CARD_BYTES = NUM_CARDS // 8
#: The action mask as two 40-wide halves: play a card, take a table card.
_MASK_HALVES = 2
_BIT_WEIGHTS = np.uint64(1) << np.arange(NUM_CARDS, dtype=np.uint64)
_PLANE_INDEX = {name: i for i, name in enumerate(PLANES)}
#: Whether a native ``size_t`` is a little-endian 64-bit word, for ``ObservationWriter``.
_NATIVE_WORDS = struct.calcsize("@N") == 8 and sys.byteorder == "little"


def stack_masks(masks: Iterable[int]) -> int:
    """Card bit masks side by side in one integer: mask ``i`` in bits ``40 i`` to ``40 i + 39``."""
    bits = shift = 0
    for mask in masks:
        bits |= mask << shift
        shift += NUM_CARDS
    return bits


def bits_to_planes(bits: int, num_planes: int) -> np.ndarray:
    """The ``num_planes`` 40-wide 0/1 float32 planes of ``stack_masks``'s integer, in one lookup."""
    raw = np.frombuffer(bits.to_bytes(num_planes * _CARD_BYTES, "little"), dtype=np.uint8)
    return _BYTE_BITS.take(raw, axis=0).ravel()


def bits_to_mask(bits: int, size: int) -> np.ndarray:
    """A 0/1 int8 vector of ``size`` (a multiple of 8) entries from a bit mask: action masks."""
    raw = np.frombuffer(bits.to_bytes(size // 8, "little"), dtype=np.uint8)
    return _BYTE_BITS_INT8.take(raw, axis=0).ravel()


def mask_to_plane(mask: int) -> np.ndarray:
    """A 40-wide 0/1 float32 vector from a card bit mask."""
    return masks_to_planes((mask,))


def masks_to_planes(masks: Iterable[int]) -> np.ndarray:
    """The 40-wide planes of several card bit masks, one after another, in one lookup."""
    masks = tuple(masks)
    for mask in masks:
        if not 0 <= mask <= ALL_CARDS_MASK:
            raise ValueError(f"a card mask is an integer in [0, 2**40), got {mask!r}")
    return bits_to_planes(stack_masks(masks), len(masks))


def scalar_format(count: int) -> struct.Struct:
    """The packing of ``count`` float32 scalar features, for ``write_observation``."""
    return struct.Struct(f"<{count}f")


def pack_floats(values: Iterable[float]) -> bytes:
    """Float32 values packed as a layout's scalars format packs them, for a group of features
    packed ahead (a format's ``s`` field)."""
    values = tuple(values)
    return scalar_format(len(values)).pack(*values)


def write_observation(
    planes: Sequence[int],
    num_planes: int,
    scalars: struct.Struct,
    values: Sequence[float],
    out: np.ndarray | None = None,
) -> np.ndarray:
    """An observation vector: the 40-wide planes of the card masks ``planes``, then ``values``.

    ``values`` are the scalar features as the layout's ``scalars`` packs them: floats (rounded
    to float32 as numpy rounds a Python float), or float32 bytes for a group packed ahead
    (``pack_floats``). The vector is new unless ``out`` is given.
    """
    if len(planes) != num_planes:
        raise ValueError(f"{num_planes} planes expected, got {len(planes)}")
    bits = stack_masks(planes)
    start = num_planes * NUM_CARDS
    raw = np.frombuffer(bits.to_bytes(num_planes * _CARD_BYTES, "little"), dtype=np.uint8)
    obs = np.empty(start + scalars.size // 4, dtype=np.float32)
    # Byte values index the 256 rows, so "clip" never clips; it lets take write in place.
    _BYTE_BITS.take(raw, axis=0, out=obs[:start].reshape(-1, 8), mode="clip")
    scalars.pack_into(obs, 4 * start, *values)  # type: ignore[arg-type]  # a writable buffer
    if out is not None:
        out[:] = obs
        return out
    return obs


class ObservationWriter:
    """``write_observation`` for one layout through scratch arrays made once, returning a new
    vector each call (one copy, instead of building each array and view anew); ``observe``
    writes the action mask beside it in the same calls.

    One scratch buffer holds the mask's 80 entries as float32, the vector right after them,
    then each plane's mask (and first the action mask's two 40-action halves) as a
    little-endian 64-bit word (a native ``size_t`` where it is one, which ``struct`` packs
    faster), so that one ``struct`` call writes the scalars and the masks together and one
    ``take`` of their first five bytes (40 cards) writes every 0/1 entry;
    the action mask then comes out as int8 by one cast. Building a mask on its own costs more
    than that (and a cache of masks misses once hands hold many cards). Not for sharing between
    threads: each environment has its own.
    """

    def __init__(self, num_planes: int, scalars: struct.Struct) -> None:
        if not scalars.format.startswith("<"):
            raise ValueError(f"scalars must pack little-endian ('<...'), got {scalars.format!r}")
        count, start = scalars.size // 4, num_planes * NUM_CARDS
        rows = _MASK_HALVES + num_planes
        head = _MASK_HALVES * NUM_CARDS
        # Native mode packs the same float32 bytes and aligns the words to 8 bytes, which may
        # pad 4 bytes after the scalars: the words lie at the end of the packed bytes.
        fields, word = ("@" + scalars.format[1:], "N") if _NATIVE_WORDS else (scalars.format, "Q")
        # ``write`` packs zero bytes in place of the action mask's words.
        planes_format = struct.Struct(f"{fields}{8 * _MASK_HALVES}x{num_planes}{word}")
        all_format = struct.Struct(f"{fields}{rows}{word}")
        offset = 4 * (head + start)
        buffer = np.zeros((offset + all_format.size) // 4, dtype=np.float32)
        action_mask = buffer[:head]
        vector = buffer[head : head + start + count]
        words = buffer.view(np.uint8)[offset + all_format.size - 8 * rows :]
        index = words.reshape(rows, 8)[:, :_CARD_BYTES]
        planes = buffer[: head + start].reshape(rows, _CARD_BYTES, 8)
        pack_planes, pack_all = planes_format.pack_into, all_format.pack_into
        # The same bytes, as a buffer struct packs into (numpy's stubs know ndarray is one
        # only from Python 3.12).
        raw = memoryview(buffer).cast("B")  # type: ignore[arg-type]
        # Byte values index the 256 rows, so "wrap" never wraps; it costs less than "clip".
        take, copy = _BYTE_BITS.take, vector.copy
        cast, int8, cards = action_mask.astype, np.int8, ALL_CARDS_MASK
        self._vector = vector

        def write(masks: Sequence[int], values: Sequence[float]) -> np.ndarray:
            pack_planes(raw, offset, *values, *masks)
            take(index, 0, planes, "wrap")
            return copy()

        def observe(
            masks: Sequence[int], values: Sequence[float], legal: int
        ) -> tuple[np.ndarray, np.ndarray]:
            pack_all(raw, offset, *values, legal & cards, legal >> NUM_CARDS, *masks)
            take(index, 0, planes, "wrap")
            return copy(), cast(int8)

        #: ``write(planes, values)``: the call itself, without ``__call__``'s lookup.
        self.write = write
        #: ``observe(planes, values, legal)``: the vector and the int8 mask of the 80
        #: legal-action bits ``legal`` (``bits_to_mask``), both new arrays.
        self.observe = observe

    def __call__(self, planes: Sequence[int], values: Sequence[float]) -> np.ndarray:
        return self.write(planes, values)


def planes_to_masks(observations: np.ndarray, num_planes: int = NUM_PLANES) -> np.ndarray:
    """The first ``num_planes`` card planes of one observation or a batch, as uint64 bit masks
    of shape ``(..., num_planes)``: the inverse of ``masks_to_planes``."""
    planes = np.asarray(observations)[..., : num_planes * NUM_CARDS]
    bits = planes.reshape(*planes.shape[:-1], num_planes, NUM_CARDS) > 0.5
    return (bits.astype(np.uint64) * _BIT_WEIGHTS).sum(axis=-1, dtype=np.uint64)


_SCALARS = scalar_format(OBS_SIZE - NUM_PLANES * NUM_CARDS)


def plane(obs: np.ndarray, name: str) -> np.ndarray:
    """The named feature of an observation (a view; works on batches too)."""
    return obs[..., OBS_SLICES[name]]


#: A deal's state as ``Deal.view()`` gives it: hands, table, piles, played, stock size, scope,
#: last capturer, dealer, live cards (the per-seat entries indexable by seat).
DealView = tuple[
    Sequence[int], int, Sequence[int], Sequence[int], int, Sequence[int], int | None, int, int
]
#: The ``phase`` feature, by whether a capture is being chosen: [play, pick].
PHASE_VALUES = ((1.0, 0.0), (0.0, 1.0))
_LAST = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))  # [me, the opponent, nobody]
_PLAY = PHASE_VALUES[0]


def live_cards(table: int, piles: Iterable[int]) -> int:
    """The cards in hands and stock (``Deal.view``'s ``live``) from a position's masks: those
    neither on the table nor captured."""
    seen = table
    for pile in piles:
        seen |= pile
    return ALL_CARDS_MASK ^ seen


def deal_block(
    match_score: Sequence[int], target: int, dealer: int, player: int
) -> tuple[float, ...]:
    """The ``match_score``, ``target`` and ``dealer`` features of ``player``, together in the
    vector: they change only between deals, so the environment works them out once a deal."""
    return (
        min(match_score[player] / target, MATCH_SCORE_CAP),
        min(match_score[1 - player] / target, MATCH_SCORE_CAP),
        target / TARGET_SCALE,
        float(dealer == player),
    )


def seat_blocks(
    deal_block: Callable[[Any, int, int, int], Any], players: int
) -> Callable[[tuple[int, ...], int, int], tuple[Any, ...]]:
    """A layout's ``deal_blocks(match_score, target, dealer)``: every seat's ``deal_block`` in
    one call, memoised (``match_score`` a tuple), since a new deal repeats a few scores."""
    seats = range(players)

    @lru_cache(maxsize=4096)
    def deal_blocks(match_score: tuple[int, ...], target: int, dealer: int) -> tuple[Any, ...]:
        return tuple(deal_block(match_score, target, dealer, seat) for seat in seats)

    return deal_blocks


#: Both seats' ``deal_block``, for the environment's new deals.
deal_blocks = seat_blocks(deal_block, 2)


def writer() -> ObservationWriter:
    """A writer of this layout's vectors, for the environment's hot path."""
    return ObservationWriter(NUM_PLANES, _SCALARS)


def split_pending(hand: int, pending_card: int | None) -> tuple[int, int, tuple[float, float]]:
    """The hand less the card being played, that card's plane and the phase's values: a card
    chosen but not yet resolved (the capture to pick) is observed apart from the hand."""
    if pending_card is None:
        return hand, 0, PHASE_VALUES[0]
    pending = 1 << pending_card
    return hand & ~pending, pending, PHASE_VALUES[1]


def view_features(
    view: DealView,
    player: int,
    pending_card: int | None,
    picked: int,
    block: tuple[float, ...],
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The card planes (bit masks) and scalar values of ``player``'s observation, from a deal's
    ``view`` and the player's ``deal_block``: what ``encode`` and the environment's hot path
    both run (the environment writing them with the action mask: ``ObservationWriter``)."""
    hands, table, piles, played, stock_size, scope, last_capturer, _dealer, live = view
    opp = 1 - player
    hand = hands[player]
    mine, theirs = piles[player], piles[opp]
    unseen = live ^ hand
    if pending_card is None:
        pending, phase = 0, _PLAY
    else:
        hand, pending, phase = split_pending(hand, pending_card)
    return (hand, table, mine, theirs, played[player], played[opp], unseen, pending, picked), (
        *phase,
        stock_size / STOCK_SCALE,
        hands[opp].bit_count() / HAND_SCALE,
        scope[player] / SCOPE_SCALE,
        scope[opp] / SCOPE_SCALE,
        *block,
        *_LAST[2 if last_capturer is None else last_capturer != player],
    )


def encode(
    hands: tuple[int, int],
    table: int,
    piles: tuple[int, int],
    played: tuple[int, int],
    stock_size: int,
    scope: tuple[int, int],
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
    """The observation of ``player`` from the masks of a deal and the match around it."""
    live = live_cards(table, piles)
    view = (hands, table, piles, played, stock_size, scope, last_capturer, dealer, live)
    block = deal_block(match_score, target, dealer, player)
    planes, values = view_features(view, player, pending_card, picked, block)
    return write_observation(planes, NUM_PLANES, _SCALARS, values, out)


def decode(observation: np.ndarray) -> InfoState:
    """What the observer knows, read back from one observation vector."""
    obs = np.asarray(observation, dtype=np.float32)
    masks = [int(m) for m in planes_to_masks(obs)]
    pending_mask = masks[_PLANE_INDEX["pending"]]
    target = round(float(obs[OBS_SLICES["target"]][0]) * TARGET_SCALE)
    scope = obs[OBS_SLICES["scope"]]
    match = obs[OBS_SLICES["match_score"]]
    last = int(np.argmax(obs[OBS_SLICES["last_capturer"]]))
    return InfoState(
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


register_decoder(OBS_SIZE, decode)
