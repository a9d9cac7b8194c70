"""The memoised capture table against a brute force over every subset of the table.

``capture_table`` keys its memo on only the table cards that can change the answer and finds
sum captures by a subset search; here each answer is worked out again from RULES.md sections
3 and 7 by trying every subset of the table cards, for every rules option that changes captures.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from scopa_env.captures import capture_table
from scopa_env.cards import CAPTURE_VALUE, cards_of
from scopa_env.rules import Rules

VALUE = [int(v) for v in CAPTURE_VALUE]
OPTIONS = [
    Rules(),
    Rules(fewest_cards_capture=True),
    Rules(ace_takes_all=True),
    Rules(ace_takes_all=True, fewest_cards_capture=True),
    Rules(capture_sum=15),
    Rules(capture_sum=15, fewest_cards_capture=True),
]


def brute_force(table: int, value: int, rules: Rules) -> tuple[int, ...]:
    """Every legal capture of a card of ``value`` played to ``table``, by trying all subsets."""
    cards = cards_of(table)
    subsets = [
        sum(1 << c for c in subset)
        for size in range(1, len(cards) + 1)
        for subset in combinations(cards, size)
    ]

    def total(mask: int) -> int:
        return sum(VALUE[c] for c in cards_of(mask))

    if rules.capture_sum is not None:  # scopa a quindici: the played card and the taken make 15
        sets = [s for s in subsets if total(s) + value == rules.capture_sum]
    elif rules.ace_takes_all and value == 1:
        aces = [1 << c for c in cards if VALUE[c] == 1]
        return tuple(sorted(aces)) if aces else ((table,) if table else ())
    else:
        equal = [1 << c for c in cards if VALUE[c] == value]
        if equal:  # a card of equal value must be taken, alone
            return tuple(sorted(equal))
        sets = [s for s in subsets if s.bit_count() >= 2 and total(s) == value]
    if rules.fewest_cards_capture and sets:
        fewest = min(s.bit_count() for s in sets)
        sets = [s for s in sets if s.bit_count() == fewest]
    return tuple(sorted(sets))


@pytest.mark.parametrize("rules", OPTIONS, ids=repr)
def test_capture_table_equals_brute_force(rules: Rules) -> None:
    captures = capture_table(rules)
    rng = np.random.default_rng(11)
    for _ in range(300):
        size = int(rng.integers(0, 9))
        table = sum(1 << int(c) for c in rng.choice(40, size=size, replace=False))
        for value in range(1, 11):
            assert captures(table, value) == brute_force(table, value, rules), (table, value)
            # Asked again (now from the memo) the answer is the same.
            assert captures(table, value) == brute_force(table, value, rules)


def test_positions_sharing_a_memo_entry_keep_their_own_answer() -> None:
    """Tables that differ only in cards that cannot take part share an entry, correctly."""
    captures = capture_table(Rules())
    # 3D on the table with two kings, or with a queen: playing a 3 takes 3D either way.
    three, kings, queen = 1 << 2, (1 << 9) | (1 << 19), 1 << 8
    assert captures(three | kings, 3) == captures(three | queen, 3) == (three,)
    # No 5 on the table: 2D + 3C sum to 5 whatever else lies there.
    two, three_cups = 1 << 1, 1 << 12
    assert captures(two | three_cups | kings, 5) == (two | three_cups,)
    assert captures(two | three_cups | queen, 5) == (two | three_cups,)
    # With a 5 there, the 5 alone is the capture, not the sum.
    five = 1 << 4
    assert captures(two | three_cups | five, 5) == (five,)
