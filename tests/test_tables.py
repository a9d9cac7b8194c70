"""The engine at every table of RULES.md section 8: the registry, cases 33-38, the redeal.

Every expectation is derived by hand from RULES.md section 8 (seats, the deal convention, who
deals next, sides, scoring with three sides, the match end with three sides), never from engine
output. The property tests over random deals at every table are in test_engine_properties.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.cards import KINGS_MASK, mask_of, parse_cards
from scopa_env.engine import Deal, Match
from scopa_env.rules import Rules
from scopa_env.tables import TABLES, Table, register_table, resolve_table, scopa_table

ALL_CARDS = frozenset(range(40))
FIELDS = ("cards", "coins", "settebello", "primiera", "scope", "re_bello", "napola", "total")


def cards(names: str) -> tuple[int, ...]:
    return parse_cards(names)


def breakdown(b) -> dict[str, int]:
    return {f: int(getattr(b, f)) for f in FIELDS}


def expect(**points: int) -> dict[str, int]:
    d = dict.fromkeys(FIELDS, 0)
    d.update(points)
    d["total"] = sum(v for k, v in d.items() if k != "total")
    return d


def finished(kind: str, piles: list[str], scope: tuple[int, ...], last: int = 0) -> Deal:
    """A finished deal: every card captured, as named per seat."""
    captures = [cards(p) for p in piles]
    assert sorted(c for pile in captures for c in pile) == list(range(40)), "test bug"
    n = TABLES[kind].players
    return Deal.from_position(
        hands=((),) * n,
        table=(),
        captures=captures,
        scope=scope,
        last_capturer=last,
        kind=kind,
    )


# The registry ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "players", "sides", "hand", "table", "rounds"),
    [
        ("scopa", 2, 2, 3, 4, 6),
        ("scopa_3", 3, 3, 3, 4, 4),
        ("scopa_4", 4, 2, 3, 4, 3),
        ("scopa_6", 6, 2, 3, 4, 2),
        ("scopone", 4, 2, 9, 4, 1),
        ("scopone_scientifico", 4, 2, 10, 0, 1),
    ],
)
def test_tables_of_section_8(name, players, sides, hand, table, rounds) -> None:
    t = resolve_table(name)
    assert (t.players, t.sides, t.hand_size, t.table_size, t.rounds) == (
        players,
        sides,
        hand,
        table,
        rounds,
    )
    assert t.agents == tuple(f"player_{s}" for s in range(players))


def test_sides_of_the_partnership_tables() -> None:
    assert [TABLES["scopa_4"].side_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert TABLES["scopa_6"].seats_of(0) == (0, 2, 4) and TABLES["scopa_6"].seats_of(1) == (1, 3, 5)
    assert [TABLES["scopa_3"].side_of(s) for s in range(3)] == [0, 1, 2]
    assert not TABLES["scopa_3"].partnerships and TABLES["scopa_6"].partnerships


def test_scopa_table_by_players() -> None:
    assert [scopa_table(n).name for n in (2, 3, 4, 6)] == ["scopa", "scopa_3", "scopa_4", "scopa_6"]
    for bad in (1, 5, 7, "3", True, 3.0):
        with pytest.raises(ValueError, match="Scopa is played by 2, 3, 4, 6 players"):
            scopa_table(bad)


def test_a_table_must_deal_the_whole_deck() -> None:
    with pytest.raises(ValueError, match="must deal the 40 cards"):
        register_table(Table("scopa_5", 5, 5, hand_size=3, table_size=4, rounds=2))
    with pytest.raises(ValueError, match="divide evenly"):
        register_table(Table("odd", 6, 4, hand_size=3, table_size=4, rounds=2))
    assert "scopa_5" not in TABLES and "odd" not in TABLES


# Case 33: scopa_3 rounds, leader, dealer and the next dealer --------------------------------


@pytest.mark.parametrize("first_dealer", [0, 1, 2])
def test_case_33_scopa_3_four_rounds_of_three(first_dealer: int) -> None:
    match = Match(kind="scopa_3", first_dealer=first_dealer)
    rng = np.random.default_rng(33)
    for number in range(4):
        dealer = (first_dealer + number) % 3
        assert match.dealer == dealer and match.first_player == (dealer + 1) % 3
        deal = match.new_deal(rng)
        assert deal.dealer == dealer and deal.current_player == (dealer + 1) % 3
        leaders, plays, last = [], 0, None
        while not deal.is_over:
            if [len(h) for h in deal.hands] == [3, 3, 3]:
                leaders.append(deal.current_player)
            last = deal.current_player
            moves = deal.legal_moves()
            deal.play(moves[int(rng.integers(len(moves)))])
            plays += 1
        assert plays == 36 and leaders == [(dealer + 1) % 3] * 4
        assert last == dealer  # the dealer plays the last card of the deal
        assert len(deal.score()) == 3
        match.record_deal((0, 0, 0))  # 0-0-0 never ends the match
    assert match.dealer == (first_dealer + 4) % 3 and match.deals_played == 4


# Case 34: scoring with three sides ---------------------------------------------------------


def test_case_34_cards_tied_for_the_lead_coins_to_the_five() -> None:
    # Cards 14-14-12: nobody. Coins 5-3-2: seat 0. Settebello seat 0; primiera 84-57-45 (every
    # seat holds all four suits): seat 0.
    deal = finished(
        "scopa_3",
        [
            "7D 6D AD 5D 4D 7C 7S 7B 6C 6S 6B AC AS AB",
            "3D 2D JD 2C 3C 4C 5C 2S 3S 4S 5S 2B 3B 4B",
            "QD KD JC QC KC JS QS KS 5B JB QB KB",
        ],
        scope=(1, 0, 2),
    )
    assert [breakdown(b) for b in deal.score()] == [
        expect(coins=1, settebello=1, primiera=1, scope=1),
        expect(),
        expect(scope=2),
    ]


def test_case_34_coins_tied_and_primiera_to_the_only_full_hand() -> None:
    # Coins 4-4-2: nobody. Seat 1 (7s and 6s, no clubs) and seat 2 (no swords) miss a suit, so
    # seat 0 wins primiera with 12+13+15+15 = 55 whatever their totals. Cards 23-10-7: seat 0.
    deal = finished(
        "scopa_3",
        [
            "2D JD QD KD 2C 3C JC QC KC 2S 3S 4S 5S JS QS KS 2B 3B 4B 5B JB QB KB",
            "7D 6D AD 5D 7C 6C AC 7S 6S AS",
            "4D 3D 7B 6B AB 5C 4C",
        ],
        scope=(0, 0, 0),
    )
    assert [breakdown(b) for b in deal.score()] == [
        expect(cards=1, primiera=1),
        expect(settebello=1),
        expect(),
    ]


def test_case_34_primiera_tied_for_the_lead_goes_to_nobody() -> None:
    # Seat 0's best cards are 7D 7C 6S 6B, seat 1's 6D 6C 7S 7B: 78 each, a tie for the lead,
    # so nobody wins primiera (seat 2 holds every suit too, 45). Cards 14-13-13, coins 6-1-3.
    deal = finished(
        "scopa_3",
        [
            "7D 7C 6S 6B AD 2D 3D 4D 5D AC 2C 3C 4C 5C",
            "7S 7B 6D 6C AS 2S 3S 4S 5S AB 2B 3B 4B",
            "JD QD KD JC QC KC JS QS KS JB QB KB 5B",
        ],
        scope=(0, 0, 0),
    )
    assert [breakdown(b) for b in deal.score()] == [
        expect(cards=1, coins=1, settebello=1),
        expect(),
        expect(),
    ]


def test_case_34_re_bello_and_napola_go_to_the_holder() -> None:
    rules = Rules(re_bello=True, napola=True)
    deal = Deal.from_position(
        hands=((), (), ()),
        table=(),
        captures=(
            cards("QC QS QB JC JS JB KC KS KB 4C 4S 4B"),
            cards("AD 2D 3D 4D 6D 7D AC AS AB 2C 2S 2B 3C 3S"),
            cards("5D JD QD KD 3B 5C 5S 5B 6C 6S 6B 7C 7S 7B"),
        ),
        last_capturer=2,
        rules=rules,
        kind="scopa_3",
    )
    # Cards 12-14-14: nobody. Coins 0-6-4: seat 1. Napola A-2-3-4 then no 5: 4 for seat 1.
    # Primiera: seat 0 misses coins; seat 1 21+16+16+16 = 69 < seat 2 15+21+21+21 = 78.
    assert [breakdown(b) for b in deal.score()] == [
        expect(),
        expect(coins=1, settebello=1, napola=4),
        expect(primiera=1, re_bello=1),
    ]


# Case 35: the match end with three sides ---------------------------------------------------


def test_case_35_scopa_3_match_ends_only_with_a_single_leader() -> None:
    match = Match(kind="scopa_3")
    match.record_deal((12, 11, 5))
    assert match.is_over and match.winner == 0

    match = Match(kind="scopa_3")
    match.record_deal((11, 11, 8))
    assert not match.is_over and match.winner is None
    match.record_deal((0, 1, 0))
    assert match.winner == 1 and match.scores == (11, 12, 8)

    match = Match(kind="scopa_3")
    match.record_deal((13, 13, 12))
    assert match.winner is None
    match.record_deal((0, 0, 2))
    assert match.winner == 2 and match.scores == (13, 13, 14)


def test_case_35_a_score_under_the_target_never_wins() -> None:
    match = Match(kind="scopa_3")
    match.record_deal((10, 3, 0))
    assert match.winner is None and match.deals_played == 1 and match.dealer == 1


def test_match_takes_one_total_per_side() -> None:
    match = Match(kind="scopa_3")
    for bad in ((1, 2), (1, 2, 3, 4), (1, -1, 0)):
        with pytest.raises(ValueError, match="three non-negative integers"):
            match.record_deal(bad)
    assert match.scores == (0, 0, 0) and match.deals_played == 0
    with pytest.raises(ValueError, match="two non-negative integers"):
        Match(kind="scopa_6").record_deal((1, 2, 3))
    with pytest.raises(ValueError, match="cannot count"):
        match.record_deal(Deal.from_deck(list(range(40)), kind="scopa_4"))


def test_scopa_6_match_is_won_by_a_team() -> None:
    match = Match(kind="scopa_6", first_dealer=5)
    assert match.scores == (0, 0) and match.first_player == 0
    match.record_deal((4, 11))
    assert match.winner == 1 and match.dealer == 0


# Case 36: scopa_4 partnerships -------------------------------------------------------------


def test_case_36_scopa_4_three_rounds_of_twelve() -> None:
    deck = [int(c) for c in np.random.default_rng(36).permutation(40)]
    deal = Deal.from_deck(deck, first_player=3, kind="scopa_4")
    rng = np.random.default_rng(1)
    start, rounds, plays = 0, 0, 0
    while not deal.is_over:
        if [len(h) for h in deal.hands] == [3] * 4:
            # A round of twelve: deck[start + i] to seat (3 + i) % 4; the table once, after.
            for i in range(12):
                assert deck[start + i] in deal.hands[(3 + i) % 4]
            start += 12 + (4 if rounds == 0 else 0)
            rounds += 1
            assert len(deal.stock) == 40 - start
        moves = deal.legal_moves()
        deal.play(moves[int(rng.integers(len(moves)))])
        plays += 1
    assert rounds == 3 and plays == 36
    assert len(deal.score()) == 2


def _last_round(hands: list[str], table: str, kind: str = "scopa_4") -> Deal:
    """The last round of a four-seat deal with one card each, seat 0 to lead; every card not
    named is split between the capture piles of seats 1 and 3 (side 1)."""
    named = set(cards(" ".join(hands))) | set(cards(table))
    rest = sorted(ALL_CARDS - named)
    return Deal.from_position(
        hands=[cards(h) for h in hands],
        table=cards(table),
        captures=((), tuple(rest[0::2]), (), tuple(rest[1::2])),
        current_player=0,
        first_player=0,
        last_capturer=1,
        kind=kind,
    )


def test_case_36_partners_pool_scope_and_the_last_capture_of_a_partner() -> None:
    # Seat 0's 5D takes the lone 5C (scopa); seat 1 trails 3S; seat 2's 3B takes it (scopa);
    # the dealer, seat 3, trails KB, the deal's last card: it goes to seat 2's side.
    deal = _last_round(["5D", "3S", "3B", "KB"], "5C")
    for card in cards("5D 3S 3B KB"):
        (move,) = [m for m in deal.legal_moves() if m.card == card]
        deal.play(move)
    assert deal.is_over and deal.table == ()
    assert deal.scope == (1, 0, 1, 0) and deal.team_scope == (2, 0)
    assert set(deal.captures[0]) == set(cards("5D 5C"))
    assert set(deal.captures[2]) == set(cards("3B 3S KB"))
    assert set(deal.team_captures[0]) == set(cards("5D 5C 3B 3S KB"))
    assert len(deal.team_captures[1]) == 35
    assert deal.team_piles[0] == mask_of(cards("5D 5C 3B 3S KB"))
    a, b = deal.score()
    assert (a.scope, b.scope) == (2, 0) and (a.cards, b.cards) == (0, 1)


def test_case_36_leftovers_go_to_the_last_capturers_partnership() -> None:
    # Seat 0 trails QS; seat 1's 5D must take 5C (single-card priority); seat 2 trails 2B and
    # seat 3 (seat 1's partner, the dealer) trails 4S. Table QS 2B 4S goes to seat 1, the last
    # capturer: side 1, though the last player was seat 3.
    deal = _last_round(["QS", "5D", "2B", "4S"], "5C")
    for card in cards("QS 5D 2B 4S"):
        (move,) = [m for m in deal.legal_moves() if m.card == card]
        deal.play(move)
    assert deal.is_over and deal.table == () and deal.last_capturer == 1
    assert set(cards("QS 2B 4S 5C 5D")) <= set(deal.captures[1])
    assert deal.team_captures[0] == () and len(deal.team_captures[1]) == 40
    assert deal.scope == (0, 0, 0, 0)


# Case 37: scopa_6 teams --------------------------------------------------------------------


def test_case_37_scopa_6_two_rounds_of_eighteen() -> None:
    deck = [int(c) for c in np.random.default_rng(37).permutation(40)]
    deal = Deal.from_deck(deck, first_player=0, kind="scopa_6")
    assert [len(h) for h in deal.hands] == [3] * 6 and len(deal.stock) == 18
    assert deal.table == tuple(sorted(deck[18:22]))
    rng = np.random.default_rng(2)
    plays = 0
    while not deal.is_over:
        if plays == 18:  # the second round: deck[22 + i] to seat i % 6
            for i in range(18):
                assert deck[22 + i] in deal.hands[i % 6]
            assert deal.stock == () and deal.current_player == 0
        moves = deal.legal_moves()
        deal.play(moves[int(rng.integers(len(moves)))])
        plays += 1
    assert plays == 36
    for side in (0, 1):
        pooled = set().union(*(deal.captures[s] for s in range(side, 6, 2)))
        assert set(deal.team_captures[side]) == pooled


def test_case_37_teams_score_as_one_side() -> None:
    # Seat 1 alone holds 15 cards, but team 0+2+4 holds 21 against 19. Team 1 holds no coins
    # and no clubs, team 0 no cups: nobody wins primiera. Scope pools to 1 against 2.
    deal = finished(
        "scopa_6",
        [
            "AD 2D 3D 4D 5D 6D 7D",
            "AC 2C 3C 4C 5C 6C 7C JC QC KC AS 2S 3S 4S 5S",
            "JD QD KD KS AB 2B 3B",
            "6S 7S",
            "4B 5B 6B 7B JB QB KB",
            "JS QS",
        ],
        scope=(1, 1, 0, 0, 0, 1),
        last=4,
    )
    assert [breakdown(b) for b in deal.score()] == [
        expect(cards=1, coins=1, settebello=1, scope=1),
        expect(scope=2),
    ]


# Case 38: the deal convention at every table -----------------------------------------------


@pytest.mark.parametrize("name", sorted(TABLES))
def test_case_38_every_table_deals_a_deck_by_the_convention(name: str) -> None:
    table = TABLES[name]
    n, dealt = table.players, table.round_cards
    deck = [int(c) for c in np.random.default_rng(38).permutation(40)]
    for first in range(n):
        deal = Deal.from_deck(deck, first_player=first, kind=name)
        dealer = (first - 1) % n
        assert deal.dealer == dealer and deal.current_player == first
        assert deck[0] in deal.hands[first]
        assert deck[dealt - 1] in deal.hands[dealer]
        for i in range(dealt):
            assert deck[i] in deal.hands[(first + i) % n]
        assert [len(h) for h in deal.hands] == [table.hand_size] * n
        assert set(deal.table) == set(deck[dealt : dealt + table.table_size])
        assert deal.stock == tuple(deck[dealt + table.table_size :])


# The redeal (section 8: every table that deals four table cards) ---------------------------


def _kings(cards_: list[int]) -> int:
    return (mask_of(cards_) & KINGS_MASK).bit_count()


@pytest.mark.parametrize("name", ["scopa_3", "scopa_4", "scopa_6"])
def test_three_table_kings_redeal_at_every_scopa_table(name: str) -> None:
    table = TABLES[name]
    cut = slice(table.round_cards, table.round_cards + 4)

    def deck_of(seed: int) -> list[int]:
        return np.random.default_rng(seed).permutation(40).tolist()

    seed = next(s for s in range(100_000) if _kings(deck_of(s)[cut]) >= 3)
    deal = Deal.new(np.random.default_rng(seed), first_player=1, kind=name)
    assert deal != Deal.from_deck(deck_of(seed), 1, kind=name)
    assert _kings(list(deal.table)) < 3
    off = Rules(redeal_three_kings=False)
    assert Deal.new(np.random.default_rng(seed), 1, off, name) == Deal.from_deck(
        deck_of(seed), 1, off, name
    )


def test_from_position_names_the_number_of_seats() -> None:
    with pytest.raises(ValueError, match="must each have six entries, one per seat of a scopa_6"):
        Deal.from_position(hands=((),) * 4, table=(), captures=((),) * 4, kind="scopa_6")
