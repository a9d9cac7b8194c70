"""PettingZoo's ``state()`` and ``state_space`` at every table: the observation of the seat to
act, then the cards that seat cannot see (``scopa_env.privileged``'s block), as an oracle critic
reads them in training."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import hidden_cards
from pettingzoo.test.state_test import test_state as pettingzoo_state_test
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_test

from scopa_env import scopa_v0, scopone_v0
from scopa_env.cards import mask_of, parse_cards
from scopa_env.environments import make_aec
from scopa_env.errors import ResetNeededError
from scopa_env.tables import TABLES


def planes(*groups: str) -> np.ndarray:
    """One 0/1 plane of the 40 cards for each group of card names, end to end."""
    out = np.zeros((len(groups), 40), np.float32)
    for row, names in enumerate(groups):
        out[row, list(parse_cards(names))] = 1.0
    return out.reshape(-1)


@pytest.mark.parametrize("table", TABLES)
def test_pettingzoos_state_checks_pass_without_a_warning(table: str) -> None:
    env = make_aec(table, wrapped=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pettingzoo_state_space_test(env)
        pettingzoo_state_test(env, num_cycles=10)


@pytest.mark.parametrize("table", TABLES)
def test_the_state_is_the_observation_of_the_seat_to_act_then_every_card_it_cannot_see(
    table: str,
) -> None:
    env = make_aec(table, wrapped=True, episode="deal")
    raw = env.unwrapped
    players = len(env.possible_agents)
    width = env.observation_space(env.possible_agents[0])["observation"].shape[0]
    assert env.state_space.shape == (width + 40 * players,)
    env.reset(seed=7)
    rng = np.random.default_rng(7)
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        state = env.state()
        assert env.state_space.contains(state)
        np.testing.assert_array_equal(state[:width], observation["observation"])
        seat = env.possible_agents.index(agent)
        block = state[width:].reshape(players, 40).astype(bool)
        others = [raw.deal.hands[(seat + k) % players] for k in range(1, players)]
        expected = [mask_of(hand) for hand in others] + [mask_of(raw.deal.stock)]
        assert [mask_of(np.flatnonzero(plane)) for plane in block] == expected
        assert (block.sum(axis=0) <= 1).all()  # each card in one place at most
        assert mask_of(np.flatnonzero(block.any(axis=0))) == hidden_cards(raw, seat)
        state[:] = -1.0  # a copy: the observation and the next state are untouched
        assert (env.observe(agent)["observation"] >= 0).all()
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))


def test_the_two_player_state_of_a_hand_dealt_deck() -> None:
    # The deck in id order, player 0 first (RULES.md, the deal): player 0 holds AD 3D 5D,
    # player 1 2D 4D 6D, the table 7D JD QD KD, the stock the thirty clubs, swords and batons.
    env = scopa_v0.raw_env()
    env.reset(options={"deck": list(range(40)), "first_player": 0})
    stock = " ".join(f"{rank}{suit}" for suit in "CSB" for rank in "A234567JQK")
    width = env.observation_space("player_0")["observation"].shape[0]
    assert env.agent_selection == "player_0"
    np.testing.assert_array_equal(env.state()[width:], planes("2D 4D 6D", stock))
    env.step(parse_cards("AD")[0])  # an ace captures nothing here: laid on the table
    assert env.agent_selection == "player_1"
    np.testing.assert_array_equal(env.state()[width:], planes("3D 5D", stock))
    np.testing.assert_array_equal(env.state()[:width], env.observe("player_1")["observation"])


def test_the_state_before_a_reset_is_refused() -> None:
    with pytest.raises(ResetNeededError, match="reset"):
        scopa_v0.raw_env().state()


@pytest.mark.parametrize("table", TABLES)
def test_the_environments_page_gives_each_tables_state_shape(table: str) -> None:
    page = scopone_v0.__doc__ if table in scopone_v0.DEALS else scopa_v0.__doc__
    row = re.search(r"^\| State Shape +\| (.+) \|$", page or "", re.M)
    assert row is not None
    size = make_aec(table).state_space.shape[0]
    if table.startswith("scopa_"):
        assert f"{table} ({size},)" in row.group(1)
    else:  # two-player Scopa and Scopone: the row's first shape
        assert row.group(1).startswith(f"({size},)")
