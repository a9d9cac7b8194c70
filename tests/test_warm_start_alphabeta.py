"""The alpha-beta player as the cloning teacher: its values of every legal action, in points per
deal, on positions worked out by hand, and in a collection through the training environment; a
teacher that follows the deal (``infer``) follows each game of a batch with a fork of its own."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SEVENS_AND_COINS, last_round, observe_deal

from agents import AlphaBetaAgent, make_agent
from agents.inference import PlayTracker
from scopa_env import scopa_v0
from scopa_env.cards import parse_card
from scopa_env.engine import Deal
from scopa_env.info_state import InfoState
from training.config import load_config
from training.train import warm_start_task
from training.warm_start import Decisions, MoveValueTeacher, collect, search_regret, with_values


def values_of(deal: Deal) -> tuple[int, np.ndarray]:
    obs = observe_deal(deal)
    teacher = MoveValueTeacher(AlphaBetaAgent(seed=0))
    actions, values = teacher.act_batch_with_values(
        obs["observation"][None], obs["action_mask"][None]
    )
    return int(actions[0]), values[0]


def test_last_round_values_are_the_points_of_each_move() -> None:
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    # 5B takes 3C+2S, a scopa, and nothing scores after it: 4 + 1 points to 0. Trailing AB
    # leaves 3+2+1 for 6S to sweep: 4 points to 1 (6S's best reply).
    action, values = values_of(deal)
    expected = np.full(80, np.nan, np.float32)
    expected[parse_card("5B")], expected[parse_card("AB")] = 5.0, 3.0
    np.testing.assert_array_equal(values, expected)
    assert action == parse_card("5B")
    decisions = Decisions(
        np.zeros((1, 1), np.float32), ~np.isnan(values)[None], np.array([action]),
        np.zeros(1, np.float32), values[None],
    )  # fmt: skip
    regret = search_regret(decisions)[0]
    assert regret[parse_card("5B")] == 0.0 and regret[parse_card("AB")] == 2.0


def test_a_card_with_two_captures_is_worth_its_best_one() -> None:
    pile = "AD 2D 3D 4D 5D 6D JD QD KD AC 2C 3C 5C 6C 7C JC QC AS AB 2B 3B"
    deal = last_round("KC", "7B", "7D 3S 6B 4C", pile)
    # Cards, coins and primiera are mine (3 points). KC takes 7D+3S, the settebello, and the
    # opponent's 7B then captures nothing: 4 points to 0. KC with 6B+4C lets 7B take 7D: 3 to 1.
    action, values = values_of(deal)
    assert action == parse_card("KC")
    assert values[parse_card("KC")] == 4.0
    assert np.isnan(np.delete(values, parse_card("KC"))).all()


def test_a_single_legal_move_is_not_valued() -> None:
    deal = last_round("5B", "6S", "3C 2S", SEVENS_AND_COINS)  # 5B must take 3C+2S
    action, values = values_of(deal)
    assert action == parse_card("5B") and np.isnan(values).all()


def test_collected_decisions_carry_the_values_the_teacher_chose_by() -> None:
    config = load_config("configs/full_alphabeta.yaml")
    env, teacher, _ = warm_start_task(config, 0)
    assert isinstance(teacher, AlphaBetaAgent) and isinstance(
        with_values(teacher), MoveValueTeacher
    )
    data = collect(env, teacher, 300, gamma=1.0)
    assert data.values is not None and len(data.values) == len(data.actions) > 0
    valued = ~np.isnan(data.values)
    choice = data.masks.sum(axis=1) > 1
    rows = valued.any(axis=1)
    # Every decision with a choice of card is valued, on its legal actions only.
    assert rows[choice & (data.masks[:, :40].sum(axis=1) > 1)].all()
    assert not (valued & ~data.masks).any()
    assert (valued[rows] == data.masks[rows]).all()
    # The teacher's own move has no regret; the others' are points, a deal being worth a few.
    regret = search_regret(data)
    assert (regret[np.arange(len(regret)), data.actions] == 0).all()
    assert regret.max() > 0 and np.nanmax(np.abs(data.values)) < 12


def seat_observations(seed: int) -> list[dict[str, np.ndarray]]:
    """Seat 0's observations at its decisions in a deal where both seats play greedy."""
    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=seed)
    greedy = make_agent("greedy")
    seen = []
    while not env.terminations[env.agent_selection]:
        observation = env.observe(env.agent_selection)
        if env.agent_selection == "player_0":
            seen.append(observation)
        env.step(greedy.act(observation))
    return seen


def test_a_teacher_that_follows_the_deal_follows_each_game_of_the_batch() -> None:
    games = [seat_observations(seed) for seed in (3, 4)]
    steps = min(map(len, games))
    agent = AlphaBetaAgent(samples=4, infer=True, seed=0)
    assert agent.follows_deal and not AlphaBetaAgent().follows_deal
    teacher = MoveValueTeacher(agent, rows=2)
    alone = [PlayTracker(), PlayTracker()]
    for t in range(steps):
        rows = [game[t] for game in games]
        obs = np.stack([row["observation"] for row in rows])
        masks = np.stack([row["action_mask"] for row in rows])
        actions, _ = teacher.act_batch_with_values(obs, masks)
        assert all(masks[i, a] for i, a in enumerate(actions))
        for tracker, row in zip(alone, rows, strict=True):
            tracker.observe(InfoState.from_observation(row["observation"]))
    # Each fork saw its game's observations alone: its tracker rebuilt the same plays as one
    # that watched that game by itself, and found some.
    for fork, tracker in zip(teacher.players, alone, strict=True):
        assert fork.tracker.plays == tracker.plays and tracker.plays
        assert fork.model is agent.model and fork.tracker is not agent.tracker
    with pytest.raises(ValueError, match="follows 2 games, one a row: got 1 rows"):
        teacher.act_batch_with_values(obs[:1], masks[:1])


def test_line_search_forks_keep_their_own_history() -> None:
    agent = make_agent("alphabeta_value", seed=0)
    fork = agent.fork(1)
    assert agent.follows_deal and fork.value is agent.value
    assert fork.history is not agent.history and fork.tracker is not agent.tracker
    assert not make_agent("alphabeta_value", infer=False).follows_deal
    assert make_agent("guided", infer=1.0).follows_deal and not make_agent("guided").follows_deal
