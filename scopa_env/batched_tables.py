"""Precomputed tables for the batched engine (``scopa_env.batched``).

The batched engine keeps every card set as a 40-bit mask in a ``uint64``. Two bit orders are
used, and byte lookups convert between them:

==============  ===============================  ==============================================
Order           Bit of card ``c``                Why
==============  ===============================  ==============================================
card-id         ``c`` (``suit * 10 + value-1``)  observations, masks, actions, scoring
value-major     ``4 * (value-1) + suit``         the four cards of a value share one nibble, so
                                                 per-value counts are a nibble popcount
==============  ===============================  ==============================================

A *count word* packs ten 4-bit fields, field ``value-1`` holding how many cards of that value
(0..4). Capture *patterns* are count words too: a pattern is a multiset of values that makes a
legal sum capture, e.g. ``{3: 1, 4: 1}`` for a 7. With a guard bit ``8`` per field, one
subtraction compares all ten fields at once: field ``f`` of ``(a | NIB_HIGH) - b`` keeps its
guard bit exactly when ``a_f >= b_f`` (fields hold at most 4, so nothing borrows).

Pattern rows are indexed by the played card's value: row ``value-1`` lists, sorted by number of
cards, the multisets of two or more values summing to the value (classic rules) or of one or
more values summing to ``15 - value`` (``capture_sum=15``); each value at most 4 times.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, SUIT
from scopa_env.scoring import BEST_PRIMIERA, NAPOLA_POINTS

U64 = np.uint64
#: Sentinel card id meaning "no card" (a pending card when none is pending).
NO_CARD = NUM_CARDS
#: Sentinel player meaning "nobody" (the last capturer before any capture).
NOBODY = 2

#: Bit of each card id (index 40, ``NO_CARD``, is 0).
BIT = np.array([1 << c for c in range(NUM_CARDS)] + [0], dtype=U64)
#: Capture value of each card id (index 40 is 0).
VALUE = np.array([*CAPTURE_VALUE.tolist(), 0], dtype=np.int64)
#: Whether a card's value can make a classic sum capture (2..10; index 40 is False).
SUMMABLE = VALUE >= 2
#: Value-major bit of each card id (index 40 is 0).
VM_BIT = np.array(
    [1 << (4 * (int(CAPTURE_VALUE[c]) - 1) + int(SUIT[c])) for c in range(NUM_CARDS)] + [0],
    dtype=U64,
)
#: One in every count field / the guard bit of every count field.
NIB_ONES = U64(sum(1 << (4 * f) for f in range(10)))
NIB_HIGH = U64(int(NIB_ONES) << 3)
#: Value-major mask of the four cards of each value (index = value; index 0 is 0).
VALUE_NIBBLE = np.array([0] + [0xF << (4 * (v - 1)) for v in range(1, 11)], dtype=U64)
#: Value-major mask of the four cards of each card id's value (index 40 is 0).
CARD_NIBBLE = np.array([*VALUE_NIBBLE[VALUE[:NUM_CARDS]].tolist(), 0], dtype=U64)


def _byte_lut(bit_of: list[int]) -> np.ndarray:
    """``lut[j, b]``: the mask, in the target order, of the source bits ``8j..8j+7`` set in b."""
    lut = np.zeros((5, 256), dtype=U64)
    for j in range(5):
        for b in range(256):
            lut[j, b] = sum(1 << bit_of[8 * j + i] for i in range(8) if b >> i & 1)
    return lut


_VM_OF = [int(VM_BIT[c]).bit_length() - 1 for c in range(NUM_CARDS)]
_CARD_OF = [_VM_OF.index(i) for i in range(NUM_CARDS)]
#: ``LUT[j][b]``: card-id mask byte ``j`` -> value-major mask, and back.
CARD_TO_VM = _byte_lut(_VM_OF)
VM_TO_CARD = _byte_lut(_CARD_OF)


def convert(masks: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """Reorder the bits of ``uint64`` masks with ``CARD_TO_VM`` or ``VM_TO_CARD``."""
    masks = np.ascontiguousarray(masks, dtype=U64)
    octets = masks.view(np.uint8).reshape(-1, 8)
    result = lut[0].take(octets[:, 0])
    for j in range(1, 5):
        result |= lut[j].take(octets[:, j])
    return result


def counts_of(vm: np.ndarray) -> np.ndarray:
    """Count words of value-major masks (a SWAR popcount within each nibble)."""
    x = vm - ((vm >> U64(1)) & U64(0x5555555555))
    return (x & U64(0x3333333333)) + ((x >> U64(2)) & U64(0x3333333333))


def spread(fields: np.ndarray) -> np.ndarray:
    """Value-major mask of the values whose count field has its guard bit set in ``fields``."""
    return ((fields >> U64(3)) & NIB_ONES) * U64(15)


class PatternRow(NamedTuple):
    """The sum-capture patterns of one played value, sorted by number of cards.

    ``need``: count word of each pattern; ``guard``: the guard bit of each value it uses;
    ``low``: the three low bits of each value it uses; ``beyond``: ``(need | NIB_HIGH) -
    NIB_ONES`` (``(beyond - picks) & NIB_HIGH`` marks the values still needed beyond the picks);
    ``size``: cards in it.
    """

    need: np.ndarray  # (K,) uint64
    guard: np.ndarray  # (K,) uint64
    low: np.ndarray  # (K,) uint64
    beyond: np.ndarray  # (K,) uint64
    size: np.ndarray  # (K,) int8


def _multisets(total: int, min_parts: int) -> list[tuple[int, ...]]:
    """Multisets of values 1..10, each at most 4 times, summing to ``total``."""
    found: list[tuple[int, ...]] = []

    def extend(start: int, remaining: int, parts: list[int]) -> None:
        if remaining == 0:
            if len(parts) >= min_parts:
                found.append(tuple(parts))
            return
        for value in range(start, min(remaining, 10) + 1):
            if parts.count(value) < 4:
                extend(value, remaining - value, [*parts, value])

    extend(1, total, [])
    return sorted(found, key=len)


def _row(patterns: list[tuple[int, ...]]) -> PatternRow:
    need = np.array([sum(1 << (4 * (v - 1)) for v in parts) for parts in patterns], dtype=U64)
    used = np.array([sum(1 << (4 * (v - 1)) for v in set(parts)) for parts in patterns], dtype=U64)
    row = PatternRow(
        need=need,
        guard=used << U64(3),
        low=used * U64(7),
        beyond=(need | NIB_HIGH) - NIB_ONES,
        size=np.array([len(parts) for parts in patterns], dtype=np.int8),
    )
    for array in row:
        array.flags.writeable = False
    return row


@lru_cache(maxsize=2)
def pattern_rows(capture_sum: int | None) -> tuple[PatternRow, ...]:
    """Row ``value - 1``: the sum-capture patterns of a played ``value`` (classic or quindici)."""
    return tuple(
        _row(_multisets(value, 2) if capture_sum is None else _multisets(capture_sum - value, 1))
        for value in range(1, 11)
    )


#: Best primiera value of a suit by its 10-bit mask, and napola points by the coins' mask.
BEST_PRIMIERA_LUT = np.array(BEST_PRIMIERA, dtype=np.int16)
NAPOLA_LUT = np.array(NAPOLA_POINTS, dtype=np.int16)
