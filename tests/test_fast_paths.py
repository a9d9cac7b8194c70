"""The AEC environment's fast paths against its simple ones, over random games at every table.

The fast path observes straight from the deal (``Deal.view``, the match features worked out
once a deal, scratch-array writers that write the action mask too); the simple path is the layout's
public encoder on ``Deal.masks``. Both must give the same bytes in every state.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from scopa_env import observation, scopone_observation
from scopa_env.capture_env import fast_layout
from scopa_env.environments import make_aec
from scopa_env.observation import bits_to_mask
from scopa_env.tables import TABLES


def _assert_same(got: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert got["observation"].dtype == expected["observation"].dtype == np.float32
    assert got["observation"].shape == expected["observation"].shape
    assert got["observation"].tobytes() == expected["observation"].tobytes()
    assert got["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(got["action_mask"], expected["action_mask"])


@pytest.mark.parametrize("name", list(TABLES))
def test_fast_observation_equals_the_simple_path_at_every_table(name: str) -> None:
    """Every seat, every state, several deals (points rewards, a low target so matches end)."""
    env = make_aec(name, reward="points", rules={"target": 4})
    assert env._features is not None, "the shipped encoders all have a fast path"
    rng = np.random.default_rng(7)
    states = 0
    for game in range(3):
        env.reset(seed=100 + game)
        for _agent in env.agent_iter():
            for seat, agent in enumerate(env.possible_agents):
                _assert_same(env.observe(agent), env._observe_simple(seat))
            states += 1
            if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                env.step(None)
            else:
                env.step(int(rng.choice(env.legal_actions())))
    assert states > 100


@pytest.mark.parametrize("name", ["scopa", "scopa_4", "scopone"])
def test_fast_observation_survives_pickling_mid_capture(name: str) -> None:
    """A restored environment observes as the simple path does, in a capture choice too."""
    env = make_aec(name)
    rng = np.random.default_rng(3)
    env.reset(seed=5)
    for _ in range(400):
        if env.phase == "pick":
            break
        env.step(int(rng.choice(env.legal_actions())))
    copy = pickle.loads(pickle.dumps(env))
    for seat, agent in enumerate(env.possible_agents):
        _assert_same(copy.observe(agent), env._observe_simple(seat))


def test_observations_are_new_arrays_each_state() -> None:
    """Scratch arrays are never handed out: a kept observation does not change later."""
    env = make_aec("scopa")
    env.reset(seed=1)
    agent = env.agent_selection
    first = env.observe(agent)
    kept = {key: value.copy() for key, value in first.items()}
    assert env.observe(agent) is first  # one state, one observation
    env.step(env.legal_actions()[0])
    second = env.observe(env.agent_selection)
    assert second["observation"] is not first["observation"]
    assert not np.shares_memory(second["observation"], first["observation"])
    assert not np.shares_memory(second["action_mask"], first["action_mask"])
    for key in kept:
        np.testing.assert_array_equal(first[key], kept[key])
    first["action_mask"][:] = 1  # writable, and the cached mask is not touched
    assert first["observation"].flags.writeable


@pytest.mark.parametrize("module", [observation, scopone_observation])
def test_the_writer_writes_the_action_mask_beside_the_vector(module: object) -> None:
    """Actions 0..39 play a card and 40..79 take one: the mask's two halves, each a new array,
    and the vector the same as ``write`` gives, whatever mask was written before."""
    writer = module.writer()
    planes = [0] * module.NUM_PLANES
    planes[0], planes[1] = (1 << 39) | 5, 0b1011 << 3
    values = [0.5] * (module.OBS_SIZE - module.NUM_PLANES * 40)
    expected = writer.write(planes, values)
    cases = {
        0: [],
        1: [0],
        (1 << 39) | 5: [0, 2, 39],
        0b1011 << 40: [40, 41, 43],
        (1 << 80) - 1: list(range(80)),
    }
    kept = []
    for legal, actions in cases.items():
        vector, mask = writer.observe(planes, values, legal)
        assert mask.dtype == np.int8 and mask.shape == (80,)
        assert np.flatnonzero(mask).tolist() == actions
        np.testing.assert_array_equal(mask, bits_to_mask(legal, 80))
        assert vector.tobytes() == expected.tobytes()
        kept.append(mask)
        mask[:] = 7  # writable, and no later mask shares it
    for mask in kept:
        np.testing.assert_array_equal(mask, 7)
    assert writer.write(planes, values).tobytes() == expected.tobytes()


def test_an_unknown_encoder_takes_the_simple_path() -> None:
    def encoder(*args: object, **kwargs: object) -> np.ndarray:
        raise AssertionError("not called here")

    assert fast_layout(encoder) is None
