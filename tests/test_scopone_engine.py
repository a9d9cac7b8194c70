"""The engine with four players (RULES.md section 8): the deals, seat order, partnerships.

Every expectation is derived by hand from RULES.md and the documented deal convention (cards
one at a time in playing order from the first player, then the table), never from engine output.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scopa_env.cards import KINGS_MASK, mask_of, parse_cards
from scopa_env.engine import Deal, Match, Move, needs_redeal
from scopa_env.rules import PRESETS, Rules
from scopa_env.tables import TABLES

ALL_CARDS = frozenset(range(40))


def cards(names: str) -> tuple[int, ...]:
    return parse_cards(names)


def suit(letter: str) -> str:
    return " ".join(rank + letter for rank in "A234567JQK")


def without(names: str, *drop: str) -> str:
    return " ".join(n for n in names.split() if n not in drop)


# Dealing ---------------------------------------------------------------------------------


def test_scopone_deal_convention() -> None:
    deal = Deal.from_deck(list(range(40)), first_player=1, kind="scopone")
    # deck[i] to seat (1 + i) % 4 for i < 36, then deck[36:40] face up.
    assert deal.hands[1] == tuple(range(0, 36, 4))
    assert deal.hands[2] == tuple(range(1, 36, 4))
    assert deal.hands[3] == tuple(range(2, 36, 4))
    assert deal.hands[0] == tuple(range(3, 36, 4))
    assert deal.table == (36, 37, 38, 39) and deal.stock == ()
    assert deal.num_players == 4 and deal.kind.name == "scopone"
    assert deal.current_player == deal.first_player == 1 and deal.dealer == 0
    assert deal.captures == ((), (), (), ()) and deal.scope == (0, 0, 0, 0)
    assert not deal.is_over


def test_scopone_scientifico_deals_ten_each_and_no_table() -> None:
    deal = Deal.from_deck(list(range(40)), first_player=0, kind="scopone_scientifico")
    for seat in range(4):
        assert deal.hands[seat] == tuple(range(seat, 40, 4))
    assert deal.table == () and deal.stock == ()
    assert deal.dealer == 3
    # Every card can be played: on an empty table each one is trailed.
    assert deal.legal_moves() == [Move(c) for c in range(0, 40, 4)]


def test_two_player_deal_is_unchanged() -> None:
    deal = Deal.from_deck(list(range(40)), first_player=1)
    assert deal.hands == ((1, 3, 5), (0, 2, 4)) and deal.table == (6, 7, 8, 9)
    assert deal.dealer == 0 and deal.num_players == 2 and len(deal.stock) == 30
    assert deal.kind == TABLES["scopa"]


def first_permutation(seed: int) -> list[int]:
    return np.random.default_rng(seed).permutation(40).tolist()


def kings(cards_: list[int]) -> int:
    return (mask_of(cards_) & KINGS_MASK).bit_count()


def test_scopone_redeals_three_table_kings() -> None:
    seed = next(s for s in range(100_000) if kings(first_permutation(s)[36:40]) >= 3)
    deck = first_permutation(seed)
    assert needs_redeal(deck[36:40])
    deal = Deal.new(np.random.default_rng(seed), first_player=2, kind="scopone")
    assert deal != Deal.from_deck(deck, 2, kind="scopone")
    assert kings(list(deal.table)) < 3 and deal.first_player == 2
    # The option turns the redeal off; scientifico has no table, so never redeals.
    off = Deal.new(np.random.default_rng(seed), 2, Rules(redeal_three_kings=False), "scopone")
    assert off == Deal.from_deck(deck, 2, Rules(redeal_three_kings=False), "scopone")
    sci = Deal.new(np.random.default_rng(seed), 2, kind="scopone_scientifico")
    assert sci == Deal.from_deck(deck, 2, kind="scopone_scientifico")


def test_scopone_table_is_the_last_four_cards() -> None:
    # Kings where the two-player table would be (deck[6:10]) do not void a Scopone deal.
    seed = next(
        s
        for s in range(100_000)
        if kings(first_permutation(s)[6:10]) >= 3 and kings(first_permutation(s)[36:40]) < 3
    )
    deal = Deal.new(np.random.default_rng(seed), 0, kind="scopone")
    assert deal == Deal.from_deck(first_permutation(seed), 0, kind="scopone")


# Turns, partnerships, scope and scoring ----------------------------------------------------


def test_play_passes_in_seat_order_from_the_first_player() -> None:
    deal = Deal.from_deck(list(range(40)), first_player=2, kind="scopone_scientifico")
    order = []
    while not deal.is_over:
        order.append(deal.current_player)
        deal.play(deal.legal_moves()[0])
    assert order == [2, 3, 0, 1] * 10


def late_position(**kwargs) -> Deal:
    """The last round of a Scopone deal: each seat holds one card, player_0 leads.

    Piles: player_0 the coins but 7D, player_2 the cups but 7C and 2C (partners), player_1
    the clubs but KB and the swords but 5S. Table 7C.
    """
    options = {
        "hands": (cards("7D"), cards("2C"), cards("5S"), cards("KB")),
        "table": cards("7C"),
        "captures": (
            cards(without(suit("D"), "7D")),
            cards(without(suit("B"), "KB") + " " + without(suit("S"), "5S")),
            cards(without(suit("C"), "7C", "2C")),
            (),
        ),
        "current_player": 0,
        "first_player": 0,
        "last_capturer": 1,
        "scope": (0, 2, 1, 0),
        "kind": "scopone",
    }
    return Deal.from_position(**{**options, **kwargs})


def test_last_round_partners_pool_captures_scope_and_points() -> None:
    deal = late_position()
    assert deal.dealer == 3
    # 7D must take 7C; not the last play, so a scopa for player_0.
    assert deal.legal_moves() == [Move(cards("7D")[0], frozenset(cards("7C")))]
    deal.play(deal.legal_moves()[0])
    assert deal.scope == (1, 2, 1, 0) and deal.team_scope == (2, 2)
    assert deal.current_player == 1
    # 2C on an empty table, 5S on 2C, KB on 2C+5S (7): nothing to capture, all trailed.
    for name in ("2C", "5S", "KB"):
        (only,) = deal.legal_moves()
        assert only == Move(cards(name)[0])
        deal.play(only)
    assert deal.is_over and deal.table == ()
    # The leftovers 2C 5S KB go to the last capturer, player_0, so to partnership 0.
    assert set(deal.captures[0]) == set(cards(suit("D") + " 7C 2C 5S KB"))
    team_0 = set(deal.team_captures[0])
    assert team_0 == set(cards(suit("D") + " " + suit("C") + " 5S KB"))
    assert len(team_0) == 22 and len(deal.team_captures[1]) == 18
    # Cards 22-18, all ten coins, 7D, primiera 21+21+15+10 against a pile without coins,
    # scope 2-2.
    a, b = deal.score()
    assert (a.cards, a.coins, a.settebello, a.primiera, a.scope, a.total) == (1, 1, 1, 1, 2, 6)
    assert (b.cards, b.coins, b.settebello, b.primiera, b.scope, b.total) == (0, 0, 0, 0, 2, 2)


def test_very_last_play_of_scopone_is_no_scopa_unless_the_option() -> None:
    # The dealer (player_3) holds the last card of the deal and sweeps the table.
    rest = sorted(ALL_CARDS - set(cards("5B 5C")))
    for rules, scope in ((None, 0), (Rules(last_play_scopa=True), 1)):
        deal = Deal.from_position(
            hands=((), (), (), cards("5B")),
            table=cards("5C"),
            captures=(rest, (), (), ()),
            current_player=3,
            first_player=0,
            last_capturer=0,
            rules=rules,
            kind="scopone",
        )
        deal.play(Move(cards("5B")[0], frozenset(cards("5C"))))
        assert deal.is_over and deal.scope == (0, 0, 0, scope)
        assert set(deal.team_captures[1]) == set(cards("5B 5C"))


def test_a_sweep_by_the_first_player_of_the_last_round_counts() -> None:
    # player_1 leads the last round (player_0 deals and plays last): a sweep by player_1 is not
    # the last play of the deal.
    rest = sorted(ALL_CARDS - set(cards("5B 5C AD 2D 3D")))
    deal = Deal.from_position(
        hands=(cards("AD"), cards("5B"), cards("2D"), cards("3D")),
        table=cards("5C"),
        captures=(rest, (), (), ()),
        current_player=1,
        first_player=1,
        last_capturer=0,
        kind="scopone_scientifico",
    )
    deal.play(Move(cards("5B")[0], frozenset(cards("5C"))))
    assert deal.scope == (0, 1, 0, 0) and deal.current_player == 2


def test_capture_rules_are_the_same_with_four_players() -> None:
    # RULES.md 9.7 in a four-player deal: 6 on A 2 3 4 takes 2+4 or A+2+3; with
    # fewest_cards_capture only 2+4.
    hands = (cards("6D"), cards("5D"), cards("KD"), cards("KC"))
    rest = sorted(ALL_CARDS - set(cards("6D 5D KD KC AS 2C 3C 4C")))
    for rules, expected in (
        (None, {frozenset(cards("2C 4C")), frozenset(cards("AS 2C 3C"))}),
        (Rules(fewest_cards_capture=True), {frozenset(cards("2C 4C"))}),
    ):
        deal = Deal.from_position(
            hands=hands,
            table=cards("AS 2C 3C 4C"),
            captures=((), rest, (), ()),
            kind="scopone",
            rules=rules,
        )
        assert {m.capture for m in deal.legal_moves()} == expected
        deal.play(Move(cards("6D")[0], frozenset(cards("2C 4C"))))
        assert set(deal.team_captures[0]) == set(cards("6D 2C 4C")) and deal.scope == (0,) * 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"hands": (cards("7D"), cards("2C"))}, "four entries"),
        ({"current_player": 2}, "player 2 is to move"),
        ({"current_player": 4}, "seat 0..3"),
        ({"first_player": 1}, "player 0 is to move"),
        ({"stock": cards("7C"), "table": ()}, "stock"),
        ({"kind": "scopa"}, "two entries"),
        ({"kind": "briscola"}, "unknown table"),
    ],
)
def test_four_player_positions_are_validated(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        late_position(**kwargs)


def test_a_scopone_hand_holds_at_most_nine_cards() -> None:
    deck = list(range(40))
    hands = [deck[0:10], deck[10:20], deck[20:30], deck[30:40]]
    with pytest.raises(ValueError, match="at most 9"):
        Deal.from_position(hands=hands, table=(), kind="scopone")
    deal = Deal.from_position(hands=hands, table=(), kind="scopone_scientifico")
    assert deal.current_player == 0 and not deal.is_over


def test_round_trip_through_a_dictionary_keeps_the_kind() -> None:
    deal = Deal.from_deck(list(range(40)), first_player=3, kind="scopone")
    for _ in range(7):
        deal.play(deal.legal_moves()[-1])
    data = deal.to_dict()
    assert data["kind"] == "scopone"
    again = Deal.from_dict(data)
    assert again == deal and again.kind == deal.kind and again.dealer == 2
    copy = deal.copy()
    deal.play(deal.legal_moves()[0])
    assert copy == again != deal
    # A dictionary written before Scopone existed is a two-player deal.
    two = Deal.from_deck(list(range(40))).to_dict()
    del two["kind"]
    assert Deal.from_dict(two).kind.name == "scopa"


# The match ---------------------------------------------------------------------------------


def test_scopone_match_passes_the_deal_round_the_table_and_scores_per_partnership() -> None:
    match = Match(rules=Rules(target=11), first_dealer=3, kind="scopone")
    dealers, leaders = [], []
    for points in ((5, 3), (4, 4), (1, 2)):
        dealers.append(match.dealer)
        leaders.append(match.first_player)
        match.record_deal(points)
        assert match.winner is None
    assert dealers == [3, 0, 1] and leaders == [0, 1, 2] and match.dealer == 2
    assert match.scores == (10, 9)
    match.record_deal((1, 3))  # 11-12: partnership 1 wins
    assert match.winner == 1 and match.is_over
    with pytest.raises(ValueError, match="over"):
        match.record_deal((0, 0))


def test_a_match_counts_only_its_own_kind_of_deal() -> None:
    match = Match(kind="scopone")
    deal = Deal.from_deck(list(range(40)))
    for move in iter(lambda: deal.legal_moves()[:1], []):
        deal.play(move[0])
    with pytest.raises(ValueError, match="scopa deal cannot count in a scopone match"):
        match.record_deal(deal)
    with pytest.raises(ValueError, match="seat 0..3"):
        Match(first_dealer=4, kind="scopone")
    assert Match(first_dealer=1).first_player == 0  # two players: the dealer alternates


def test_new_deals_of_a_scopone_match_are_scopone() -> None:
    match = Match(first_dealer=1, kind="scopone_scientifico")
    deal = match.new_deal(np.random.default_rng(0))
    assert deal.kind.name == "scopone_scientifico" and deal.first_player == 2
    assert [len(h) for h in deal.hands] == [10, 10, 10, 10]


# Random games: invariants ----------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["scopone", "scopone_scientifico"]),
    preset=st.sampled_from(sorted(PRESETS)),
    first=st.integers(0, 3),
)
def test_random_scopone_deals_keep_every_invariant(
    seed: int, kind: str, preset: str, first: int
) -> None:
    rules = Rules.preset(preset)
    rng = np.random.default_rng(seed)
    deal = Deal.new(rng, first_player=first, rules=rules, kind=kind)
    hand_size = TABLES[kind].hand_size
    plays = 0
    while not deal.is_over:
        places = [*deal.hands, deal.table, *deal.captures]
        assert sorted(c for place in places for c in place) == list(range(40))
        # Seats that already played this round hold one card fewer.
        assert deal.current_player == (first + plays) % 4
        for seat in range(4):
            played_before = (seat - first) % 4 < plays % 4
            assert len(deal.hands[seat]) == hand_size - plays // 4 - played_before
        moves = deal.legal_moves()
        deal.play(moves[int(rng.integers(len(moves)))])
        plays += 1
    assert plays == 40 - TABLES[kind].table_size
    assert deal.table == () or deal.last_capturer is None
    teams = deal.team_captures
    assert set(teams[0]) | set(teams[1]) | set(deal.table) == ALL_CARDS
    assert set(teams[0]) == set(deal.captures[0]) | set(deal.captures[2])
    assert all(len(deal.played[s]) == hand_size for s in range(4))
    a, b = deal.score()
    assert (a.cards, b.cards) == ((len(teams[0]) > len(teams[1]), len(teams[1]) > len(teams[0])))
    assert (a.scope, b.scope) == deal.team_scope
    assert a.settebello + b.settebello == (6 not in deal.table)
