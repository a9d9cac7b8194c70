"""The recipes of ``docs/libraries.md``: each section's Python block runs here as written, then
the test checks what it built. Recipes that need a library outside the core dependencies are
``slow`` and skip, naming the library, where it is not installed (the ``integrations`` extra)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env

from scopa_env.environments import make_aec
from scopa_env.integrations.tianshou import uniform_infos
from scopa_env.observation import OBS_SIZE
from scopa_env.single_agent import ScopaSingleAgentEnv
from scopa_env.vector_env import ScopaVectorEnv

DOC = Path(__file__).resolve().parents[1] / "docs" / "libraries.md"
ENV_ID = "scopa_env/Scopa-v0"


def recipes() -> dict[str, str]:
    """The Python block of every ``## `` section of the page, by section title."""
    sections = re.split(r"^## ", DOC.read_text(), flags=re.MULTILINE)[1:]
    blocks = {}
    for section in sections:
        title, body = section.split("\n", 1)
        code = re.findall(r"^```python\n(.*?)^```", body, flags=re.MULTILINE | re.DOTALL)
        if code:
            assert len(code) == 1, f"section {title!r} has {len(code)} Python blocks"
            blocks[title.strip()] = code[0]
    return blocks


def run_recipe(title: str) -> dict[str, Any]:
    """Execute the recipe of section ``title``; its names, to check."""
    namespace: dict[str, Any] = {"__name__": f"recipe_{title}"}
    exec(compile(recipes()[title], f"{DOC}:{title}", "exec"), namespace)
    return namespace


TESTED = {
    "PettingZoo",
    "Gymnasium",
    "Stable-Baselines3 and sb3-contrib",
    "CleanRL-style loops",
    "Tianshou",
    "TorchRL",
    "SuperSuit",
    "OpenSpiel",
}
ROOT = DOC.parents[1]


def test_every_recipe_on_the_page_is_run_here() -> None:
    assert set(recipes()) == TESTED


def test_the_readme_table_names_tests_of_this_module() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## In other libraries", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`(test_\w+?)(\*?)`", section)
    assert len(named) >= len(TESTED)
    tests = [name for name in globals() if name.startswith("test_")]
    for name, wildcard in named:
        assert any(t.startswith(name) for t in tests) if wildcard else name in tests, name


# PettingZoo ---------------------------------------------------------------------------------


def test_pettingzoo_recipe() -> None:
    ns = run_recipe("PettingZoo")
    assert all(ns["env"].terminations.values()) and ns["env"].agents == []
    if hasattr(pettingzoo, "make"):
        assert ns["registered"].unwrapped.table.name == "scopone_scientifico"


def test_make_test_runs_the_lowest_pettingzoo_that_pyproject_allows() -> None:
    lowest = re.search(r"^PETTINGZOO_LOWEST := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    bound = re.search(r'"pettingzoo>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
    assert lowest and bound
    assert lowest.group(1).split(".")[:2] == bound.group(1).split(".")[:2]


# Gymnasium ----------------------------------------------------------------------------------


def test_gymnasium_recipe() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(ScopaSingleAgentEnv())
    assert any("not having a spec" in str(w.message) for w in caught)  # what the id fixes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns = run_recipe("Gymnasium")
    assert [str(w.message) for w in caught] == []  # check_env had a spec and found no problem
    env, envs = ns["env"], ns["envs"]
    assert type(env.unwrapped) is ScopaSingleAgentEnv and env.spec.id == ENV_ID
    assert env.unwrapped.aec.episode == "deal"
    assert ns["observation"].shape == (OBS_SIZE,) and not ns["truncated"]
    assert isinstance(envs, ScopaVectorEnv) and envs.num_envs == 8
    assert ns["observations"].shape == (8, OBS_SIZE) and ns["infos"]["action_mask"].shape == (8, 80)


def test_gymnasium_ids_pass_their_keywords_and_vectorize_either_way() -> None:
    env = gymnasium.make(ENV_ID, seat=1, rules="napola", reward="points").unwrapped
    _, info = env.reset(seed=3)
    assert env.seat == 1 and env.aec.rules.napola and env.aec.reward_mode == "points"
    assert info["action_mask"].any()
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, seat=0, episode="deal")
    assert isinstance(envs, ScopaVectorEnv) and envs.batch.seat.tolist() == [0, 0, 0]
    sync = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", opponent="greedy")
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)
    assert all(type(e.unwrapped) is ScopaSingleAgentEnv for e in sync.envs)
    observations, infos = sync.reset(seed=0)
    assert observations.shape == (2, OBS_SIZE) and infos["action_mask"].shape == (2, 80)


def test_importing_again_registers_nothing_twice() -> None:
    import importlib

    import scopa_env

    spec = gymnasium.spec(ENV_ID)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Gymnasium warns when an id is overridden
        importlib.reload(scopa_env)
    assert gymnasium.spec(ENV_ID) is spec
    assert spec.vector_entry_point == "scopa_env.vector_env:ScopaVectorEnv"


# Stable-Baselines3 and sb3-contrib ----------------------------------------------------------


@pytest.mark.slow
def test_sb3_recipe() -> None:
    pytest.importorskip("sb3_contrib", reason="sb3-contrib comes with the train extra")
    ns = run_recipe("Stable-Baselines3 and sb3-contrib")
    model, vec_model, env = ns["model"], ns["vec_model"], ns["env"]
    assert model.num_timesteps >= 256 and vec_model.num_timesteps >= 512
    assert len(vec_model.ep_info_buffer) > 0  # SB3 saw episodes end through the VecEnv's infos
    observation, _ = env.reset(seed=1)
    mask = env.unwrapped.action_masks()
    action, _ = model.predict(observation, action_masks=mask)
    assert mask[int(action)]


# CleanRL-style loops ----------------------------------------------------------------------


@pytest.mark.slow
def test_cleanrl_style_recipe() -> None:
    torch = pytest.importorskip("torch", reason="torch comes with the train extra")
    ns = run_recipe("CleanRL-style loops")
    next_step, same_step, batched = ns["counts"]
    assert same_step == batched == 4 * 64  # every step of every game is a transition
    assert next_step < 4 * 64  # the reset steps of NEXT_STEP are left out
    # What the page says of NEXT_STEP: the last observation has no legal action, -inf is NaN.
    envs = ns["next_step"]
    _, infos = envs.reset(seed=0)
    for _ in range(100):  # a deal ends well within 100 steps
        actions = [np.flatnonzero(m)[0] for m in infos["action_mask"]]
        _, _, terminated, _, infos = envs.step(np.array(actions))
        if terminated.any():
            break
    else:
        pytest.fail("no episode ended")
    assert not infos["action_mask"][terminated].any()
    logits = torch.zeros(80).masked_fill(torch.ones(80, dtype=torch.bool), -torch.inf)
    assert torch.isnan(torch.softmax(logits, 0)).all()


# Tianshou --------------------------------------------------------------------------------


UNIFORM_TYPES = {
    "deal_over": bool,
    "deal_points": np.ndarray,
    "match_score": np.ndarray,
    "game_over": bool,
    "winner": int,
}


def expected_uniform(raw_info: dict[str, Any], scores: tuple[int, ...]) -> dict[str, Any]:
    """The uniform info, read from the environment's own info by hand."""
    sides = len(scores)
    winner = raw_info.get("winner")
    if winner is None:
        side = -1
    else:
        first = winner if isinstance(winner, str) else winner[0]  # partners: a tuple of agents
        side = int(first.removeprefix("player_")) % sides
    points = [side["total"] for side in raw_info.get("deal_score", [{"total": 0}] * sides)]
    return {
        "deal_over": "deal_score" in raw_info,
        "deal_points": points,
        "match_score": list(scores),
        "game_over": "winner" in raw_info,
        "winner": side,
    }


def check_uniform(env: Any) -> dict[str, int]:
    """Check every agent's uniform info against its own info; count what happened."""
    raw, seen = env.unwrapped, {"deals": 0, "won": 0}
    for agent, info in env.infos.items():
        assert {k: type(v) for k, v in info.items()} == UNIFORM_TYPES
        assert info["deal_points"].dtype == info["match_score"].dtype == np.int64
        converted = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in info.items()}
        assert converted == expected_uniform(raw.infos[agent], raw.match.scores)
        seen["deals"] += info["deal_over"]
        seen["won"] += info["winner"] >= 0
    return seen


@pytest.mark.parametrize(("table", "episode"), [("scopa", "match"), ("scopone", "deal")])
def test_uniform_infos_have_the_same_keys_and_types_every_step(table: str, episode: str) -> None:
    env = uniform_infos(make_aec(table, wrapped=True, episode=episode))
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    seen = check_uniform(env)
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        mask = observation["action_mask"]
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(mask))))
        for key, count in check_uniform(env).items():
            seen[key] += count
    assert seen["deals"] > 0 and seen["won"] > 0  # both kinds of info occurred


def test_a_tied_deal_has_no_winner_side() -> None:
    env = uniform_infos(make_aec("scopa", wrapped=True, episode="deal"))
    rng = np.random.default_rng(0)
    for seed in range(200):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(rng.choice(legal)))
        raw_info = env.unwrapped.infos["player_0"]
        if raw_info["winner"] is None:
            break
    else:
        pytest.fail("no tied deal in 200 random deals")
    for info in env.infos.values():
        assert info["game_over"] and info["winner"] == -1
        assert info["deal_points"][0] == info["deal_points"][1]


@pytest.mark.slow
def test_tianshou_recipe() -> None:
    pytest.importorskip("tianshou", reason="Tianshou comes with the integrations extra")
    ns = run_recipe("Tianshou")
    result, buffer = ns["result"], ns["collector"].buffer
    assert result.train_step >= 100 and result.update_step > 0
    assert not buffer.hasnull()  # what Tianshou's trainer checks after every collect
    n = len(buffer)
    assert buffer.obs.mask[np.arange(n), buffer.act[:n]].all()  # every move was legal
    ends = buffer.done[:n]
    assert ends.any() and buffer.info.game_over[:n][ends].all()
    assert set(buffer.info.winner[:n][ends].tolist()) <= {-1, 0, 1}


# TorchRL --------------------------------------------------------------------------------


@pytest.mark.slow
def test_torchrl_recipe() -> None:
    pytest.importorskip("torchrl", reason="TorchRL comes with the integrations extra")
    rollout = run_recipe("TorchRL")["rollout"]
    assert 36 <= rollout.batch_size[0] < 100  # every card of the deal played, then it ended
    assert rollout["next", "done"][-1].all() and not rollout["next", "done"][:-1].any()
    state = rollout["state"]
    assert state.shape == (rollout.batch_size[0], OBS_SIZE + 80)
    for agent in ("player_0", "player_1"):
        acts = rollout[agent, "mask"].squeeze(-1)  # the rows where this agent moved
        action = rollout[agent, "action"][acts]
        legal = rollout[agent, "action_mask"][acts]
        assert acts.any() and legal.gather(-1, action.unsqueeze(-1)).all()
        seen = rollout[agent, "observation", "observation"][acts].squeeze(-2)
        assert (state[acts, :OBS_SIZE] == seen).all()  # the state opens with the mover's view


# SuperSuit ------------------------------------------------------------------------------


@pytest.mark.slow
def test_supersuit_recipe() -> None:
    ss = pytest.importorskip("supersuit", reason="SuperSuit comes with the integrations extra")
    from scopa_env import scopa_v0

    with pytest.raises((AttributeError, AssertionError)):  # what the page says: Box only
        ss.dtype_v0(scopa_v0.env(), np.float32)
    ns = run_recipe("SuperSuit")
    flat = ns["FLAT"]
    assert flat == 80 + OBS_SIZE
    assert ns["stacked"].observation_space("player_0").shape == (2 * flat,)
    games = ns["games"]
    observations, *_, passes, _ = games.last()
    assert observations.shape == (4, flat) and observations.dtype == np.float32
    for game, row, waiting in zip(games.envs, observations, passes, strict=True):
        if not waiting:
            raw = game.unwrapped.observe(games.agent_selection)
            np.testing.assert_array_equal(ns["mask_of"](row), raw["action_mask"])


# OpenSpiel --------------------------------------------------------------------------------


@pytest.mark.slow
def test_openspiel_recipe() -> None:
    pytest.importorskip("pyspiel", reason="OpenSpiel comes with the bench extra")
    ns = run_recipe("OpenSpiel")
    returns, game = ns["returns"], ns["game"]
    assert game.num_players() == 3 and len(returns) == 3
    assert abs(sum(returns)) < 1e-9
    assert all(game.min_utility() <= r <= game.max_utility() for r in returns)
