"""``scopa_v0`` at the tables of three or more seats (``scopa_3``, ``scopa_4``, ``scopa_6``):
PettingZoo conformance, the observation layout of ``scopa_env.table_observation``, no leaks,
rewards and infos per side, pickling, rendering, and a scripted deal worked out by hand from
RULES.md sections 3, 4 and 8."""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from functools import partial
from typing import Any

import numpy as np
import pytest
from conftest import bombardment, hidden_cards, play, random_step, take
from pettingzoo.test import api_test, render_test, seed_test

from scopa_env import render, scopa_v0, scopone_v0, table_observation
from scopa_env.cards import mask_of, parse_cards
from scopa_env.environments import make_aec
from scopa_env.info_state import InfoState
from scopa_env.table_observation import LAYOUTS, layout_for
from scopa_env.tables import TABLES

NAMES = ("scopa_3", "scopa_4", "scopa_6")


def cards(names: str) -> set[int]:
    return set(parse_cards(names))


def seen(layout: Any, obs: np.ndarray, name: str) -> set[int]:
    return set(np.flatnonzero(layout.plane(obs, name)).tolist())


def play_out(env: Any, rng: np.random.Generator) -> list[tuple[str, float, dict]]:
    """Play random legal actions to the end (wrapped env); the last reward and info of each."""
    finals = []
    for agent in env.agent_iter():
        _, reward, termination, truncation, info = env.last()
        if termination or truncation:
            finals.append((agent, reward, info))
            env.step(None)
        else:
            random_step(env, rng)
    return finals


# Construction ------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "name"), [(2, "scopa"), (3, "scopa_3"), (4, "scopa_4")])
def test_players_is_shorthand_for_the_table(players: int, name: str) -> None:
    env = scopa_v0.raw_env(players=players)
    assert env.table is TABLES[name] and env.possible_agents == list(TABLES[name].agents)
    assert scopa_v0.raw_env(table=name, players=players).table is TABLES[name]
    assert make_aec(name).table is TABLES[name]


def test_make_aec_builds_every_table() -> None:
    for name, table in TABLES.items():
        env = make_aec(name, episode="deal")
        module = scopone_v0 if name.startswith("scopone") else scopa_v0
        assert isinstance(env, module.raw_env) and env.table is table


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": 5}, "Scopa is played by 2, 3, 4, 6 players"),
        ({"table": "scopa_5"}, "unknown table"),
        ({"table": "scopone"}, "scopone_v0"),
        ({"table": "scopa_4", "players": 3}, "players=3 is the table 'scopa_3'"),
        ({"table": "scopa_3", "show_hands": "player_3"}, "show_hands"),
    ],
)
def test_bad_tables_raise(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scopa_v0.raw_env(**kwargs)


def test_two_player_environment_is_unchanged() -> None:
    from scopa_env import observation

    env = scopa_v0.raw_env(table="scopa")
    assert env.observation_space("player_0")["observation"].shape == (observation.OBS_SIZE,)


# PettingZoo's own tests --------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_api(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test passes an unknown reset option on purpose
        api_test(scopa_v0.env(table=name), num_cycles=200)
        api_test(scopa_v0.env(table=name, episode="deal", reward="points"), num_cycles=60)


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_seed(name: str) -> None:
    seed_test(partial(scopa_v0.env, table=name), num_cycles=200)


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_render(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(partial(scopa_v0.env, table=name))
    assert f"Scopa for {TABLES[name].players}" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rules", [None, "scopa_a_quindici", "asso_pigliatutto"])
def test_pettingzoo_bombardment(name: str, rules: str | None) -> None:
    bombardment(scopa_v0.env(table=name, rules=rules), cycles=150)


@pytest.mark.parametrize("name", NAMES)
def test_pickle_round_trip_keeps_the_game(name: str) -> None:
    rng = np.random.default_rng(4)
    env = scopa_v0.env(table=name, rules="napola")
    env.reset(seed=12)
    for _ in range(int(rng.integers(1, 60))):
        random_step(env, rng)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.table is env.unwrapped.table
    assert clone.unwrapped.deal == env.unwrapped.deal
    for _ in range(300):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        a, b = env.last(), clone.last()
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(a[0][key], b[0][key])
        assert a[1:] == b[1:]
        clone.step(random_step(env, rng))
    assert clone.unwrapped.match.scores == env.unwrapped.match.scores


@pytest.mark.parametrize("name", NAMES)
def test_every_seat_of_every_environment_has_a_space_of_its_own(name: str) -> None:
    """The spaces are equal (built once per layout), but each samples from its own stream."""
    first, second = make_aec(name), make_aec(name)
    spaces = [
        env.observation_space(agent) for env in (first, second) for agent in TABLES[name].agents
    ]
    assert len({id(space) for space in spaces}) == len(spaces)
    assert all(space == spaces[0] for space in spaces)
    spaces[0].seed(5)
    spaces[1].seed(5)
    drawn = spaces[0].sample()["observation"]
    np.testing.assert_array_equal(spaces[1].sample()["observation"], drawn)
    spaces[1].seed(5)
    spaces[0].sample()  # another seat's draw leaves this seat's stream where it was
    np.testing.assert_array_equal(spaces[1].sample()["observation"], drawn)


# The observation layout --------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_layout_documented_sizes(name: str) -> None:
    layout = LAYOUTS[name]
    table = TABLES[name]
    n, s = table.players, table.sides
    assert layout.size == 40 * (5 + 2 * n) + 2 + 1 + (n - 1) + n + n + s + 1 + n + (n + 1)
    assert f"``{name}`` {layout.size}" in table_observation.__doc__.replace("\n", " ")
    assert f"{name} ({layout.size},)" in scopa_v0.__doc__
    rows = re.findall(r"^``(\w+)`` +(\S+) ", table_observation.__doc__, re.MULTILINE)
    names = {re.sub(r"_k$", "", row) for row, _ in rows}
    assert {re.sub(r"_\d+$", "", key) for key in layout.slices} == names
    space = scopa_v0.raw_env(table=name).observation_space("player_1")["observation"]
    assert space.shape == (layout.size,) and space.high.max() == 4.0
    assert layout_for(TABLES[name]) is layout


def test_layout_sizes_differ_from_every_other_layout() -> None:
    from scopa_env import observation, scopone_observation

    sizes = [observation.OBS_SIZE, scopone_observation.OBS_SIZE]
    sizes += [layout.size for layout in LAYOUTS.values()]
    assert len(set(sizes)) == len(sizes)
    with pytest.raises(ValueError, match="no table observation layout"):
        layout_for("scopone")


def scripted_env(**kwargs: Any) -> Any:
    """scopa_3, player_0 leads (player_2 deals). Hands 5D 6D 4C / 2C 4S QB / 5B 7S KD, table
    5C 5S AC 3B, the stock the other 27 cards in id order (dealt as RULES.md 8 says)."""
    hands = [parse_cards("5D 6D 4C"), parse_cards("2C 4S QB"), parse_cards("5B 7S KD")]
    deck = [hands[i % 3][i // 3] for i in range(9)] + list(parse_cards("5C 5S AC 3B"))
    deck += [c for c in range(40) if c not in deck]
    env = scopa_v0.raw_env(table="scopa_3", **kwargs)
    env.reset(options={"deck": deck, "first_player": 0})
    return env, deck


def test_scripted_scopa_3_first_round() -> None:
    env, deck = scripted_env(episode="deal", reward="points")
    assert env.agent_selection == "player_0" and env.deal.dealer == 2
    # 5D: single-card priority, 5C or 5S: a choice, then 5S is taken.
    env.step(play("5D"))
    assert env.phase == "pick" and env.legal_actions() == sorted([take("5C"), take("5S")])
    env.step(take("5S"))
    # 4S: no 4 on 5C AC 3B; AC+3B = 4 is the only capture, made at once.
    assert env.agent_selection == "player_1"
    env.step(play("4S"))
    assert set(env.deal.table) == cards("5C")
    # 5B takes the lone 5C: a scopa for player_2.
    env.step(play("5B"))
    assert env.last_play.scopa and env.deal.scope == (0, 0, 1) and env.deal.table == ()
    # 4C and 2C are laid; KD cannot take 4+2 and is laid; 6D takes 4C+2C.
    for card in ("4C", "2C", "KD"):
        env.step(play(card))
    assert set(env.deal.table) == cards("4C 2C KD")
    env.step(play("6D"))
    assert set(env.deal.table) == cards("KD") and env.deal.last_capturer == 0
    # QB and 7S are laid: the round ends with the dealer, the next is dealt from the stock.
    env.step(play("QB"))
    env.step(play("7S"))
    assert set(env.deal.table) == cards("KD QB 7S")
    for seat in range(3):
        assert set(env.deal.hands[seat]) == set(deck[13 + seat : 22 : 3])
    assert env.agent_selection == "player_0" and len(env.deal.stock) == 18
    assert env.rewards == dict.fromkeys(env.possible_agents, 0.0)

    # player_1's view: seats by offset from player_1 (player_1, player_2, player_0).
    layout = LAYOUTS["scopa_3"]
    obs = env.observe("player_1")["observation"]
    assert seen(layout, obs, "hand") == set(deck[14:22:3])
    assert seen(layout, obs, "table") == cards("KD QB 7S")
    assert seen(layout, obs, "captures_0") == cards("4S AC 3B")
    assert seen(layout, obs, "captures_1") == cards("5B 5C")
    assert seen(layout, obs, "captures_2") == cards("5D 5S 6D 4C 2C")
    assert seen(layout, obs, "played_0") == cards("4S 2C QB")
    assert seen(layout, obs, "played_1") == cards("5B KD 7S")
    assert seen(layout, obs, "played_2") == cards("5D 4C 6D")
    assert len(seen(layout, obs, "unseen")) == 40 - 3 - 3 - 10
    assert seen(layout, obs, "unseen") == set(deck[13:]) - set(deck[14:22:3])
    assert seen(layout, obs, "pending") == seen(layout, obs, "picked") == set()
    expected = {
        "phase": [1, 0],
        "stock_size": [18 / 27],
        "hand_sizes": [1, 1],
        "scope": [0, 1 / 12, 0],
        "partners": [1, 0, 0],
        "match_score": [0, 0, 0],
        "target": [0.11],
        "dealer": [0, 1, 0],
        "last_capturer": [0, 0, 1, 0],
    }
    for name, values in expected.items():
        np.testing.assert_allclose(layout.plane(obs, name), values, rtol=1e-6, err_msg=name)
    info = InfoState.from_observation(obs)
    assert info.piles == (mask_of(cards("4S AC 3B")), mask_of(cards("5B 5C 5D 5S 6D 4C 2C")))
    assert info.scope == (0, 1) and info.last_capturer == 1 and info.other_hands == (3, 3)
    assert info.stock_size == 18 and not info.is_dealer and info.hand == mask_of(deck[14:22:3])


def test_partners_and_sides_in_the_scopa_4_view() -> None:
    env = scopa_v0.raw_env(table="scopa_4")
    env.reset(seed=3, options={"first_player": 1})
    layout = LAYOUTS["scopa_4"]
    obs = env.observe("player_3")["observation"]
    # From player_3: offsets 0..3 are players 3, 0, 1, 2; player_1 is the partner.
    np.testing.assert_array_equal(layout.plane(obs, "partners"), [1, 0, 1, 0])
    np.testing.assert_array_equal(layout.plane(obs, "dealer"), [0, 1, 0, 0])
    np.testing.assert_array_equal(layout.plane(obs, "last_capturer"), [0, 0, 0, 0, 1])
    assert layout.per_seat(obs, "captures").shape == (4, 40)
    np.testing.assert_array_equal(layout.plane(obs, "hand_sizes"), [1, 1, 1])


# No hidden information ---------------------------------------------------------------------


def replay(name: str, deck: list[int], first: int, actions: list[int]) -> Any:
    env = scopa_v0.raw_env(table=name, episode="deal")
    env.reset(options={"deck": deck, "first_player": first})
    for action in actions:
        env.step(action)
    return env


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(4))
def test_no_leak_of_hidden_cards(name: str, seed: int) -> None:
    """Decks that differ only in cards a seat cannot see (other hands, partners' included, and
    the stock) look the same to that seat."""
    rng = np.random.default_rng(seed)
    deck = rng.permutation(40).tolist()
    n = TABLES[name].players
    first = int(rng.integers(n))
    env = replay(name, deck, first, [])
    actions = [random_step(env, rng) for _ in range(int(rng.integers(0, 36)))]
    for viewer in range(n):
        hidden = hidden_cards(env, viewer)
        positions = [i for i, card in enumerate(deck) if hidden >> card & 1]
        other = list(deck)
        for i, card in zip(positions, rng.permutation([deck[i] for i in positions]), strict=True):
            other[i] = int(card)
        twin = replay(name, other, first, actions)
        agent = f"player_{viewer}"
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(env.observe(agent)[key], twin.observe(agent)[key])


@pytest.mark.parametrize("name", NAMES)
def test_observations_hold_no_hidden_card(name: str) -> None:
    rng = np.random.default_rng(2)
    layout = LAYOUTS[name]
    env = scopa_v0.raw_env(table=name)
    env.reset(seed=2)
    for _ in range(200):
        for player, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)["observation"]
            hidden = hidden_cards(env, player)
            visible = 0
            for plane in layout.planes:
                if plane != "unseen":
                    visible |= mask_of(seen(layout, obs, plane))
            assert not visible & hidden
            assert mask_of(seen(layout, obs, "unseen")) == hidden
        if all(env.terminations.values()):
            break
        random_step(env, rng)


# Rewards and infos per side ----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(3))
def test_points_rewards_per_side(name: str, seed: int) -> None:
    table = TABLES[name]
    env = scopa_v0.raw_env(table=name, reward="points", episode="match")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    deals = 0
    while not all(env.terminations.values()):
        random_step(env, rng)
        if env.match.deals_played == deals:
            continue
        deals += 1
        info = env.infos["player_0"]
        totals = [d["total"] for d in info["deal_score"]]
        assert len(totals) == table.sides and len(info["match_score"]) == table.sides
        for seat, agent in enumerate(env.possible_agents):
            side = table.side_of(seat)
            others = [t for s, t in enumerate(totals) if s != side]
            assert env.rewards[agent] == pytest.approx(totals[side] - np.mean(others))
            assert env.infos[agent] == info
        assert sum(env.rewards.values()) == pytest.approx(0.0)
    assert deals == env.match.deals_played
    scores = env.match.scores
    assert max(scores) >= 11 and scores.count(max(scores)) == 1


@pytest.mark.parametrize("name", NAMES)
def test_match_rewards_per_side(name: str) -> None:
    table = TABLES[name]
    env = scopa_v0.env(table=name, rules={"target": 4})
    env.reset(seed=5)
    finals = play_out(env, np.random.default_rng(5))
    match = env.unwrapped.match
    winner = match.winner
    assert winner is not None and len(finals) == table.players
    label = env.unwrapped.winner_label(winner)
    loss = -1.0 / (table.sides - 1)
    for agent, reward, info in finals:
        side = table.side_of(table.agents.index(agent))
        assert reward == (1.0 if side == winner else loss)
        assert info["winner"] == label and info["match_score"] == match.scores
    if table.partnerships:
        assert label == tuple(table.agents[s] for s in table.seats_of(winner))
    else:
        assert label == table.agents[winner]


def test_deal_episode_without_a_single_leader_has_no_winner() -> None:
    # scopa_3, one deal: find a seed whose deal ends with the lead shared.
    for seed in range(200):
        env = scopa_v0.raw_env(table="scopa_3", episode="deal")
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            random_step(env, rng)
        totals = [d["total"] for d in env.infos["player_0"]["deal_score"]]
        if totals.count(max(totals)) > 1:
            assert env.infos["player_0"]["winner"] is None
            assert env.rewards == dict.fromkeys(env.possible_agents, 0.0)
            return
    pytest.fail("no deal with a shared lead in 200 seeds")


# Rendering ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_render_draws_every_seat(name: str) -> None:
    table = TABLES[name]
    env = scopa_v0.raw_env(table=name, render_mode="ansi")
    env.reset(seed=0, options={"first_player": 0})
    text = env.render()
    assert f"Scopa for {table.players}  deal 1  match " + "-".join(["0"] * table.sides) in text
    for side in range(table.sides):
        label = " + ".join(table.agents[s] for s in table.seats_of(side))
        assert f"{label}  match 0  captured 0 cards" in text
    assert text.count("?? ?? ??") == table.players - 1 and "player_0 to play a card" in text
    assert f"player_{table.players - 1} (dealer)" in text
    image = scopa_v0.raw_env(table=name, render_mode="rgb_array")
    image.reset(seed=0)
    picture = image.render()
    assert picture.shape == (render.table_height(table.sides, table.players), render.WIDTH, 3)
    random_step(image, np.random.default_rng(0))
    assert not np.array_equal(picture, image.render())


# The single-agent view ---------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_single_agent_passes_gymnasiums_checker(name: str) -> None:
    from gymnasium.utils.env_checker import check_env

    from scopa_env.single_agent import ScopaSingleAgentEnv

    env = ScopaSingleAgentEnv(opponent="greedy", table=name, episode="deal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (LAYOUTS[name].size,)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_single_agent_plays_every_seat_of_its_side(name: str, seat: int) -> None:
    from scopa_env.single_agent import ScopaSingleAgentEnv

    table = TABLES[name]
    env = ScopaSingleAgentEnv(opponent="random", table=name, seat=seat, reward="points")
    side = table.side_of(seat)
    mine = {table.agents[s] for s in table.seats_of(side)}
    assert set(env.learner_agents) == mine and len(mine) == table.players // table.sides
    obs, info = env.reset(seed=seat)
    rng = np.random.default_rng(seat)
    played_as, total, done = set(), 0.0, False
    while not done:
        assert env.aec.agent_selection in mine
        played_as.add(env.aec.agent_selection)
        np.testing.assert_array_equal(obs, env.aec.observe(env.aec.agent_selection)["observation"])
        legal = np.flatnonzero(env.action_masks())
        obs, reward, done, _, info = env.step(int(legal[rng.integers(len(legal))]))
        total += reward
    assert played_as == mine
    # Points rewards: the side's points minus the mean of the others', summed over the deals.
    scores = env.aec.match.scores
    others = [score for s, score in enumerate(scores) if s != side]
    assert total == pytest.approx(scores[side] - np.mean(others))


def test_single_agent_rejects_a_seat_off_the_table() -> None:
    from scopa_env.single_agent import ScopaSingleAgentEnv

    with pytest.raises(ValueError, match=r"seat must be a seat 0..2"):
        ScopaSingleAgentEnv(table="scopa_3", seat=3)
    env = ScopaSingleAgentEnv(players=6)
    env.reset(seed=0, options={"seat": 5})
    assert env.seat == 5 and env.learner_agents == ("player_1", "player_3", "player_5")


@pytest.mark.parametrize("name", NAMES)
def test_info_state_reads_back_what_each_seat_knows(name: str) -> None:
    """Through random matches, every seat's decoded observation agrees with the engine: its
    hand, the table, its side's pile and every other side's, plays, scope, hand sizes, stock,
    dealer, last capturer and the match scores (mine, the best other side's)."""
    table = TABLES[name]
    n = table.players
    env = scopa_v0.raw_env(table=name, rules={"target": 6})
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    while not all(env.terminations.values()):
        deal, before = env.deal, env._score_before
        for seat, agent in enumerate(table.agents):
            info = InfoState.from_observation(env.observe(agent)["observation"])
            side = table.side_of(seat)
            ours = [s for s in range(n) if table.side_of(s) == side]
            theirs = [s for s in range(n) if s not in ours]

            def pooled(per_seat: Any, seats: list[int]) -> int:
                return mask_of(c for s in seats for c in per_seat[s])

            pending = env.pending_card if seat == deal.current_player else None
            assert info.pending == pending
            assert info.full_hand == mask_of(deal.hands[seat]) and info.table == mask_of(deal.table)
            assert info.piles == (pooled(deal.captures, ours), pooled(deal.captures, theirs))
            assert info.played == (pooled(deal.played, ours), pooled(deal.played, theirs))
            assert info.unseen == hidden_cards(env, seat)
            assert info.scope == (
                sum(deal.scope[s] for s in ours),
                sum(deal.scope[s] for s in theirs),
            )
            assert info.other_hands == tuple(len(deal.hands[(seat + k) % n]) for k in range(1, n))
            assert info.opp_hand_size == len(deal.hands[(seat + 1) % n])
            assert info.stock_size == len(deal.stock) and info.target == 6
            assert info.is_dealer == (deal.dealer == seat)
            last = deal.last_capturer
            assert info.last_capturer == (None if last is None else int(last not in ours))
            others = [before[s] for s in range(table.sides) if s != side]
            assert info.match_score == (before[side], max(others))
        random_step(env, rng)


def _assert_wrappers_see_the_environment(env: Any) -> None:
    """Every wrapper's own copy of a published attribute is the environment's, and lookups
    through the wrappers give what the environment holds."""
    from scopa_env.capture_env import _PUBLISHED

    raw, wrapper = env.unwrapped, env
    while wrapper is not raw:
        for name in _PUBLISHED:
            value = vars(wrapper)[name]
            assert value == getattr(raw, name), name
            if name != "agent_selection":
                assert value is getattr(raw, name), name
        wrapper = wrapper.env
    assert env.agent_selection == raw.agent_selection and env.infos is raw.infos


@pytest.mark.parametrize("name", ["scopa", *NAMES, "scopone"])
def test_wrappers_share_the_attributes_they_read(name: str) -> None:
    """``env()``'s wrappers read the environment's per-step attributes from their own
    ``__dict__`` (published by the environment): they stay the environment's through play,
    the end of the episode, pickling and an illegal move that ends the game."""
    env = make_aec(name, wrapped=True)
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agents  # before reset, the order-enforcing wrapper's check still applies
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for step in range(60):
        _assert_wrappers_see_the_environment(env)
        if env.terminations[env.agent_selection]:
            env.step(None)
            continue
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
        if step == 30:
            for twin in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
                assert twin.unwrapped is not env.unwrapped
                _assert_wrappers_see_the_environment(twin)
                if not twin.terminations[twin.agent_selection]:
                    twin.step(twin.unwrapped.legal_actions()[0])
                _assert_wrappers_see_the_environment(twin)
    illegal = next(a for a in range(80) if a not in env.unwrapped.legal_actions())
    loser = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    _assert_wrappers_see_the_environment(env)
    assert all(env.terminations.values()) and env.rewards[loser] == -1
    for _agent in env.agent_iter():
        assert env.last()[2]
        env.step(None)
        _assert_wrappers_see_the_environment(env)
    assert env.agents == []
