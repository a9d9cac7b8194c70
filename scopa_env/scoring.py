"""Scoring a finished deal (RULES.md sections 5 and 8) from the capture piles of the sides.

One implementation for every table: each category (cards, coins, primiera) gives its point to
the one side strictly ahead of every other, and a tie for the lead gives it to nobody; a side
missing a suit never wins primiera. With two sides this is "strictly ahead of the opponent".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from scopa_env.cards import COINS_MASK, PRIMIERA_VALUE, RE_BELLO, SETTEBELLO
from scopa_env.rules import Rules


def _best_primiera(suit_bits: int) -> int:
    values = [int(PRIMIERA_VALUE[rank]) for rank in range(10) if suit_bits >> rank & 1]
    return max(values, default=0)


def _napola_points(coin_bits: int) -> int:
    run = 0
    while run < 10 and coin_bits >> run & 1:
        run += 1
    return run if run >= 3 else 0


#: Best primiera value among the ranks held in one suit, indexed by the suit's 10-bit mask.
BEST_PRIMIERA = tuple(_best_primiera(bits) for bits in range(1 << 10))
#: Napola points for the coins held, indexed by the 10-bit mask of coin ranks.
NAPOLA_POINTS = tuple(_napola_points(bits) for bits in range(1 << 10))


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """One side's points for a deal, by category."""

    cards: int = 0
    coins: int = 0
    settebello: int = 0
    primiera: int = 0
    scope: int = 0
    re_bello: int = 0
    napola: int = 0

    @property
    def total(self) -> int:
        return (
            self.cards
            + self.coins
            + self.settebello
            + self.primiera
            + self.scope
            + self.re_bello
            + self.napola
        )

    def to_dict(self) -> dict[str, int]:
        points = {name: getattr(self, name) for name in _CATEGORIES}
        points["total"] = self.total
        return points


#: The categories of a ``ScoreBreakdown``, in order (``to_dict`` without ``asdict``'s copying).
_CATEGORIES = tuple(f.name for f in fields(ScoreBreakdown))


def primiera_total(pile: int) -> int | None:
    """The primiera sum of a capture pile, or ``None`` if it lacks a suit."""
    total = 0
    for suit in range(4):
        best = BEST_PRIMIERA[pile >> (10 * suit) & 0x3FF]
        if best == 0:
            return None
        total += best
    return total


def _to_leader(values: Sequence[int | None]) -> list[int]:
    """One point to the side strictly ahead of every other; ``None`` never wins."""
    points = [0] * len(values)
    best = max((v for v in values if v is not None), default=None)
    if best is not None and sum(v == best for v in values) == 1:
        points[values.index(best)] = 1
    return points


def score_piles(
    piles: Sequence[int], scope: Sequence[int], rules: Rules
) -> tuple[ScoreBreakdown, ...]:
    """Every side's points from its capture pile (a bit mask) and scope count, in side order."""
    if len(piles) != len(scope) or len(piles) < 2:
        raise ValueError(
            f"score_piles needs one pile and one scope count per side (at least two sides), "
            f"got {len(piles)} piles and {len(scope)} scope counts"
        )
    cards = _to_leader([pile.bit_count() for pile in piles])
    coins = _to_leader([(pile & COINS_MASK).bit_count() for pile in piles])
    primiera = _to_leader([primiera_total(pile) for pile in piles])
    return tuple(
        ScoreBreakdown(
            cards=cards[side],
            coins=coins[side],
            settebello=pile >> SETTEBELLO & 1,
            primiera=primiera[side],
            scope=scope[side],
            re_bello=pile >> RE_BELLO & 1 if rules.re_bello else 0,
            napola=NAPOLA_POINTS[pile & COINS_MASK] if rules.napola else 0,
        )
        for side, pile in enumerate(piles)
    )
