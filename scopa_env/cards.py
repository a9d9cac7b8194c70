"""The 40-card Italian pack and the one card numbering used everywhere.

A card id is ``suit * 10 + (value - 1)`` with suits in the order coins (D), cups (C),
swords (S), clubs (B) and values A=1, 2..7, J=8, Q=9, K=10. So ``AD`` is 0, the settebello
``7D`` is 6, the re bello ``KD`` is 9 and ``KB`` is 39. Names are rank then suit: ``"7D"``.

The lookup arrays below are indexed by card id; the ``*_MASK`` integers are bit masks over
card ids (bit ``i`` set means card ``i``), the compact form the engine keeps its state in.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

NUM_CARDS = 40
SUITS = "DCSB"
RANKS = "A234567JQK"

SETTEBELLO = 6
RE_BELLO = 9

#: Capture value of each card: A=1, 2..7, J=8, Q=9, K=10.
CAPTURE_VALUE = np.tile(np.arange(1, 11, dtype=np.int8), 4)
#: Suit index of each card: 0=D, 1=C, 2=S, 3=B.
SUIT = np.repeat(np.arange(4, dtype=np.int8), 10)
#: Primiera value of each card: 7=21, 6=18, A=16, 5=15, 4=14, 3=13, 2=12, J=Q=K=10.
PRIMIERA_VALUE = np.tile(np.array([16, 12, 13, 14, 15, 18, 21, 10, 10, 10], dtype=np.int8), 4)

ALL_CARDS_MASK = (1 << NUM_CARDS) - 1
COINS_MASK = (1 << 10) - 1
KINGS_MASK = sum(1 << (suit * 10 + 9) for suit in range(4))
ACES_MASK = sum(1 << (suit * 10) for suit in range(4))

_NAME_TO_ID = {
    rank + suit: s * 10 + r for s, suit in enumerate(SUITS) for r, rank in enumerate(RANKS)
}


def card_name(card: int) -> str:
    """The name of a card id, e.g. ``card_name(6) == "7D"``."""
    if not isinstance(card, int | np.integer) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"not a card id: {card!r} (ids are integers 0..39)")
    return RANKS[card % 10] + SUITS[card // 10]


def parse_card(name: str) -> int:
    """The id of a card name such as ``"7D"`` or ``"qs"`` (case-insensitive)."""
    if not isinstance(name, str):
        raise ValueError(f"not a card name: {name!r} (expected a string such as '7D')")
    card = _NAME_TO_ID.get(name.strip().upper())
    if card is None:
        raise ValueError(
            f"not a card name: {name!r} (rank A,2-7,J,Q,K then suit D,C,S,B, e.g. '7D', 'KB')"
        )
    return card


def parse_cards(names: str | Iterable[str]) -> tuple[int, ...]:
    """Ids of several card names, given as one space-separated string or an iterable."""
    if isinstance(names, str):
        names = names.split()
    return tuple(parse_card(name) for name in names)


def mask_of(cards: Iterable[int]) -> int:
    """The bit mask holding the given card ids."""
    mask = 0
    for card in cards:
        mask |= 1 << int(card)
    return mask


def _chunk_cards(offset: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(offset + i for i in range(10) if bits >> i & 1) for bits in range(1 << 10))


_SUIT_CARDS = tuple(_chunk_cards(10 * suit) for suit in range(4))


def cards_of(mask: int) -> tuple[int, ...]:
    """The card ids held in a bit mask, in increasing order."""
    d, c, s, b = _SUIT_CARDS
    return d[mask & 1023] + c[mask >> 10 & 1023] + s[mask >> 20 & 1023] + b[mask >> 30 & 1023]
