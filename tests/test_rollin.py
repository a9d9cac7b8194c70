"""DAgger's roll-in (``warm_start.rollin``): another player plays the learner's seat and the
teacher is recorded where it played, in one environment and in the warm start's tasks."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY

from agents import AlphaBetaAgent, GreedyAgent, RandomAgent
from training.config import ConfigError, validate
from training.train import train, warm_start_task
from training.warm_start import RollIn, collect, collect_in_tasks


def _config(**warm_start: object) -> object:
    return validate({**TINY, "warm_start": {**TINY["warm_start"], **warm_start}})


def _disagree(a: np.ndarray, b: np.ndarray, masks: np.ndarray) -> bool:
    choice = masks.sum(axis=1) > 1
    return bool((a != b)[choice].any())


def test_the_rollin_plays_and_the_teacher_is_recorded_where_it_played() -> None:
    """The positions, masks and returns are those of the roll-in's own games (the same
    environment, seeds and player); the actions are the teacher's choices in them."""
    config = _config()
    env, _, _ = warm_start_task(config, 0)
    dagger = collect(env, GreedyAgent(), 400, 1.0, rollin=RandomAgent(seed=5))
    env, _, _ = warm_start_task(config, 0)
    alone = collect(env, RandomAgent(seed=5), 400, 1.0)

    for field in ("obs", "masks", "returns"):
        np.testing.assert_array_equal(getattr(dagger, field), getattr(alone, field))
    greedy = GreedyAgent().act_batch(dagger.obs, dagger.masks.astype(np.int8))
    np.testing.assert_array_equal(dagger.actions, greedy)
    assert dagger.masks[np.arange(len(dagger.actions)), dagger.actions].all()
    assert _disagree(dagger.actions, alone.actions, dagger.masks)  # the teacher is not the player


def test_a_rollin_that_follows_the_deal_plays_each_game_with_a_fork() -> None:
    searcher = AlphaBetaAgent(seed=0, samples=2, depth=1, infer=True)
    forks = RollIn(searcher, 4).players
    assert len(forks) == 4 and len({id(f) for f in forks}) == 4 and searcher not in forks
    greedy = GreedyAgent()
    assert RollIn(greedy, 4).players == [greedy]  # one player serves every game
    with pytest.raises(ValueError, match="follows 4 games, one a row: got 3 rows"):
        RollIn(searcher, 4).actions(np.zeros((3, 10), np.float32), np.ones((3, 80), bool))


def test_tasks_build_the_rollin_the_config_names(tmp_path: Path) -> None:
    config = _config(rollin="random", task_samples=64)
    make_task = partial(warm_start_task, config)
    _, teacher, rollin = make_task(0)
    assert isinstance(teacher, GreedyAgent) and isinstance(rollin, RandomAgent)
    assert warm_start_task(_config(), 0)[2] is None

    dagger = collect_in_tasks(make_task, 128, 64, 1.0, 1, tmp_path / "dagger")
    taught = collect_in_tasks(partial(warm_start_task, _config()), 128, 64, 1.0, 1, tmp_path / "t")
    greedy = GreedyAgent().act_batch(dagger.obs, dagger.masks.astype(np.int8))
    np.testing.assert_array_equal(dagger.actions, greedy)
    # The greedy player's own games reach other positions than the random player's.
    assert len(dagger.obs) != len(taught.obs) or not np.array_equal(dagger.obs, taught.obs)


def test_a_run_with_a_rollin_clones_the_teacher(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    quiet = {**TINY["eval"], "every": 0, "final_deals": 0}
    config = validate(
        {**TINY, "total_timesteps": 1, "eval": quiet,
         "warm_start": {**TINY["warm_start"], "rollin": "random", "workers": 1,
                        "task_samples": 128}}
    )  # fmt: skip
    train(config, tmp_path / "run", progress=False)
    assert "cloned greedy where random played on" in capsys.readouterr().out
    assert len(list((tmp_path / "run" / "warm_start").glob("task_*.npz"))) == 2


@pytest.mark.parametrize(
    ("warm_start", "reason"),
    [
        ({"rollin": "nobody"}, "rollin='nobody' is neither a player"),
        ({"rollin": "no/such/clone.zip"}, "nor a saved model's path"),
        ({"rollin": "random", "teacher": None}, "set warm_start.teacher"),
        ({"rollin_options": {"samples": 2}}, "rollin_options are given but there is no rollin"),
        ({"rollin": "alphabeta", "rollin_options": {"sampels": 2}}, "has no option 'sampels'"),
        ({"rollin": "alphabeta", "rollin_options": {"samples": "two"}}, "takes an integer"),
        ({"rollin": "random", "rollin_options": {"seed": 1}}, "seed comes from the run's config"),
    ],
)
def test_a_bad_rollin_is_refused_by_name(warm_start: dict, reason: str) -> None:
    with pytest.raises(ConfigError, match="rollin") as error:
        _config(**warm_start)
    assert reason in str(error.value)


def test_the_pool_can_hold_the_search_player_for_a_collection_against_it() -> None:
    """``ismcts`` in the pool: each group's opponent is the search player, so a roll-in's
    decisions are those of its games against ISMCTS."""
    from agents import ISMCTSAgent

    config = validate(
        {**TINY, "selfplay": {"groups": 2, "opponents": {"ismcts": 1.0}},
         "warm_start": {**TINY["warm_start"], "rollin": "random"}}
    )  # fmt: skip
    env, teacher, rollin = warm_start_task(config, 0)
    assert env.draw_opponents() == ["ismcts", "ismcts"]
    assert isinstance(env.baselines["ismcts"], ISMCTSAgent)
    dagger = collect(env, teacher, 48, 1.0, rollin)
    assert len(dagger.actions) > 0 and env.take_timers()[1] > 0  # the search did move
    # Without it in the pool the baselines are the three rule players, seeded as before.
    env, _, _ = warm_start_task(_config(), 0)
    assert sorted(env.baselines) == ["greedy", "heuristic", "random"]


def _pool(opponents: dict[str, float], **warm_start: object) -> object:
    return validate(
        {**TINY, "selfplay": {**TINY["selfplay"], "opponents": opponents},
         "warm_start": {**TINY["warm_start"], **warm_start}}
    )  # fmt: skip


def test_the_pool_member_rollin_is_another_copy_of_the_rollin_player() -> None:
    """Against ``rollin`` the games are those against the player it copies: greedy rolling in
    against itself meets the positions it meets against the pool's greedy."""
    itself = _pool({"rollin": 1.0}, rollin="greedy")
    env, teacher, rollin = warm_start_task(itself, 0)
    assert (
        isinstance(env.baselines["rollin"], GreedyAgent) and env.baselines["rollin"] is not rollin
    )
    against_itself = collect(env, teacher, 300, 1.0, rollin=rollin)
    env, teacher, rollin = warm_start_task(_pool({"greedy": 1.0}, rollin="greedy"), 0)
    against_greedy = collect(env, teacher, 300, 1.0, rollin=rollin)
    for field in ("obs", "masks", "actions", "returns"):
        np.testing.assert_array_equal(
            getattr(against_itself, field), getattr(against_greedy, field)
        )

    env, _, _ = warm_start_task(_pool({"rollin": 1.0}, rollin="random"), 0)
    assert isinstance(env.baselines["rollin"], RandomAgent)
    moved = collect(env, GreedyAgent(), 300, 1.0, rollin=RandomAgent(seed=5))
    n = min(len(moved.obs), len(against_greedy.obs))
    assert not np.array_equal(moved.obs[:n], against_greedy.obs[:n])  # the copy is random now


def test_the_pool_member_rollin_needs_a_rollin_that_plays_row_by_row() -> None:
    with pytest.raises(ConfigError, match="names 'rollin'.*warm_start.rollin is null"):
        _pool({"rollin": 1.0})
    follows = _pool(
        {"rollin": 1.0},
        teacher="alphabeta",
        rollin="alphabeta",
        rollin_options={"samples": 2, "depth": 1, "infer": True},
    )
    with pytest.raises(ConfigError, match="follows the deal.*cannot be an opponent"):
        warm_start_task(follows, 0)
