"""The learner-centric vector environments: Gymnasium ``VectorEnv`` and SB3 ``VecEnv``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, VectorEnv

from scopa_env.batched import random_legal_actions
from scopa_env.observation import OBS_SIZE, plane
from scopa_env.tables import TABLES
from scopa_env.vector_env import LearnerBatch, ScopaVecEnv, ScopaVectorEnv


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    keys = np.where(masks != 0, rng.random(masks.shape), -1.0)
    return keys.argmax(axis=1)


def test_gymnasium_vector_env_api() -> None:
    env = ScopaVectorEnv(8, seed=0)
    assert isinstance(env, VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.observation_space.shape == (8, OBS_SIZE)
    assert env.single_action_space.n == 80
    obs, info = env.reset(seed=1)
    assert obs.shape == (8, OBS_SIZE) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(info["action_mask"] != 0, env.action_masks())
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, rewards, terminated, truncated, info = env.step(
            random_actions(info["action_mask"], rng)
        )
        assert rewards.shape == terminated.shape == truncated.shape == (8,)
        assert rewards.dtype == np.float32 and terminated.dtype == bool


def test_learner_always_acts_and_only_sees_its_seat() -> None:
    batch = LearnerBatch(16, seed=2, seat="alternate")
    batch.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(300):
        assert (batch.engine.player == batch.seat).all()
        # The hand plane is the learner's: the engine's mask in the play phase is that hand.
        playing = batch.engine.state.pending == 40
        hands = plane(batch.obs, "hand")[playing]
        np.testing.assert_array_equal(hands != 0, batch.mask[playing, :40] != 0)
        cards, offset = batch.engine.legal_actions_bits()
        batch.step(random_legal_actions(cards, rng) + offset)


def test_episodes_end_with_final_obs_and_the_learners_reward() -> None:
    env = ScopaVectorEnv(16, rules={"target": 3}, seed=3)
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(2)
    seats_before = info["seat"]
    ended = 0
    for _ in range(300):
        obs, rewards, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
        assert not rewards[~terminated].any()
        if terminated.any():
            ended += int(terminated.sum())
            assert (info["_final_obs"] == terminated).all()
            for g in np.flatnonzero(terminated):
                final = info["final_obs"][g]
                assert final.shape == (OBS_SIZE,) and final[362] == 0  # stock empty
                assert obs[g, 362] == 1  # a fresh deal
            outcome = info["final_info"]["outcome"][terminated]
            np.testing.assert_array_equal(rewards[terminated], outcome)
            assert (info["seat"][terminated] != seats_before[terminated]).all()
        seats_before = info["seat"]
    assert ended >= 10


def test_points_rewards_sum_to_the_learners_margin() -> None:
    batch = LearnerBatch(8, episode="deal", reward="points", seat=1, seed=4)
    batch.reset(seed=4)
    rng = np.random.default_rng(3)
    total = np.zeros(8)
    for _ in range(200):
        cards, offset = batch.engine.legal_actions_bits()
        rewards, done = batch.step(random_legal_actions(cards, rng) + offset)
        total += rewards
        assert (batch.seat == 1).all()
        # won is +1/-1/0 by the deal's points, so it agrees in sign with the margin.
        assert (np.sign(total[done]) == batch.won[done]).all()
        total[done] = 0


@pytest.mark.parametrize("opponent", ["random", "greedy", "callable"])
def test_opponents(opponent: str) -> None:
    calls = []

    def first_legal(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        calls.append(obs.shape[0])
        return masks.argmax(axis=1)

    chosen = first_legal if opponent == "callable" else opponent
    env = ScopaVectorEnv(6, opponent=chosen, seed=5)
    _, info = env.reset(seed=5)
    rng = np.random.default_rng(4)
    for _ in range(60):
        _, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
    if opponent == "callable":
        assert calls and max(calls) <= 6


def test_seeded_runs_repeat() -> None:
    runs = []
    for _ in range(2):
        env = ScopaVectorEnv(4, seed=6)
        obs, info = env.reset(seed=7)
        rng = np.random.default_rng(0)
        trace = [obs]
        for _ in range(40):
            obs, *_, info = env.step(random_actions(info["action_mask"], rng))
            trace.append(obs)
        runs.append(np.stack(trace))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        ScopaVectorEnv(4, seat=2)
    with pytest.raises(ValueError):
        ScopaVectorEnv(4, opponent=42)


# Stable-Baselines3 -------------------------------------------------------------------------


def test_sb3_vec_env_checks() -> None:
    pytest.importorskip("stable_baselines3")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecCheckNan, VecEnv, VecMonitor

    venv = ScopaVecEnv(6, seed=8)
    assert isinstance(venv, VecEnv)
    assert venv.has_attr("action_masks") and is_masking_supported(venv)
    obs = venv.reset()
    assert obs.shape == (6, OBS_SIZE)
    masks = get_action_masks(venv)
    assert masks.shape == (6, 80) and masks.dtype == bool
    assert len(venv.env_method("action_masks", indices=[0, 2])) == 2
    wrapped = VecMonitor(VecCheckNan(venv, raise_exception=True))
    assert is_masking_supported(wrapped)
    rng = np.random.default_rng(5)
    episodes = 0
    for _ in range(400):
        actions = random_actions(get_action_masks(wrapped), rng)
        obs, rewards, dones, infos = wrapped.step(actions)
        assert obs.shape == (6, OBS_SIZE) and len(infos) == 6
        for done, info in zip(dones, infos, strict=True):
            if done:
                episodes += 1
                assert info["terminal_observation"].shape == (OBS_SIZE,)
                assert "episode" in info
    assert episodes >= 2


def test_maskable_ppo_learns_a_few_steps_and_plays_as_opponent() -> None:
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from scopa_env.vector_env import sb3_opponent

    torch.set_num_threads(1)
    venv = ScopaVecEnv(4, episode="deal", reward="points", seed=9)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    frozen = ScopaVectorEnv(4, opponent=sb3_opponent(model), seed=10)
    _, info = frozen.reset(seed=10)
    rng = np.random.default_rng(6)
    for _ in range(30):
        _, _, _, _, info = frozen.step(random_actions(info["action_mask"], rng))


def test_an_opponent_built_for_other_rules_is_refused() -> None:
    from agents import GreedyAgent

    with pytest.raises(ValueError, match="other rules than the environment's"):
        ScopaVectorEnv(4, rules="scopa_d_assi", opponent=GreedyAgent())
    env = ScopaVectorEnv(4, rules="scopa_d_assi", opponent=GreedyAgent("scopa_d_assi"), seed=0)
    env.reset(seed=0)
    env.close()


# Every table ----------------------------------------------------------------------------------

TABLE_NAMES = tuple(TABLES)


class SeatCheckingOpponent:
    """Plays the first legal action, checking it is only asked where an opponent is to act."""

    def __init__(self) -> None:
        self.batch: LearnerBatch | None = None
        self.seats: set[int] = set()

    def act_games(self, games: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        assert self.batch is not None
        player = self.batch.engine.player[games]
        assert (player % self.batch.sides != self.batch.seat[games]).all()
        np.testing.assert_array_equal(obs, self.batch.engine.obs[games])
        self.seats.update(player.tolist())
        return masks.argmax(axis=1)


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_the_learner_holds_its_sides_seats_at_every_table(table: str) -> None:
    """Free-for-all: one seat; partnerships: every seat of its side, the others opponents'."""
    kind = TABLES[table]
    opponent = SeatCheckingOpponent()
    batch = LearnerBatch(12, table=table, opponent=opponent, seed=1, rules={"target": 4})
    opponent.batch = batch
    batch.reset(seed=1)
    assert batch.obs.shape == (12, batch.engine.obs_size)
    rng = np.random.default_rng(0)
    learner_seats: set[tuple[int, int]] = set()
    sides_played = {(g, int(batch.seat[g])) for g in range(12)}
    ended = 0
    for _ in range(250):
        player = batch.engine.player
        assert (player % kind.sides == batch.seat).all()  # every transition is the learner's
        learner_seats.update(zip(batch.seat.tolist(), player.tolist(), strict=True))
        cards, offset = batch.engine.legal_actions_bits()
        rewards, done = batch.step(random_legal_actions(cards, rng) + offset)
        ended += int(done.sum())
        sides_played.update((g, int(batch.seat[g])) for g in range(12))
    for side in range(kind.sides):  # the learner played every seat of each side it held
        assert {seat for s, seat in learner_seats if s == side} == set(kind.seats_of(side))
    assert opponent.seats == set(range(kind.players))  # each seat was also an opponent's
    assert {side for _, side in sides_played} == set(range(kind.sides))  # sides rotate
    assert ended >= 12


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_terminal_rewards_are_the_learners_sides(table: str) -> None:
    """Match rewards: +1 to the winning side, and a side that lost receives 0 minus the mean of
    the others (one of them 1): -1 with two sides, -1/2 with three; nothing before the end."""
    sides = TABLES[table].sides
    env = ScopaVectorEnv(10, table=table, rules={"target": 3}, seed=2)
    _, info = env.reset(seed=2)
    rng = np.random.default_rng(1)
    outcomes = set()
    for _ in range(200):
        obs, rewards, terminated, _, info = env.step(random_actions(info["action_mask"], rng))
        assert obs.shape == (10, env.batch.engine.obs_size) and env.observation_space.contains(obs)
        assert not rewards[~terminated].any()
        outcome = info["final_info"]["outcome"][terminated] if terminated.any() else []
        for reward, won in zip(rewards[terminated], outcome, strict=True):
            assert reward == (1.0 if won == 1 else -1 / (sides - 1))
            outcomes.add(float(won))
    assert outcomes == {1.0, -1.0}


@pytest.mark.parametrize("table", ["scopa_3", "scopa_4", "scopone"])
def test_points_rewards_are_the_sides_margin_over_the_others_mean(table: str) -> None:
    """Deal episodes, points: the learner's reward is its side's deal points minus the mean of
    the other sides', read from the engine's own deal scores."""
    batch = LearnerBatch(8, table=table, episode="deal", reward="points", seat=1, seed=3)
    batch.reset(seed=3)
    engine = batch.engine
    sides = batch.sides
    rng = np.random.default_rng(2)
    checked = 0
    deals = []
    step, step_games = engine.step, engine.step_games

    def check(result: Any) -> Any:
        if result.infos:
            ended = result.infos["_deal_score"]
            totals = result.infos["deal_score"][ended, :, -1].astype(float)
            margin = totals[:, 1] - (totals.sum(axis=1) - totals[:, 1]) / (sides - 1)
            np.testing.assert_array_equal(result.rewards[ended, 1], margin)
            deals.append(int(ended.sum()))
        return result

    engine.step = lambda actions: check(step(actions))  # type: ignore[method-assign]
    engine.step_games = lambda g, a: check(step_games(g, a))  # type: ignore[method-assign]
    for _ in range(150):
        cards, offset = engine.legal_actions_bits()
        rewards, done = batch.step(random_legal_actions(cards, rng) + offset)
        assert (rewards[done & (batch.won == 1)] > 0).all()  # ahead of every other side
        if sides == 2:
            assert (np.sign(rewards[done]) == batch.won[done]).all()
        checked += int(done.sum())
    assert checked >= 8 and sum(deals) >= checked  # step_games may call step: counted twice


def test_a_named_player_plays_every_opponent_seat() -> None:
    env = ScopaVectorEnv(6, table="scopa_4", opponent="heuristic", seed=4)
    _, info = env.reset(seed=4)
    rng = np.random.default_rng(3)
    for _ in range(40):
        _, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
    with pytest.raises(ValueError, match="first seat of a side"):
        ScopaVectorEnv(4, table="scopa_4", seat=2)
    assert ScopaVectorEnv(4, table="scopa_3", seat=2).batch.seat.tolist() == [2] * 4


def test_sb3_vec_env_at_a_partnership_table() -> None:
    pytest.importorskip("stable_baselines3")
    from sb3_contrib.common.maskable.utils import get_action_masks

    venv = ScopaVecEnv(4, table="scopa_6", seed=8)
    size = venv.batch.engine.obs_size
    assert venv.observation_space.shape == (size,)
    obs = venv.reset()
    assert obs.shape == (4, size)
    rng = np.random.default_rng(5)
    episodes = 0
    for _ in range(150):
        obs, rewards, dones, infos = venv.step(random_actions(get_action_masks(venv), rng))
        for done, info in zip(dones, infos, strict=True):
            if done:
                episodes += 1
                assert info["terminal_observation"].shape == (size,)
    assert episodes >= 1
