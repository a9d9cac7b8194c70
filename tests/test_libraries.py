"""The recipes of ``docs/libraries.md``: each section's Python block runs here as written, then
the test checks what it built. Recipes that need a library outside the core dependencies are
``slow`` and skip, naming the library, where it is not installed (the ``integrations`` extra)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium.utils.env_checker import check_env

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


TESTED = {"Gymnasium"}


def test_every_recipe_on_the_page_is_run_here() -> None:
    assert set(recipes()) == TESTED


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
