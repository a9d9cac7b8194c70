"""The duplicate-deal baseline of the rollouts (``training.deal_baseline``, issue 16).

Every deal a training game starts is played again by a reference player in the learner's
seats, from the same deck, against the same opponent; the learner's reward is its points minus
the shadow's. Checked against the AEC environment playing each deck by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import TINY

from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from scopa_env import scopa_v0
from scopa_env.tables import resolve_table
from training.config import ConfigError, validate
from training.selfplay import OpponentPool, PoolVecEnv


def _env(table: str, opponent: str, n: int = 16, **kwargs: Any) -> PoolVecEnv:
    pool = OpponentPool({opponent: 1.0}, 1, seed=0)
    baselines = {
        "random": RandomAgent(seed=1),
        "greedy": GreedyAgent(),
        "heuristic": HeuristicAgent(),
    }
    env = PoolVecEnv(n, 2, pool, baselines, table=table, seed=5, deal_baseline="start", **kwargs)
    env.draw_opponents()
    return env


def _by_hand(table: str, deck: np.ndarray, first: int, side: int, mine: Any, theirs: Any) -> float:
    """The points of ``side`` in one deal of ``deck`` in the AEC environment, ``mine`` in its
    seats and ``theirs`` in the others."""
    env = scopa_v0.raw_env(table=table, episode="deal", reward="points")
    env.reset(options={"deck": deck.tolist(), "first_player": first})
    sides = resolve_table(table).sides
    seats = {name: i for i, name in enumerate(env.possible_agents)}
    me = env.possible_agents[side]
    total = 0.0
    while not env.terminations[env.agent_selection]:
        agent = env.agent_selection
        player = mine if seats[agent] % sides == side else theirs
        env.step(player.act(env.observe(agent)))
        total += env.rewards[me]
    return total


@pytest.mark.parametrize("table", ["scopa", "scopa_4"])
def test_each_deals_reward_is_its_points_minus_the_shadow_of_its_deck_played_by_hand(
    table: str,
) -> None:
    """The shadow replays exactly the training game's deck, first player and seats, against
    its opponent: the reward of every deal is the learner's points minus those of the AEC
    environment's deal of that deck with the reference in the learner's seats."""
    env = _env(table, "greedy", n=8)
    reference = HeuristicAgent()
    env.set_reference(reference)
    learner = RandomAgent(seed=3)
    obs = env.reset()
    state = env.engine.state
    deals = {g: (state.deck[g].copy(), int(state.first[g]), int(env.seat[g])) for g in range(8)}
    checked, shadows = 0, []
    for _ in range(60):
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, env.action_masks()))
        for g in np.flatnonzero(dones).tolist():
            deck, first, side = deals[g]
            shadow = _by_hand(table, deck, first, side, reference, GreedyAgent())
            assert rewards[g] == infos[g]["episode"]["r"] - shadow
            shadows.append(shadow)
            checked += 1
            deals[g] = (state.deck[g].copy(), int(state.first[g]), int(env.seat[g]))
    assert checked >= 16
    assert len(set(shadows)) > 1 and len({deal[2] for deal in deals.values()}) == 2
    ((kind, (mean, count)),) = env.take_baseline_results().items()
    assert (kind, count) == ("greedy", checked) and mean == pytest.approx(np.mean(shadows))


def test_a_learner_playing_as_the_reference_gets_zero_for_every_deal() -> None:
    """Against a deterministic opponent the shadow of a learner that plays as the reference is
    the same game: every reward is zero, while the statistics keep the learner's own points."""
    env = _env("scopa", "heuristic", n=32)
    env.set_reference(GreedyAgent())
    learner = GreedyAgent()
    obs = env.reset()
    rewards_seen, points = [], []
    for _ in range(100):
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, env.action_masks()))
        rewards_seen += rewards.tolist()
        points += [infos[g]["episode"]["r"] for g in np.flatnonzero(dones)]
    assert len(points) >= 100
    assert not any(rewards_seen)
    assert np.abs(points).mean() > 1  # the deals themselves are far from even
    (mean, count) = env.take_results()["heuristic"]
    assert count == len(points) and mean == pytest.approx(np.mean(points))


def test_the_shadows_of_a_restart_do_not_depend_on_what_came_before() -> None:
    """A restart deals afresh and reseeds the shadows' opponents: two environments restarted
    from the same seed give the same rewards whatever they played before (so a resumed run
    continues as the unstopped one)."""
    runs = []
    for before in (0, 37):
        env = _env("scopa", "random", n=16)
        env.set_reference(HeuristicAgent())
        learner = GreedyAgent()
        obs = env.reset()
        for _ in range(before):
            obs, *_ = env.step(learner.act_batch(obs, env.action_masks()))
        obs = env.restart(11)
        rewards = []
        for _ in range(50):
            obs, r, *_ = env.step(learner.act_batch(obs, env.action_masks()))
            rewards.append(r)
        runs.append(np.array(rewards))
    assert np.array_equal(runs[0], runs[1]) and runs[0].any()


def test_without_a_reference_the_environment_pays_the_points_alone() -> None:
    env = _env("scopa", "greedy", n=8)
    obs = env.reset()
    for _ in range(40):
        obs, rewards, dones, infos = env.step(GreedyAgent().act_batch(obs, env.action_masks()))
        for g in np.flatnonzero(dones):
            assert rewards[g] == infos[g]["episode"]["r"]
    assert env.take_baseline_results() == {}


def test_the_pool_environment_refuses_a_baseline_it_cannot_play() -> None:
    pool = OpponentPool({"random": 1.0}, 1, seed=0)
    baselines = {"random": RandomAgent(seed=1)}
    with pytest.raises(ValueError, match="needs episode='deal'"):
        PoolVecEnv(8, 2, pool, baselines, episode="match", deal_baseline="start")
    with pytest.raises(ValueError, match="deal_baseline must be 'start' or None"):
        PoolVecEnv(8, 2, pool, baselines, deal_baseline="clone")
    with pytest.raises(ValueError, match="baseline_play must be 'argmax' or 'sample'"):
        PoolVecEnv(8, 2, pool, baselines, deal_baseline="start", baseline_play="mean")
    with pytest.raises(RuntimeError, match="no deal baseline"):
        PoolVecEnv(8, 2, pool, baselines).set_reference(GreedyAgent())


@pytest.mark.parametrize(
    ("data", "key", "reason"),
    [
        ({"selfplay": {"baseline": "clone"}}, "selfplay.baseline", "'start'"),
        ({"selfplay": {"baseline_play": "mean"}}, "selfplay.baseline_play", "'argmax' or"),
        (
            {"selfplay": {"baseline": "start"}, "warm_start": {"teacher": "greedy"},
             "episode": "match"},
            "config",
            "selfplay.baseline='start' replays each deal's deck, which needs episode: deal",
        ),
        (
            {"selfplay": {"baseline": "start"}},
            "config",
            "plays the run's start, but warm_start.teacher and warm_start.init_from are null",
        ),
        (
            {
                "selfplay": {"baseline": "start"},
                "ppo": {"oracle_critic": True},
                "warm_start": {"teacher": "greedy", "critic_samples": 64},
            },
            "config",
            "warm_start.critic_samples fits the critic to returns without the deal baseline",
        ),
    ],
)  # fmt: skip
def test_bad_baseline_settings_are_refused_naming_the_key(
    data: dict, key: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as error:
        validate(data, "test.yaml")
    assert f"{key}: " in str(error.value) and reason in str(error.value), str(error.value)


def test_a_tiny_run_with_the_baseline_reports_it_and_the_learners_own_points(tmp_path) -> None:
    from evaluation.records import read_csv
    from training.train import train

    selfplay = {**TINY["selfplay"], "baseline": "start"}
    config = validate({**TINY, "total_timesteps": 128, "selfplay": selfplay})
    train(config, tmp_path / "run", progress=False)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "minus the points of the deal baseline (`start`, argmax)" in report
    assert [row["update"] for row in read_csv(tmp_path / "run" / "evals.csv")] == ["0", "1"]
