"""ISMCTS with a learnt value at its leaves: the mix's limits (none: ISMCTS itself), the leaf
reward as the weighted sum of value and rollout, the last round left to the rollout, a
position worked out by hand, legal and reproducible play, bad options."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    SEVENS_AND_COINS,
    assert_plays_a_match,
    choice_at,
    last_round,
    my_turn,
    observe_deal,
    opening_trail,
    play_deals,
    settebello_sweep,
)

from agents import ISMCTSAgent, ValueISMCTSAgent, make_agent
from agents.alphabeta import AlphaBeta
from agents.determinize import Determinizer
from agents.inference import InferredDeterminizer
from agents.ismcts import side_rewards
from agents.seats import SeatView
from scopa_env.cards import parse_card
from scopa_env.errors import CheckpointError, PlayerError
from scopa_env.info_state import InfoState


def choices() -> list[dict[str, np.ndarray]]:
    rows = [observe_deal(my_turn(seed, plays)) for seed in range(5) for plays in (0, 6, 13, 20)]
    return [row for row in rows if row["action_mask"].sum() > 1]


def test_without_the_value_it_is_ismcts_move_for_move() -> None:
    plain = ISMCTSAgent(iterations=40, seed=3)
    unvalued = ValueISMCTSAgent(iterations=40, mix=0.0, seed=3)
    rows = choices()
    assert len(rows) > 10
    for row in rows:
        assert unvalued.act(row) == plain.act(row)


def test_the_value_changes_some_choices() -> None:
    plain = ISMCTSAgent(iterations=40, seed=3)
    valued = ValueISMCTSAgent(iterations=40, mix=1.0, seed=3)
    assert any(valued.act(row) != plain.act(row) for row in choices())


@pytest.mark.parametrize("mix", [0.25, 0.5, 1.0])
def test_a_leaf_is_the_mix_of_the_value_and_the_rollout(mix: float) -> None:
    player = ValueISMCTSAgent(iterations=10, mix=mix, seed=0)
    rollout = ISMCTSAgent(iterations=10, seed=0)
    for plays in (3, 10, 17):  # seat 0 or seat 1 to move, cards left in the stock
        deal = my_turn(1, plays)
        deal.play(deal.legal_moves()[0])
        assert deal.stock
        table = deal.masks["table"]
        plies = sum(len(h) for h in deal.hands) + len(deal.stock)
        value = player.value(deal) / player.reward_scale
        value = value if deal.current_player == 0 else -value
        played = deal.copy()
        rollout._rollout(played, table, plies, rollout._random, rollout.valuer)
        result = side_rewards(played, rollout.reward_scale)[0]
        expected = mix * value + (1 - mix) * result
        got = player.leaf_rewards(deal.copy(), table, plies, player.valuer)
        assert got == pytest.approx([expected, -expected])


def test_the_last_round_is_left_to_the_rollout() -> None:
    deal = last_round("7D 2C", "KB 5S", "3S 4S", "AC")
    player = ValueISMCTSAgent(iterations=10, mix=1.0, seed=0)
    plain = ISMCTSAgent(iterations=10, seed=0)
    table, plies = deal.masks["table"], 4
    assert player.leaf_rewards(deal.copy(), table, plies, player.valuer) == plain.leaf_rewards(
        deal.copy(), table, plies, plain.valuer
    )


def test_the_exact_last_round_values_a_leaf_by_solving_it() -> None:
    # SEVENS_AND_COINS gives seat 0 four points whatever happens. 5B takes 3C+2S, a scopa,
    # and nothing scores after it: 5 points to 0 for seat 0, to move (hand-worked in
    # test_fast_search). The search's memo is made for each decision, as in search().
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    player = ValueISMCTSAgent(iterations=10, exact_last_round=True, seed=0)
    player._exact = AlphaBeta(player.rules, player.valuer)
    rewards = player.leaf_rewards(deal.copy(), deal.masks["table"], 4, player.valuer)
    assert rewards == [5 / player.reward_scale, -5 / player.reward_scale]
    # Seat 1 to move after seat 0 trails AB: 6S sweeps 3C+2S+AB, 4 points to 1 for seat 0.
    deal.play_unchecked(parse_card("AB"), 0)
    rewards = player.leaf_rewards(deal.copy(), deal.masks["table"], 3, player.valuer)
    assert rewards == [3 / player.reward_scale, -3 / player.reward_scale]
    assert ValueISMCTSAgent(iterations=30, exact_last_round=True, seed=0).act(
        observe_deal(last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS))
    ) == parse_card("5B")


def test_the_exact_last_round_solves_the_root_without_searching() -> None:
    # SEVENS_AND_COINS fixes seat 0's four points. 4C must take 4S, and the opponent's 6S
    # then sweeps 6B: 4 points to 1. Trailing JD leaves 4S+6B+JD, which 6S cannot sweep, and
    # 4C takes 4S next: 4 points to 0. The solver trails; no iteration is spent.
    deal = last_round("4C JD", "6S QD", "4S 6B", SEVENS_AND_COINS)
    player = ValueISMCTSAgent(iterations=1, exact_last_round=True, seed=0)
    assert player.act(observe_deal(deal)) == parse_card("JD")
    assert player.last_iterations == 0
    searched = ValueISMCTSAgent(iterations=40, seed=0)
    searched.act(observe_deal(deal))
    assert searched.last_iterations > 0


def test_infer_weighs_the_deals_by_the_opponents_plays_this_round() -> None:
    # The opponent trailed 2B onto 7S 5C 3S JB: with inference the searched deals come from
    # hands weighed by that play; before any play of the round, and without inference, uniform.
    deal, _ = opening_trail()
    observation = observe_deal(deal)
    info = InfoState.from_observation(observation["observation"])
    view = SeatView.from_info(info, observation["observation"])
    inferring = ValueISMCTSAgent(iterations=30, infer=True, seed=0)
    inferring.observe(info)
    assert type(inferring.determinizer(view)) is InferredDeterminizer
    assert inferring.act(observation) in np.flatnonzero(observation["action_mask"])
    plain = ValueISMCTSAgent(iterations=30, seed=0)
    plain.observe(info)
    assert type(plain.determinizer(view)) is Determinizer
    inferring.reset()
    assert type(inferring.determinizer(view)) is Determinizer


def test_mid_deal_sweeps_the_table_with_the_settebello() -> None:
    # 7D takes 3S+4S: the sweep and the settebello; KB or 2C would leave the table to take.
    for mix in (0.5, 1.0):
        player = ValueISMCTSAgent(iterations=100, mix=mix, seed=0)
        assert player.act(observe_deal(settebello_sweep())) == parse_card("7D")


def test_whole_deals_are_legal_and_reproducible_from_the_seed() -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": ValueISMCTSAgent(iterations=20, seed=seed),
            "player_1": ValueISMCTSAgent(iterations=20, mix=1.0, infer=True, seed=seed + 1),
        }
        return play_deals(players, range(2))

    assert actions(5) == actions(5)


def test_refuses_other_tables() -> None:
    with pytest.raises(PlayerError, match="two-player deals"):
        ValueISMCTSAgent(iterations=10, seed=0).act(choice_at("scopa_4"))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"iterations": 0}, PlayerError, "iterations"),
        ({"mix": 1.5}, PlayerError, "mix"),
        ({"candidates": 0}, PlayerError, "candidates"),
        ({"mix": "half"}, PlayerError, "'half'"),
        ({"value": "no/such/value.npz"}, CheckpointError, "no/such/value.npz"),
        ({"bogus": 1}, PlayerError, "bogus"),
    ],
)
def test_bad_options_are_refused(options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_agent("ismcts_value", **options)


def test_plays_a_whole_match_in_scopa_play() -> None:
    assert_plays_a_match(make_agent("ismcts_value", seed=0, iterations=20))
