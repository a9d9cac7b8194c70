"""Property tests for the engine (hypothesis), against an independent reference of RULES.md.

The reference below (``reference_captures``, ``RefDeal``, ``reference_score``) is written from
the text of RULES.md sections 2-5 and 7, by brute force, and shares no code with the engine
beyond the card numbering (``id = suit * 10 + value - 1``). ``RefTableDeal`` and
``reference_table_score`` extend it to every table of section 8 (N seats, pooled sides, the
strict single leader of three or more sides); the last tests run over every table.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scopa_env.engine import Deal, IllegalMoveError, Match, Move
from scopa_env.rules import Rules
from scopa_env.tables import TABLES, Table

ALL_CARDS = frozenset(range(40))
PRESETS = (
    "scopa",
    "scopa_d_assi",
    "asso_pigliatutto",
    "scopa_a_quindici",
    "napola",
    "re_bello",
)
CATEGORY_FIELDS = ("cards", "coins", "settebello", "primiera")
FIELDS = ("cards", "coins", "settebello", "primiera", "scope", "re_bello", "napola", "total")
PRIMIERA = {1: 16, 2: 12, 3: 13, 4: 14, 5: 15, 6: 18, 7: 21, 8: 10, 9: 10, 10: 10}
SETTEBELLO = 6  # 7D
RE_BELLO = 9  # KD

# SCOPA_TEST_SCALE=20 multiplies every example count, for a deeper one-off run.
SCALE = float(os.environ.get("SCOPA_TEST_SCALE", "1"))


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow],
}


def value(card: int) -> int:
    """Capture value (RULES.md 1): A=1 .. 7=7, J=8, Q=9, K=10."""
    return card % 10 + 1


def suit_of(card: int) -> int:
    return card // 10


# --------------------------------------------------------------------------------------------
# reference (RULES.md 3, 4, 5, 7), brute force
# --------------------------------------------------------------------------------------------


def subsets_summing(table, target: int, min_size: int) -> list[frozenset[int]]:
    """Every subset of ``table`` with at least ``min_size`` cards whose values sum to target."""
    table = sorted(table)
    smallest = sorted(value(c) for c in table)
    out = []
    for k in range(min_size, len(table) + 1):
        if sum(smallest[:k]) > target:  # every k-subset sums to more: so does every larger one
            break
        for combo in itertools.combinations(table, k):
            if sum(value(c) for c in combo) == target:
                out.append(frozenset(combo))
    return out


def reference_captures(card: int, table, rules: Rules) -> set[frozenset[int]]:
    """The legal capture sets for ``card`` on ``table``; {frozenset()} means it is trailed."""
    table = frozenset(table)
    v = value(card)
    if rules.capture_sum is not None:
        # quindici: one or more table cards that with the played card make capture_sum;
        # no equal-value capture, no single-card priority
        options = subsets_summing(table, rules.capture_sum - v, 1)
    elif rules.ace_takes_all and v == 1:
        aces = [t for t in table if value(t) == 1]
        if aces:  # single-card priority: exactly one table ace
            options = [frozenset([a]) for a in aces]
        elif table:  # takes every card on the table
            options = [table]
        else:  # empty table: trailed
            options = []
    else:
        equal = [t for t in table if value(t) == v]
        # single-card priority, else two or more cards summing to the value
        options = [frozenset([t]) for t in equal] if equal else subsets_summing(table, v, 2)
    if options and rules.fewest_cards_capture:
        n = min(len(o) for o in options)
        options = [o for o in options if len(o) == n]
    if not options:
        return {frozenset()}
    assert len(options) == len(set(options))
    return set(options)


@dataclasses.dataclass
class RefDeal:
    rules: Rules
    hands: list[set[int]]
    table: set[int]
    stock: list[int]  # dealing order: stock[0] is dealt first
    captures: list[set[int]]
    scope: list[int]
    current: int
    first: int
    last_capturer: int | None
    over: bool = False
    plays: int = 0

    @classmethod
    def from_deck(cls, deck, first: int, rules: Rules) -> RefDeal:
        hands: list[set[int]] = [set(), set()]
        hands[first] = set(deck[0:6:2])
        hands[1 - first] = set(deck[1:6:2])
        return cls(
            rules=rules,
            hands=hands,
            table=set(deck[6:10]),
            stock=list(deck[10:]),
            captures=[set(), set()],
            scope=[0, 0],
            current=first,
            first=first,
            last_capturer=None,
        )

    def legal(self) -> set[tuple[int, frozenset[int]]]:
        if self.over:
            return set()
        return {
            (c, cap)
            for c in self.hands[self.current]
            for cap in reference_captures(c, self.table, self.rules)
        }

    def play(self, card: int, cap: frozenset[int]) -> None:
        assert (card, cap) in self.legal()
        p = self.current
        self.hands[p].remove(card)
        self.plays += 1
        last_play = not self.hands[0] and not self.hands[1] and not self.stock
        if cap:
            self.table -= cap
            self.captures[p] |= cap | {card}
            self.last_capturer = p
            if not self.table:
                ace_sweep = (
                    self.rules.ace_takes_all
                    and value(card) == 1
                    and not any(value(c) == 1 for c in cap)
                )
                if (not last_play or self.rules.last_play_scopa) and (
                    not ace_sweep or self.rules.ace_sweep_scopa
                ):
                    self.scope[p] += 1
        else:
            self.table.add(card)
        self.current = 1 - p
        if not self.hands[0] and not self.hands[1]:
            if self.stock:
                nxt, self.stock = self.stock[:6], self.stock[6:]
                self.hands[self.first] = set(nxt[0::2])
                self.hands[1 - self.first] = set(nxt[1::2])
                self.current = self.first
            else:
                self.over = True
                if self.last_capturer is not None:
                    self.captures[self.last_capturer] |= self.table
                    self.table = set()


def reference_score(captures, scope, rules: Rules) -> list[dict[str, int]]:
    caps = [set(c) for c in captures]
    res = [dict.fromkeys(FIELDS, 0) for _ in range(2)]

    def award(field: str, a, b) -> None:
        if a > b:
            res[0][field] = 1
        elif b > a:
            res[1][field] = 1

    award("cards", len(caps[0]), len(caps[1]))
    award("coins", *(sum(1 for c in cs if suit_of(c) == 0) for cs in caps))
    for p in (0, 1):
        if SETTEBELLO in caps[p]:
            res[p]["settebello"] = 1
    best = [
        {
            s: max((PRIMIERA[value(c)] for c in cs if suit_of(c) == s), default=None)
            for s in range(4)
        }
        for cs in caps
    ]
    full = [all(b[s] is not None for s in range(4)) for b in best]
    if full[0] and full[1]:
        award("primiera", sum(best[0].values()), sum(best[1].values()))
    elif full[0]:
        res[0]["primiera"] = 1
    elif full[1]:
        res[1]["primiera"] = 1
    for p in (0, 1):
        res[p]["scope"] = scope[p]
        if rules.re_bello and RE_BELLO in caps[p]:
            res[p]["re_bello"] = 1
        if rules.napola:
            n = 0
            while n < 10 and n in caps[p]:  # coins A, 2, 3, ... are ids 0, 1, 2, ...
                n += 1
            res[p]["napola"] = n if n >= 3 else 0
        res[p]["total"] = sum(v for k, v in res[p].items() if k != "total")
    return res


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def make_rules(preset: str, fewest: bool, last_play: bool, napola: bool, re_bello: bool) -> Rules:
    base = Rules.preset(preset)
    return dataclasses.replace(
        base,
        fewest_cards_capture=base.fewest_cards_capture or fewest,
        last_play_scopa=base.last_play_scopa or last_play,
        napola=base.napola or napola,
        re_bello=base.re_bello or re_bello,
    )


rules_st = st.builds(
    make_rules,
    st.sampled_from(PRESETS),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
seeds = st.integers(0, 2**32 - 1)
policies = st.sampled_from(["uniform", "capture"])


def choose(moves, rng: np.random.Generator, policy: str):
    moves = sorted(moves, key=lambda m: (m.card, sorted(m.capture)))
    if policy == "capture":
        # prefer the biggest captures: more sweeps, including on the last plays
        n = max(len(m.capture) for m in moves)
        moves = [m for m in moves if len(m.capture) == n]
    return moves[int(rng.integers(len(moves)))]


def norm(d):
    return json.loads(json.dumps(d))


def state(deal: Deal) -> dict:
    return {
        "hands": tuple(frozenset(h) for h in deal.hands),
        "table": frozenset(deal.table),
        "stock": frozenset(deal.stock),
        "captures": tuple(frozenset(c) for c in deal.captures),
        "scope": tuple(int(s) for s in deal.scope),
        "current": deal.current_player if not deal.is_over else None,
        "last_capturer": deal.last_capturer,
        "over": bool(deal.is_over),
    }


def ref_state(ref: RefDeal) -> dict:
    return {
        "hands": tuple(frozenset(h) for h in ref.hands),
        "table": frozenset(ref.table),
        "stock": frozenset(ref.stock),
        "captures": tuple(frozenset(c) for c in ref.captures),
        "scope": tuple(ref.scope),
        "current": ref.current if not ref.over else None,
        "last_capturer": ref.last_capturer,
        "over": ref.over,
    }


def engine_moves(deal: Deal) -> set[tuple[int, frozenset[int]]]:
    moves = deal.legal_moves()
    pairs = [(int(m.card), frozenset(int(c) for c in m.capture)) for m in moves]
    assert len(pairs) == len(set(pairs)), "each legal move must appear once"
    for m in moves:
        assert isinstance(m.capture, frozenset)
    return set(pairs)


def check_invariants(deal: Deal) -> None:
    places = [*deal.hands, deal.table, deal.stock, *deal.captures]
    every = [int(c) for place in places for c in place]
    assert sorted(every) == list(range(40)), "the 40 cards must be conserved, each once"
    assert all(len(h) <= 3 for h in deal.hands)
    moves = deal.legal_moves()
    if deal.is_over:
        assert moves == []
        return
    assert moves, "legal_moves() is never empty before the end"
    hand = set(deal.hands[deal.current_player])
    table = set(deal.table)
    for m in moves:
        assert m.card in hand
        assert set(m.capture) <= table


def breakdown(b) -> dict[str, int]:
    return {f: int(getattr(b, f)) for f in FIELDS}


def check_score(deal: Deal) -> list[dict[str, int]]:
    result = deal.score()
    assert len(result) == 2
    got = [breakdown(b) for b in result]
    for f in CATEGORY_FIELDS:
        assert got[0][f] in (0, 1) and got[1][f] in (0, 1)
        assert got[0][f] + got[1][f] <= 1, f"{f} point given to both players"
    for p in (0, 1):
        assert got[p]["total"] == sum(got[p][f] for f in FIELDS if f != "total")
        assert got[p]["scope"] == deal.scope[p]
    if not deal.rules.napola:
        assert got[0]["napola"] == got[1]["napola"] == 0
    if not deal.rules.re_bello:
        assert got[0]["re_bello"] == got[1]["re_bello"] == 0
    assert got == reference_score(deal.captures, deal.scope, deal.rules)
    return got


def random_deck(seed: int) -> list[int]:
    return [int(c) for c in np.random.default_rng(seed).permutation(40)]


def random_position(seed: int, rules: Rules) -> tuple[Deal, RefDeal]:
    """A random, consistent mid-deal position and the matching reference."""
    rng = np.random.default_rng([seed, 7])
    cards = [int(c) for c in rng.permutation(40)]
    first = int(rng.integers(2))
    current = int(rng.integers(2))
    if current == first:
        n_first = int(rng.integers(1, 4))
        n_dealer = n_first
    else:
        n_first = int(rng.integers(0, 3))
        n_dealer = n_first + 1
    n_table = int(rng.integers(0, 13))
    n_stock = 6 * int(rng.integers(0, 4))
    hands: list[list[int]] = [[], []]
    hands[first] = [cards.pop() for _ in range(n_first)]
    hands[1 - first] = [cards.pop() for _ in range(n_dealer)]
    table = [cards.pop() for _ in range(n_table)]
    stock = [cards.pop() for _ in range(n_stock)]
    split = int(rng.integers(0, len(cards) + 1))
    captures = (cards[:split], cards[split:])
    last_capturer = int(rng.integers(2)) if captures[0] or captures[1] else None
    scope = (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
    deal = Deal.from_position(
        hands=(tuple(hands[0]), tuple(hands[1])),
        table=tuple(table),
        stock=tuple(stock),
        captures=(tuple(captures[0]), tuple(captures[1])),
        current_player=current,
        first_player=first,
        last_capturer=last_capturer,
        scope=scope,
        rules=rules,
    )
    ref = RefDeal(
        rules=rules,
        hands=[set(hands[0]), set(hands[1])],
        table=set(table),
        stock=list(stock),
        captures=[set(captures[0]), set(captures[1])],
        scope=list(scope),
        current=current,
        first=first,
        last_capturer=last_capturer,
    )
    return deal, ref


def run_against_reference(deal: Deal, ref: RefDeal, rng: np.random.Generator, policy: str) -> None:
    while True:
        assert state(deal) == ref_state(ref)
        check_invariants(deal)
        assert engine_moves(deal) == ref.legal()
        if ref.over:
            break
        m = choose(deal.legal_moves(), rng, policy)
        deal.play(m)
        ref.play(int(m.card), frozenset(m.capture))
    check_score(deal)


# --------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------


def test_reference_self_check():
    """The brute-force reference reproduces RULES.md section 9's capture cases."""
    r = Rules()
    f = frozenset
    # 1-3: table 5C 5S 3B JD (ids 14, 24, 32, 7)
    assert reference_captures(4, {14, 24, 32, 7}, r) == {f({14}), f({24})}
    assert reference_captures(17, {14, 24, 32, 7}, r) == {f({7})}
    assert reference_captures(19, {14, 24, 32, 7}, r) == {f({14, 24})}
    # 7: table A 2 3 4 (0, 11, 22, 33), play 6C (15)
    assert reference_captures(15, {0, 11, 22, 33}, r) == {f({11, 33}), f({0, 11, 22})}
    fewest = Rules(fewest_cards_capture=True)
    assert reference_captures(15, {0, 11, 22, 33}, fewest) == {f({11, 33})}
    # ace takes all
    assta = Rules.preset("scopa_d_assi")
    assert reference_captures(0, {14, 22, 39}, assta) == {f({14, 22, 39})}
    assert reference_captures(0, {10, 20, 34}, assta) == {f({10}), f({20})}
    assert reference_captures(0, set(), assta) == {f()}
    # quindici: K takes 5C or AS+4B; 5 with a lone 5 trails
    q = Rules.preset("scopa_a_quindici")
    assert reference_captures(9, {14, 20, 33}, q) == {f({14}), f({20, 33})}
    assert reference_captures(4, {14}, q) == {f()}
    # scoring: napola A-2-3-4-6-7 = 4
    caps0 = {0, 1, 2, 3, 5, 6}
    sc = reference_score((caps0, ALL_CARDS - caps0), (0, 0), Rules.preset("napola"))
    assert sc[0]["napola"] == 4


@settings(max_examples=examples(400), **SETTINGS)
@given(seed=seeds, rules=rules_st, policy=policies)
def test_random_positions_against_reference(seed, rules, policy):
    """Random consistent positions (tables up to 12 cards): legal captures for every hand card
    equal the brute-force reference exactly, and the rest of the deal follows the reference."""
    deal, ref = random_position(seed, rules)
    run_against_reference(deal, ref, np.random.default_rng([seed, 8]), policy)


@settings(max_examples=examples(150), **SETTINGS)
@given(seed=seeds, rules=rules_st, first=st.integers(0, 1), policy=policies)
def test_random_deals_against_reference(seed, rules, first, policy):
    """Whole deals from an explicit deck: deal convention, every legal move set, every state,
    scope (none on the last play unless the option), leftovers and the score."""
    deck = random_deck(seed)
    deal = Deal.from_deck(deck, first_player=first, rules=rules)
    ref = RefDeal.from_deck(deck, first, rules)
    run_against_reference(deal, ref, np.random.default_rng([seed, 1]), policy)
    assert ref.plays == 36


@settings(max_examples=examples(100), **SETTINGS)
@given(seed=seeds, rules=rules_st, first=st.integers(0, 1), policy=policies)
def test_new_deal_invariants(seed, rules, first, policy):
    deal = Deal.new(np.random.default_rng(seed), first_player=first, rules=rules)
    again = Deal.new(np.random.default_rng(seed), first_player=first, rules=rules)
    assert norm(deal.to_dict()) == norm(again.to_dict()), "same seed, same deal"
    assert deal.first_player == first and deal.current_player == first
    assert [len(h) for h in deal.hands] == [3, 3]
    assert len(deal.table) == 4 and len(deal.stock) == 30
    assert deal.captures == ((), ()) or [len(c) for c in deal.captures] == [0, 0]
    assert tuple(deal.scope) == (0, 0)
    assert deal.last_capturer is None
    if rules.redeal_three_kings:
        assert sum(1 for c in deal.table if value(c) == 10) < 3
    rng = np.random.default_rng([seed, 2])
    plays = 0
    while not deal.is_over:
        check_invariants(deal)
        for c in deal.hands[deal.current_player]:
            got = {m.capture for m in deal.legal_moves() if m.card == c}
            assert got == reference_captures(c, deal.table, rules)
        m = choose(deal.legal_moves(), rng, policy)
        scope_before = tuple(deal.scope)
        deal.play(m)
        plays += 1
        if plays < 36:
            assert not deal.is_over
    assert plays == 36
    if not rules.last_play_scopa:
        assert tuple(deal.scope) == scope_before, "no scopa on the last play of the deal"
    check_invariants(deal)
    check_score(deal)


@settings(max_examples=examples(60), **SETTINGS)
@given(seed=seeds, rules=rules_st, first=st.integers(0, 1))
def test_last_play_sweep_scores_only_with_option(seed, rules, first):
    """Play greedily for captures; whenever the 36th play sweeps, the scope only changes with
    last_play_scopa (and, for an ace-takes-all sweep, ace_sweep_scopa)."""
    deal = Deal.new(np.random.default_rng(seed), first_player=first, rules=rules)
    rng = np.random.default_rng([seed, 3])
    while not deal.is_over:
        m = choose(deal.legal_moves(), rng, "capture")
        table_before = set(deal.table)
        scope_before = tuple(deal.scope)
        player = deal.current_player
        deal.play(m)
    swept = bool(m.capture) and set(m.capture) == table_before
    gained = deal.scope[player] - scope_before[player]
    assert deal.scope[1 - player] == scope_before[1 - player]
    ace_sweep = (
        rules.ace_takes_all and value(m.card) == 1 and not any(value(c) == 1 for c in m.capture)
    )
    should = swept and rules.last_play_scopa and (not ace_sweep or rules.ace_sweep_scopa)
    assert gained == (1 if should else 0)


@settings(max_examples=examples(150), **SETTINGS)
@given(
    seed=seeds,
    rules=rules_st,
    first=st.integers(0, 1),
    table_size=st.integers(1, 4),
    earlier_round=st.booleans(),
)
def test_sweep_with_a_rounds_last_card(seed, rules, first, table_size, earlier_round):
    """The dealer's last card of a round sweeps the table: a scopa when the stock still holds a
    round (an earlier round), on the deal's last play only with last_play_scopa; an ace-takes-all
    sweep also needs ace_sweep_scopa."""
    rng = np.random.default_rng([seed, 9])
    order = [int(c) for c in rng.permutation(40)]
    table = order[:table_size]
    sweepers = [
        c for c in order[table_size:] if frozenset(table) in reference_captures(c, table, rules)
    ]
    if not sweepers:
        return
    card = sweepers[int(rng.integers(len(sweepers)))]
    rest = [c for c in order[table_size:] if c != card]
    stock = rest[:6] if earlier_round else []
    piles = rest[len(stock) :]
    hands: list[tuple[int, ...]] = [(), ()]
    hands[1 - first] = (card,)
    deal = Deal.from_position(
        hands=tuple(hands),
        table=tuple(table),
        stock=tuple(stock),
        captures=(tuple(piles[::2]), tuple(piles[1::2])),
        current_player=1 - first,
        first_player=first,
        last_capturer=first,
        scope=(0, 0),
        rules=rules,
    )
    deal.play(Move(card, frozenset(table)))
    ace_sweep = rules.ace_takes_all and value(card) == 1 and not any(value(c) == 1 for c in table)
    scores = (earlier_round or rules.last_play_scopa) and (not ace_sweep or rules.ace_sweep_scopa)
    expected = [0, 0]
    expected[1 - first] = 1 if scores else 0
    assert tuple(deal.scope) == tuple(expected)
    assert deal.is_over == (not earlier_round)
    assert deal.table == ()
    assert frozenset(table) | {card} <= set(deal.captures[1 - first])
    if earlier_round:
        assert set(deal.hands[first]) == set(stock[0::2])
        assert set(deal.hands[1 - first]) == set(stock[1::2])
        assert deal.current_player == first


@settings(max_examples=examples(60), **SETTINGS)
@given(seed=seeds, rules=rules_st, first=st.integers(0, 1))
def test_illegal_moves_raise_and_leave_state_unchanged(seed, rules, first):
    deal = Deal.new(np.random.default_rng(seed), first_player=first, rules=rules)
    rng = np.random.default_rng([seed, 4])
    while not deal.is_over:
        before = deal.to_dict()
        hand = sorted(deal.hands[deal.current_player])
        table = sorted(deal.table)
        legal = engine_moves(deal)
        attempts = []
        # a card not in the current player's hand
        outside = sorted(ALL_CARDS - set(hand))
        attempts.append(Move(outside[int(rng.integers(len(outside)))], frozenset()))
        card = hand[int(rng.integers(len(hand)))]
        # a random subset of the table that is not a legal capture for this card
        for _ in range(3):
            sub = frozenset(c for c in table if rng.random() < 0.5)
            if (card, sub) not in legal:
                attempts.append(Move(card, sub))
                break
        # a legal capture plus a card that is not on the table
        caps_for_card = sorted((cap for c, cap in legal if c == card), key=sorted)
        not_on_table = sorted(ALL_CARDS - set(table) - {card})
        extra = not_on_table[int(rng.integers(len(not_on_table)))]
        attempts.append(Move(card, caps_for_card[0] | {extra}))
        for mv in attempts:
            assert (mv.card, mv.capture) not in legal
            with pytest.raises(IllegalMoveError):
                deal.play(mv)
            assert deal.to_dict() == before, f"illegal {mv} changed the deal"
        deal.play(choose(deal.legal_moves(), rng, "uniform"))
    before = deal.to_dict()
    with pytest.raises(IllegalMoveError):
        deal.play(Move(0, frozenset()))
    assert deal.to_dict() == before


@settings(max_examples=examples(80), **SETTINGS)
@given(
    seed=seeds,
    rules=rules_st,
    first=st.integers(0, 1),
    cut=st.integers(0, 36),
    policy=policies,
)
def test_to_dict_round_trip_and_identical_continuation(seed, rules, first, cut, policy):
    deal = Deal.new(np.random.default_rng(seed), first_player=first, rules=rules)
    rng = np.random.default_rng([seed, 5])
    for _ in range(cut):
        deal.play(choose(deal.legal_moves(), rng, policy))
    d = deal.to_dict()
    text = json.dumps(d)  # JSON-safe
    other = Deal.from_dict(json.loads(text))
    assert norm(other.to_dict()) == norm(d)
    assert state(other) == state(deal)
    assert other.rules == deal.rules == rules
    assert other.first_player == deal.first_player
    copy = deal.copy()
    assert norm(copy.to_dict()) == norm(d)
    while not deal.is_over:
        assert engine_moves(other) == engine_moves(deal)
        m = choose(deal.legal_moves(), rng, policy)
        deal.play(m)
        other.play(Move(m.card, frozenset(m.capture)))
        assert norm(other.to_dict()) == norm(deal.to_dict())
    assert other.is_over
    assert [breakdown(b) for b in other.score()] == [breakdown(b) for b in deal.score()]
    # the copy taken at the cut was not affected by playing on the original
    assert norm(copy.to_dict()) == norm(d)


@settings(max_examples=examples(40), **SETTINGS)
@given(seed=seeds, rules=rules_st, first=st.integers(0, 1))
def test_from_deck_same_deck_same_deal(seed, rules, first):
    deck = random_deck(seed)
    a = Deal.from_deck(deck, first_player=first, rules=rules)
    b = Deal.from_deck(list(deck), first_player=first, rules=rules)
    assert norm(a.to_dict()) == norm(b.to_dict())
    dealer = 1 - first
    assert set(a.hands[first]) == set(deck[0:6:2])
    assert set(a.hands[dealer]) == set(deck[1:6:2])
    assert set(a.table) == set(deck[6:10])
    assert set(a.stock) == set(deck[10:])
    assert a.current_player == first
    rng = np.random.default_rng([seed, 6])
    while not a.is_over:
        m = choose(a.legal_moves(), rng, "uniform")
        a.play(m)
        b.play(m)
        assert norm(a.to_dict()) == norm(b.to_dict())


def test_from_deck_rejects_bad_decks():
    deck = list(range(40))
    for bad in (deck[:39], deck + [0], deck[:39] + [0], deck[:39] + [40]):
        with pytest.raises(ValueError):
            Deal.from_deck(bad)


# --------------------------------------------------------------------------------------------
# every table (RULES.md section 8), against a reference for N seats and any number of sides
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class RefTableDeal:
    """One deal at a table of ``seats`` seats in ``sides`` sides, from RULES.md section 8."""

    rules: Rules
    seats: int
    sides: int
    hand: int
    hands: list[set[int]]
    table: set[int]
    stock: list[int]
    captures: list[set[int]]
    scope: list[int]
    current: int
    first: int
    last_capturer: int | None
    over: bool = False
    plays: int = 0

    @classmethod
    def from_deck(cls, deck, first: int, rules: Rules, table: Table) -> RefTableDeal:
        n = table.players
        ref = cls(
            rules,
            n,
            table.sides,
            table.hand_size,
            [set() for _ in range(n)],
            set(),
            list(deck),
            [set() for _ in range(n)],
            [0] * n,
            first,
            first,
            None,
        )
        ref.deal_round()
        ref.table = set(ref.stock[: table.table_size])
        ref.stock = ref.stock[table.table_size :]
        return ref

    def deal_round(self) -> None:
        # deck[i] to seat (first + i) % seats, one card at a time
        for i in range(self.seats * self.hand):
            self.hands[(self.first + i) % self.seats].add(self.stock[i])
        self.stock = self.stock[self.seats * self.hand :]
        self.current = self.first

    def legal(self) -> set[tuple[int, frozenset[int]]]:
        if self.over:
            return set()
        return {
            (c, cap)
            for c in self.hands[self.current]
            for cap in reference_captures(c, self.table, self.rules)
        }

    def play(self, card: int, cap: frozenset[int]) -> None:
        assert (card, cap) in self.legal()
        p = self.current
        self.hands[p].remove(card)
        self.plays += 1
        last_play = not any(self.hands) and not self.stock
        if cap:
            self.table -= cap
            self.captures[p] |= cap | {card}
            self.last_capturer = p
            if not self.table:
                ace_sweep = (
                    self.rules.ace_takes_all
                    and value(card) == 1
                    and not any(value(c) == 1 for c in cap)
                )
                if (not last_play or self.rules.last_play_scopa) and (
                    not ace_sweep or self.rules.ace_sweep_scopa
                ):
                    self.scope[p] += 1
        else:
            self.table.add(card)
        self.current = (p + 1) % self.seats
        if not any(self.hands):
            if self.stock:
                self.deal_round()
            else:
                self.over = True
                if self.last_capturer is not None:
                    self.captures[self.last_capturer] |= self.table
                    self.table = set()


def reference_table_score(captures, scope, sides: int, rules: Rules) -> list[dict[str, int]]:
    """Pool each side's seats (seat s on side s % sides), then give each category to the one
    side strictly ahead of every other; primiera only among sides holding all four suits."""
    caps = [set().union(*captures[side::sides]) for side in range(sides)]
    scopes = [sum(scope[side::sides]) for side in range(sides)]
    res = [dict.fromkeys(FIELDS, 0) for _ in range(sides)]

    def award(field: str, values) -> None:
        contenders = [v for v in values if v is not None]
        if not contenders:
            return
        best = max(contenders)
        leaders = [s for s, v in enumerate(values) if v == best]
        if len(leaders) == 1:
            res[leaders[0]][field] = 1

    award("cards", [len(c) for c in caps])
    award("coins", [sum(1 for c in cs if suit_of(c) == 0) for cs in caps])
    primiera = []
    for cs in caps:
        best = [
            max((PRIMIERA[value(c)] for c in cs if suit_of(c) == s), default=None) for s in range(4)
        ]
        primiera.append(None if None in best else sum(best))
    award("primiera", primiera)
    for side, cs in enumerate(caps):
        res[side]["settebello"] = int(SETTEBELLO in cs)
        res[side]["scope"] = scopes[side]
        if rules.re_bello and RE_BELLO in cs:
            res[side]["re_bello"] = 1
        if rules.napola:
            n = 0
            while n < 10 and n in cs:
                n += 1
            res[side]["napola"] = n if n >= 3 else 0
        res[side]["total"] = sum(v for k, v in res[side].items() if k != "total")
    return res


def table_state(deal: Deal) -> dict:
    return {**state(deal), "stock": tuple(deal.stock)}


def ref_table_state(ref: RefTableDeal) -> dict:
    return {**ref_state(ref), "stock": tuple(ref.stock)}  # type: ignore[arg-type]


def check_table_invariants(deal: Deal) -> None:
    places = [*deal.hands, deal.table, deal.stock, *deal.captures]
    assert sorted(int(c) for place in places for c in place) == list(range(40))
    assert all(len(h) <= deal.kind.hand_size for h in deal.hands)
    assert (deal.legal_moves() == []) == deal.is_over


def check_table_score(deal: Deal) -> None:
    sides = deal.kind.sides
    got = [breakdown(b) for b in deal.score()]
    assert len(got) == sides
    for f in CATEGORY_FIELDS + ("re_bello",):
        assert sum(g[f] for g in got) <= 1, f"{f} point given to more than one side"
    assert sum(g["napola"] > 0 for g in got) <= 1
    assert got == reference_table_score(deal.captures, deal.scope, sides, deal.rules)


TABLE_NAMES = sorted(TABLES)


@pytest.mark.parametrize("name", TABLE_NAMES)
@settings(max_examples=examples(40), **SETTINGS)
@given(seed=seeds, rules=rules_st, policy=policies, first=st.integers(0, 5))
def test_every_table_deals_against_reference(name, seed, rules, policy, first):
    """Whole deals at every table from an explicit deck: the deal convention, every legal move
    set, every state (the stock in order), the plays per deal, leftovers and the score."""
    table = TABLES[name]
    first %= table.players
    deck = random_deck(seed)
    deal = Deal.from_deck(deck, first_player=first, rules=rules, kind=name)
    ref = RefTableDeal.from_deck(deck, first, rules, table)
    rng = np.random.default_rng([seed, 10])
    while True:
        assert table_state(deal) == ref_table_state(ref)
        check_table_invariants(deal)
        assert engine_moves(deal) == ref.legal()
        if ref.over:
            break
        m = choose(deal.legal_moves(), rng, policy)
        deal.play(m)
        ref.play(int(m.card), frozenset(m.capture))
    assert ref.plays == 40 - table.table_size
    check_table_score(deal)


@pytest.mark.parametrize("name", TABLE_NAMES)
@settings(max_examples=examples(25), **SETTINGS)
@given(seed=seeds, rules=rules_st, first=st.integers(0, 5), cut=st.integers(0, 40))
def test_every_table_round_trips_mid_deal(name, seed, rules, first, cut):
    """``to_dict``/``from_dict`` (through JSON), ``from_position`` with the deal's own fields and
    ``copy`` restore a position of any table exactly, and the deal plays on identically."""
    table = TABLES[name]
    deal = Deal.new(np.random.default_rng(seed), first % table.players, rules, name)
    rng = np.random.default_rng([seed, 11])
    for _ in range(min(cut, 40 - table.table_size)):
        deal.play(choose(deal.legal_moves(), rng, "uniform"))
    d = deal.to_dict()
    assert d["kind"] == name
    restored = Deal.from_dict(json.loads(json.dumps(d)))
    positioned = Deal.from_position(
        hands=deal.hands,
        table=deal.table,
        stock=deal.stock,
        captures=deal.captures,
        current_player=deal.current_player,
        first_player=deal.first_player,
        last_capturer=deal.last_capturer,
        scope=deal.scope,
        rules=deal.rules,
        played=deal.played,
        kind=deal.kind,
    )
    copy = deal.copy()
    for other in (restored, positioned, copy):
        assert norm(other.to_dict()) == norm(d) and other.kind is table
    while not deal.is_over:
        m = choose(deal.legal_moves(), rng, "uniform")
        for other in (deal, restored, positioned):
            other.play(m)
        assert norm(restored.to_dict()) == norm(positioned.to_dict()) == norm(deal.to_dict())
    assert [breakdown(b) for b in restored.score()] == [breakdown(b) for b in deal.score()]
    assert norm(copy.to_dict()) == norm(d)


@pytest.mark.parametrize("name", TABLE_NAMES)
@settings(max_examples=examples(10), **SETTINGS)
@given(seed=seeds, rules=rules_st, first_dealer=st.integers(0, 5))
def test_every_table_match_scores_per_side(name, seed, rules, first_dealer):
    """A random match at every table: the deal passes to the next seat, scores add up per side
    and the winner is the one side at the target with the highest total alone."""
    table = TABLES[name]
    match = Match(dataclasses.replace(rules, target=5), first_dealer % table.players, name)
    rng = np.random.default_rng([seed, 12])
    totals = [0] * table.sides
    while not match.is_over:
        dealer = match.dealer
        deal = match.new_deal(rng)
        assert deal.dealer == dealer and deal.first_player == (dealer + 1) % table.players
        while not deal.is_over:
            deal.play(choose(deal.legal_moves(), rng, "uniform"))
        points = [b.total for b in deal.score()]
        totals = [t + p for t, p in zip(totals, points, strict=True)]
        match.record_deal(deal)
        assert match.scores == tuple(totals)
        assert match.dealer == (dealer + 1) % table.players
        best = max(totals)
        single = totals.count(best) == 1 and best >= 5
        assert match.winner == (totals.index(best) if single else None)
