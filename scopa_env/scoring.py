"""Scoring a finished deal (RULES.md section 5) from the two capture piles."""

from __future__ import annotations

from dataclasses import asdict, dataclass

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
    """One player's points for a deal, by category."""

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
        return {**asdict(self), "total": self.total}


def primiera_total(pile: int) -> int | None:
    """The primiera sum of a capture pile, or ``None`` if it lacks a suit."""
    total = 0
    for suit in range(4):
        best = BEST_PRIMIERA[pile >> (10 * suit) & 0x3FF]
        if best == 0:
            return None
        total += best
    return total


def _to_leader(a: int | None, b: int | None) -> tuple[int, int]:
    """One point to whoever is strictly ahead; ``None`` never wins."""
    if a is not None and (b is None or a > b):
        return 1, 0
    if b is not None and (a is None or b > a):
        return 0, 1
    return 0, 0


def score_piles(
    piles: tuple[int, int], scope: tuple[int, int], rules: Rules
) -> tuple[ScoreBreakdown, ScoreBreakdown]:
    """Both players' points from their capture piles (bit masks) and scope counts."""
    a, b = piles
    cards = _to_leader(a.bit_count(), b.bit_count())
    coins = _to_leader((a & COINS_MASK).bit_count(), (b & COINS_MASK).bit_count())
    primiera = _to_leader(primiera_total(a), primiera_total(b))
    breakdowns = []
    for player, pile in enumerate(piles):
        breakdowns.append(
            ScoreBreakdown(
                cards=cards[player],
                coins=coins[player],
                settebello=pile >> SETTEBELLO & 1,
                primiera=primiera[player],
                scope=scope[player],
                re_bello=pile >> RE_BELLO & 1 if rules.re_bello else 0,
                napola=NAPOLA_POINTS[pile & COINS_MASK] if rules.napola else 0,
            )
        )
    return breakdowns[0], breakdowns[1]
