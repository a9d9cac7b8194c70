"""The AEC environment's fast paths against its simple ones, over random games at every table.

The fast path observes straight from the deal (``Deal.view``, the match features worked out
once a deal, scratch-array writers that write the action mask too); the simple path is the layout's
public encoder on ``Deal.masks``. Both must give the same bytes in every state.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import scalar_values

from scopa_env import observation, scopone_observation
from scopa_env.capture_env import fast_layout
from scopa_env.cards import mask_of
from scopa_env.engine import Deal, needs_redeal
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
    values = scalar_values(module._SCALARS, lambda: 0.5)
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


def _assert_live(deal: Deal) -> None:
    """``Deal.view``'s live mask is the cards in hands and stock, however the deal was made."""
    expected = mask_of(deal.stock)
    for hand in deal.hands:
        expected |= mask_of(hand)
    assert deal.view()[-1] == expected
    for other in (deal.copy(), Deal.from_dict(deal.to_dict())):
        assert other.view()[-1] == expected


@pytest.mark.parametrize("name", list(TABLES))
def test_the_live_mask_is_the_hands_and_stock_after_every_play(name: str) -> None:
    rng = np.random.default_rng(11)
    kind = TABLES[name]
    for game in range(6):
        deal = Deal.new(rng, first_player=game % kind.players, kind=name)
        _assert_live(deal)
        while not deal.is_over:
            moves = deal.legal_mask_moves()
            deal.play_unchecked(*moves[int(rng.integers(len(moves)))])
            _assert_live(deal)
            seat = int(rng.integers(kind.players))
            hidden = mask_of(deal.stock)
            for other in range(kind.players):
                if other != seat:
                    hidden |= mask_of(deal.hands[other])
            cards = rng.permutation([c for c in range(40) if hidden >> c & 1]).tolist()
            _assert_live(deal.with_hidden_cards(seat, cards))
    if kind.table_size:  # a deal whose first shuffle is void is dealt again
        seed = next(
            s
            for s in range(100_000)
            if needs_redeal(kind.table_of(np.random.default_rng(s).permutation(40).tolist()))
        )
        deal = Deal.new(np.random.default_rng(seed), kind=name)
        first = np.random.default_rng(seed).permutation(40).tolist()
        assert set(deal.table) != set(kind.table_of(first))
        _assert_live(deal)


@pytest.mark.parametrize("name", list(TABLES))
def test_dead_steps_and_rewards_as_pettingzoos_helpers(name: str) -> None:
    """The environment's own dead step and reward bookkeeping against PettingZoo's generic
    helpers, state by state through whole games (several deals, points rewards)."""
    from pettingzoo import AECEnv

    ours, theirs = (
        make_aec(name, wrapped=True, reward="points", rules={"target": 4}) for _ in "ab"
    )
    generic = theirs.unwrapped
    for helper in ("_was_dead_step", "_accumulate_rewards", "_clear_rewards"):
        setattr(generic, helper, getattr(AECEnv, helper).__get__(generic))
    rng = np.random.default_rng(9)

    def state(env: object) -> tuple:
        u = env.unwrapped  # type: ignore[attr-defined]
        attrs = ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations")
        published = tuple(repr(getattr(u, name)) for name in (*attrs, "infos"))
        return env.agent_selection, u._skip_agent_selection, published  # type: ignore[attr-defined]

    dead = 0
    for game in range(3):
        ours.reset(seed=game)
        theirs.reset(seed=game)
        for agent in ours.agent_iter():
            assert state(ours) == state(theirs)
            if ours.terminations[agent] or ours.truncations[agent]:
                with pytest.raises(ValueError, match="only valid action is None"):
                    ours.unwrapped.step(0)
                action, dead = None, dead + 1
            else:
                action = int(rng.choice(ours.unwrapped.legal_actions()))
            ours.step(action)
            theirs.step(action)
        assert state(ours) == state(theirs)
    assert dead == 3 * len(TABLES[name].agents)


@pytest.mark.parametrize("rules", ["scopa", "asso_pigliatutto", "scopa_d_assi"])
@pytest.mark.parametrize("name", list(TABLES))
def test_play_unchecked_tells_a_scopa_and_only_a_scopa_changes_the_scope(
    name: str, rules: str
) -> None:
    """The scope is a tuple (which observers memoise) replaced exactly when a play scores a
    scopa, and ``play_unchecked`` says so."""
    rng = np.random.default_rng(21)
    scopas = 0
    for game in range(20):
        deal = Deal.new(rng, first_player=game % TABLES[name].players, rules=rules, kind=name)
        while not deal.is_over:
            before, player = deal.scope, deal.current_player
            moves = deal.legal_mask_moves()
            scored = deal.play_unchecked(*moves[int(rng.integers(len(moves)))])
            assert isinstance(deal.scope, tuple)
            if scored:
                assert deal.scope == tuple(s + (p == player) for p, s in enumerate(before))
                scopas += 1
            else:
                assert deal.scope is before
    assert scopas > 0
