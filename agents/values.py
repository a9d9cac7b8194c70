"""What taking a card is worth under a rule set: the one valuation every rule-based player uses.

Values are integers in hundredths of a point. The majority categories (cards, coins, primiera)
get fixed per-card weights, a card's share of a point that goes to whoever has more. The rest is
derived from the scoring rules (``scopa_env.scoring``) for the rules in play:

- sure points: what a card scores for whoever takes it (the settebello; the re bello when
  ``rules.re_bello``), read from the score of a pile holding that card alone;
- napola (``rules.napola``): the expected napola points, mine minus the opponent's, with every
  coin in neither pile going to either player with even odds (``napola_swing``, from
  ``NAPOLA_POINTS``). A coin's value is how much taking it moves that expectation: about a point
  for each of the ace, two and three of coins at the start of a deal, a quarter for the four,
  nothing once the sequence is split between the piles, two points for the last card of a
  sequence already two-thirds mine.

``CardValues.base`` holds the fixed part and ``CardValues.napola_values`` the coins' napola
values for given piles: the greedy player (and the search player's rollouts) adds the two.
``CardValues.in_position`` is the heuristic player's: the majority categories a pile has already
won drop out too. ``CardValues.per_card`` is ``in_position`` at the start of a deal (empty
piles). ``CardValues.napola_correction`` values several coins taken at once, which is not the
sum of their values.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from scopa_env.cards import COINS_MASK, NUM_CARDS
from scopa_env.rules import Rules
from scopa_env.scoring import NAPOLA_POINTS, score_piles

#: Hundredths of a point: the unit of every value here.
POINT = 100
#: The categories that a single card scores for whoever holds it.
_SURE_CATEGORIES = ("settebello", "re_bello")
#: A pile that has won a majority category: 21 of 40 cards, 6 of 10 coins.
_CARDS_DECIDED, _COINS_DECIDED = 21, 6


def sure_points(rules: Rules) -> tuple[int, ...]:
    """Per card id, the points it scores for its holder whatever else happens (RULES.md 5)."""
    points = []
    for card in range(NUM_CARDS):
        breakdown = score_piles((1 << card, 0), (0, 0), rules)[0].to_dict()
        points.append(sum(breakdown[name] for name in _SURE_CATEGORIES))
    return tuple(points)


def _expected_napola(p: list[float]) -> float:
    """Expected napola points of a player who holds coin rank ``r`` with probability ``p[r]``.

    Napola depends only on the unbroken run of coins from the ace, so its expectation is the sum
    over run lengths of the chance of exactly that run times the points of that run.
    """
    expected, at_least = 0.0, 1.0
    for length in range(11):
        exactly = at_least * (1.0 - p[length]) if length < 10 else at_least
        expected += exactly * NAPOLA_POINTS[(1 << length) - 1]
        if length < 10:
            at_least *= p[length]
    return expected


@lru_cache(maxsize=1 << 16)
def napola_swing(mine: int, theirs: int) -> float:
    """Expected napola points, mine minus the opponent's, from the coins in each pile.

    ``mine`` and ``theirs`` are 10-bit masks of coin ranks (a pile's ``& COINS_MASK``); every
    other coin goes to either player with probability one half.
    """
    mine_p = [1.0 if mine >> r & 1 else 0.0 if theirs >> r & 1 else 0.5 for r in range(10)]
    theirs_p = [1.0 if theirs >> r & 1 else 0.0 if mine >> r & 1 else 0.5 for r in range(10)]
    return _expected_napola(mine_p) - _expected_napola(theirs_p)


def napola_gain(mine: int, theirs: int, taken: int) -> int:
    """What taking the cards of ``taken`` (a card mask) adds to my napola swing, in hundredths.

    ``mine`` and ``theirs`` are the two capture piles (card masks); taking coins moves the
    expectation of ``napola_swing`` up. The opponent's gain is ``napola_gain(theirs, mine, ...)``.
    """
    coins = taken & COINS_MASK & ~(mine | theirs)
    if not coins:
        return 0
    mine, theirs = mine & COINS_MASK, theirs & COINS_MASK
    return round(POINT * (napola_swing(mine | coins, theirs) - napola_swing(mine, theirs)))


@dataclass(frozen=True)
class CardValues:
    """Per-card values for a rule set, in hundredths of a point.

    The weights are a card's share of each majority category: ``card`` (most cards, every
    card), ``coin`` (most coins) and ``primiera`` by rank (sevens, sixes, aces, fives). ``point``
    is the value of a point a card scores outright (settebello, re bello) or in expectation
    (napola); ``sweep`` is a scopa; ``sweep_risk`` the cost of leaving the opponent a table it
    can sweep with one card.
    """

    card: int = 8
    coin: int = 14
    primiera: tuple[int, ...] = (8, 0, 0, 0, 3, 12, 30, 0, 0, 0)  # by rank A..K
    point: int = POINT
    sweep: int = 100
    sweep_risk: int = 50

    def per_card(self, rules: Rules) -> list[int]:
        """The value of each card id under ``rules`` at the start of a deal (empty piles)."""
        return self.in_position(rules, 0, 0)

    def in_position(
        self, rules: Rules, mine: int, theirs: int, rivals: tuple[int, ...] | None = None
    ) -> list[int]:
        """The value of each card id for me, given both capture piles (card masks).

        A majority category that a pile has already won (21 cards, 6 coins) is worth nothing
        more; napola values follow from the coins in the piles. With three sides ``theirs`` is
        the other sides' captures together and ``rivals`` each of them apart: a category is won
        by one side's pile, never by two rivals' together.
        """
        values = self.base(rules, mine, theirs, rivals)
        for rank, value in enumerate(self.napola_values(rules, mine, theirs)):
            values[rank] += value
        return values

    def base(
        self, rules: Rules, mine: int = 0, theirs: int = 0, rivals: tuple[int, ...] | None = None
    ) -> list[int]:
        """``in_position`` without napola: majority categories and sure points."""
        piles = (mine, *((theirs,) if rivals is None else rivals))
        cards_open = max(p.bit_count() for p in piles) < _CARDS_DECIDED
        coins = max((p & COINS_MASK).bit_count() for p in piles)
        coins_open = coins < _COINS_DECIDED
        sure = _sure_points(rules)
        values = []
        for card in range(NUM_CARDS):
            value = self.primiera[card % 10] + self.point * sure[card]
            if cards_open:
                value += self.card
            if card < 10 and coins_open:
                value += self.coin
            values.append(value)
        return values

    def napola_values(self, rules: Rules, mine: int, theirs: int) -> tuple[int, ...]:
        """Per coin rank A..K, its napola value for me given both piles (zeros without napola)."""
        if not rules.napola:
            return (0,) * 10
        values = _napola_values(mine & COINS_MASK, theirs & COINS_MASK)
        return values if self.point == POINT else tuple(v * self.point // POINT for v in values)

    def napola_correction(self, rules: Rules, mine: int, theirs: int, taken: int) -> int:
        """What valuing ``taken`` card by card (``in_position``) misses of its napola value.

        Taking several coins at once can make or break a sequence that no single coin does,
        so a capture is worth the sum of its cards' values plus this.
        """
        coins = taken & COINS_MASK & ~(mine | theirs)
        if not rules.napola or not coins & (coins - 1):
            return 0
        singles = sum(napola_gain(mine, theirs, 1 << c) for c in range(10) if coins >> c & 1)
        return (napola_gain(mine, theirs, coins) - singles) * self.point // POINT


@lru_cache(maxsize=1 << 16)
def _napola_values(mine: int, theirs: int) -> tuple[int, ...]:
    return tuple(napola_gain(mine, theirs, 1 << rank) for rank in range(10))


@lru_cache(maxsize=64)
def _sure_points(rules: Rules) -> tuple[int, ...]:
    return sure_points(rules)
