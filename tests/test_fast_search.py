"""The alpha-beta search player: its exact endgame on positions solved by hand, its search by
sides against plain minimax at every table, its defaults by table, and legal, reproducible play
through ``scopa_v0``."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conftest import (
    SEVENS_AND_COINS,
    assert_plays_a_match,
    choice_at,
    last_round,
    observe_deal,
    play_deals,
)

from agents import AlphaBetaAgent, make_agent
from agents.alphabeta import AlphaBeta, _for_side
from agents.greedy import MoveValuer
from scopa_env import scopa_v0
from scopa_env.captures import consistent_sets
from scopa_env.cards import mask_of, parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


def whole_move(player: AlphaBetaAgent, deal: Deal) -> tuple[int, int]:
    """The card ``player`` plays and the capture its picks complete, as ``scopa_v0`` asks."""
    card = player.act(observe_deal(deal))
    options = tuple(mask_of(s) for s in deal.capture_options(card))
    picked = 0
    while len(consistent_sets(options, picked)) > 1:
        action = player.act(observe_deal(deal, pending=card, picked=picked))
        assert action >= 40 and not picked >> (action - 40) & 1
        picked |= 1 << (action - 40)
    (capture,) = consistent_sets(options, picked) or [0]
    return card, capture


def root_values(deal: Deal) -> dict[tuple[int, int], int]:
    """The exact value for player 0 of each legal move, in hundredths of a point."""
    rules = Rules()
    search = AlphaBeta(rules, MoveValuer(rules))
    values = {}
    for card, capture in deal.legal_mask_moves():
        child = deal.copy()
        child.play_unchecked(card, capture)
        values[card, capture] = search.value(child, 40, 0)
    return values


def test_endgame_sweeps_rather_than_feed_the_opponent_a_sweep() -> None:
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    # 5B takes 3C+2S, a scopa; nothing scores after it (AB can only trail, the last play
    # never scores a scopa): 4 + 1 points to 0. Trailing AB leaves 3+2+1 for 6S to sweep:
    # 4 points to 1 (JB instead would only let 5B take 3C+2S, 4 to 0).
    sweep = (parse_card("5B"), mask_of(parse_cards("3C 2S")))
    trail = (parse_card("AB"), 0)
    assert root_values(deal) == {sweep: 500, trail: 300}
    assert whole_move(AlphaBetaAgent(seed=0), deal) == sweep


def test_endgame_takes_the_settebello_that_decides_the_point() -> None:
    # My pile: nine coins, every cup but KC and 4C, a sword and a club: cards, coins and
    # primiera are mine whatever happens (the opponent's pile holds no cups).
    pile = "AD 2D 3D 4D 5D 6D JD QD KD AC 2C 3C 5C 6C 7C JC QC AS AB 2B 3B"
    deal = last_round("KC", "7B", "7D 3S 6B 4C", pile)
    # KC takes 7D+3S or 6B+4C. After 6B+4C the opponent's 7B must take 7D: 3 points to 1.
    # After 7D+3S its 7B captures nothing and the rest comes to me: 4 points to 0.
    settebello = (parse_card("KC"), mask_of(parse_cards("7D 3S")))
    other = (parse_card("KC"), mask_of(parse_cards("6B 4C")))
    assert root_values(deal) == {settebello: 400, other: 200}
    assert whole_move(AlphaBetaAgent(seed=0), deal) == settebello


def test_a_started_capture_is_completed_with_the_picked_card() -> None:
    deal = last_round("6C", "JB", "AS 2C 3S 4C 5S", SEVENS_AND_COINS)
    six = parse_card("6C")
    player = AlphaBetaAgent(seed=0)
    # 6C takes A+5, 2+4 or A+2+3. With the ace picked, only A+5 and A+2+3 remain.
    action = player.act(observe_deal(deal, pending=six, picked=1 << parse_card("AS")))
    assert action - 40 in {parse_card("5S"), parse_card("2C"), parse_card("3S")}
    # With the 2 picked, A+2+3 and 2+4 remain; the player finishes one of them.
    picked = 1 << parse_card("2C")
    action = player.act(observe_deal(deal, pending=six, picked=picked))
    assert action - 40 in {parse_card("AS"), parse_card("3S"), parse_card("4C")}


def plain_minimax(deal: Deal) -> int:
    """Player 0's final point difference with both players perfect: no pruning, no ordering."""
    if deal.is_over:
        mine, theirs = deal.score()
        return mine.total - theirs.total
    values = []
    for move in deal.legal_moves():
        child = deal.copy()
        child.play(move)
        values.append(plain_minimax(child))
    return max(values) if deal.current_player == 0 else min(values)


@pytest.mark.parametrize("seed", range(8))
def test_pruned_search_to_the_end_matches_plain_minimax(seed: int) -> None:
    deal = Deal.new(np.random.default_rng(seed))
    rng = np.random.default_rng(100 + seed)
    # From the start of the fifth round (the stock order known: a perfect-information deal).
    while len(deal.stock) > 6 or len(deal.hands[1]) < 3:
        moves = deal.legal_moves()
        deal.play(moves[rng.integers(len(moves))])
    search = AlphaBeta(deal.rules, MoveValuer(deal.rules))
    assert search.value(deal, 40, 0) == 100 * plain_minimax(deal)


def plain_side_minimax(deal: Deal) -> Fraction:
    """Side 0's reward with every seat perfect, at any table: its points minus the mean of the
    other sides' (RULES.md section 8); side 0's seats maximise it, every other seat minimises
    it. No pruning, no ordering, no memo."""
    if deal.is_over:
        totals = [side.total for side in deal.score()]
        return totals[0] - Fraction(sum(totals[1:]), len(totals) - 1)
    values = []
    for move in deal.legal_moves():
        child = deal.copy()
        child.play(move)
        values.append(plain_side_minimax(child))
    return max(values) if deal.current_player % deal.kind.sides == 0 else min(values)


@pytest.mark.parametrize("table", ["scopa_3", "scopa_4", "scopa_6", "scopone"])
@pytest.mark.parametrize("seed", range(4))
def test_pruned_search_matches_plain_minimax_at_every_table(table: str, seed: int) -> None:
    rules = Rules(napola=seed % 2 == 1)
    deal = Deal.new(np.random.default_rng(seed), rules=rules, kind=table)
    rng = np.random.default_rng(200 + seed)
    plies = 6 if table == "scopa_3" else 7  # to the end: seat 0's side maximises, then not
    while deal.is_over is False and _plays_left(deal) > plies or deal.current_player != 0:
        moves = deal.legal_moves()
        deal.play(moves[rng.integers(len(moves))])
    search = AlphaBeta(rules, MoveValuer(rules))
    assert search.value(deal, 40, 0) == 100 * plain_side_minimax(deal)


def plain_maxn(deal: Deal, search: AlphaBeta) -> tuple[Fraction, ...]:
    """Every side's points where each seat plays for its own side's reward (its points minus
    the mean of the other sides'), ties to the first move in greedy order (``search.ordered``).
    No pruning, no memo; points from ``Deal.score``."""
    if deal.is_over:
        return tuple(Fraction(side.total) for side in deal.score())
    side = deal.current_player % deal.kind.sides

    def reward(totals: tuple[Fraction, ...]) -> Fraction:
        return totals[side] - Fraction(sum(totals) - totals[side], len(totals) - 1)

    best: tuple[Fraction, ...] = ()
    for card, capture in search.ordered(deal):
        child = deal.copy()
        child.play_unchecked(card, capture)
        totals = plain_maxn(child, search)
        if not best or reward(totals) > reward(best):
            best = totals
    return best


@pytest.mark.parametrize("table", ["scopa_3", "scopa_4"])
@pytest.mark.parametrize("seed", range(4))
def test_maxn_search_matches_plain_maxn(table: str, seed: int) -> None:
    rules = Rules(napola=seed % 2 == 1)
    deal = _near_the_end(table, rules, seed, 300 + seed)
    search = AlphaBeta(rules, MoveValuer(rules))
    totals = search.totals(deal, 40)
    assert totals == tuple(100 * t for t in plain_maxn(deal, search))
    if table == "scopa_4":  # two sides: each playing for itself is minimax
        assert totals[0] - totals[1] == search.value(deal, 40, 0)


def test_maxn_and_paranoid_differ_at_three_sides() -> None:
    """At ``scopa_3`` the two searches disagree on some positions: the paranoid search has the
    other two players conspire against seat 0, max-n has each play for itself."""
    rules = Rules()
    differ = 0
    for seed in range(6):
        deal = _near_the_end("scopa_3", rules, seed, 400 + seed)
        search = AlphaBeta(rules, MoveValuer(rules))
        totals = search.totals(deal, 40)
        maxn = _for_side(totals, (0, 0, 0), 0)  # seat 0's reward, as the player reads it
        paranoid = search.value(deal, 40, 0)
        assert paranoid <= maxn  # the paranoid value is seat 0's worst case
        differ += paranoid < maxn
    assert differ


def test_unknown_search_is_refused() -> None:
    with pytest.raises(ValueError, match="search must be one of maxn, paranoid"):
        AlphaBetaAgent(search="selfish")


def _near_the_end(table: str, rules: Rules, seed: int, play_seed: int) -> Deal:
    """A deal of ``table`` played at random until seven plays are left, seat 0 to move."""
    deal = Deal.new(np.random.default_rng(seed), rules=rules, kind=table)
    rng = np.random.default_rng(play_seed)
    while _plays_left(deal) > 7 or deal.current_player != 0:
        moves = deal.legal_moves()
        deal.play(moves[rng.integers(len(moves))])
    return deal


def _plays_left(deal: Deal) -> int:
    return sum(len(hand) for hand in deal.hands) + len(deal.stock)


@pytest.mark.parametrize(
    ("table", "expected"),
    [("scopa", (32, 3)), ("scopa_3", (32, 4)), ("scopa_4", (32, 5)), ("scopa_6", (32, 7)),
     ("scopone", (8, 5)), ("scopone_scientifico", (8, 5))],
)  # fmt: skip
def test_the_default_search_reaches_my_next_move_at_every_table(table, expected) -> None:
    info = InfoState.from_observation(choice_at(table)["observation"])  # the first rounds
    assert AlphaBetaAgent().settings(info) == expected
    assert AlphaBetaAgent(samples=5, depth=2).settings(info) == (5, 2)


@pytest.mark.parametrize("preset", ["scopa", "scopa_a_quindici", "asso_pigliatutto", "napola"])
def test_plays_only_legal_actions(preset: str) -> None:
    rules = Rules.preset(preset)
    players = {
        "player_0": AlphaBetaAgent(rules, samples=3),
        "player_1": make_agent("greedy", rules=rules),
    }
    play_deals(players, rules=rules, seeds=range(3))
    players = {name: AlphaBetaAgent(rules, samples=2, depth=2) for name in scopa_v0.AGENTS}
    play_deals(players, rules=rules, seeds=range(3, 5))


def test_reproducible_from_its_seed() -> None:
    rules = Rules()

    def actions(seed: int) -> list[int]:
        players = {name: AlphaBetaAgent(rules, samples=2, seed=seed) for name in scopa_v0.AGENTS}
        return play_deals(players, rules=rules, seeds=range(2))

    assert actions(0) == actions(0)


def test_plays_a_whole_match_in_scopa_play() -> None:
    assert_plays_a_match(make_agent("alphabeta", seed=0, samples=4))


def test_act_batch_plays_each_row() -> None:
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    rows = [observe_deal(deal), observe_deal(Deal.new(np.random.default_rng(3)))]
    actions = AlphaBetaAgent(seed=0).act_batch(
        np.stack([r["observation"] for r in rows]), np.stack([r["action_mask"] for r in rows])
    )
    assert actions[0] == parse_card("5B")
    assert rows[1]["action_mask"][actions[1]] == 1


def test_rejects_a_search_without_samples_or_depth() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        AlphaBetaAgent(samples=0)
    with pytest.raises(ValueError, match="at least 1"):
        AlphaBetaAgent(depth=0)
