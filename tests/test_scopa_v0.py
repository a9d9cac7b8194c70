"""The PettingZoo AEC environment ``scopa_v0``: API conformance, a scripted deal, no leaks,
illegal actions, rewards, infos, reset options, pickling and rendering."""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from functools import partial
from typing import Any

import numpy as np
import pettingzoo
import pytest
from conftest import assert_same, bombardment, hidden_cards, play, random_step, snapshot, take
from pettingzoo.test import api_test, render_test, seed_test

import scopa_env
from scopa_env import scopa_v0
from scopa_env.cards import mask_of, parse_card, parse_cards
from scopa_env.observation import OBS_SIZE, OBS_SLICES, plane
from scopa_env.render import describe_play
from scopa_env.rules import PRESETS, Rules
from scopa_env.scopa_v0 import PICK_OFFSET, IllegalActionError, Play

RULES = [None, *sorted(PRESETS)]
AGENTS = ("player_0", "player_1")


def action_names(env: Any) -> list[str]:
    return [env.describe_action(a) for a in env.legal_actions()]


def play_out(env: Any, rng: np.random.Generator) -> None:
    """Play random legal actions through the AEC loop until every agent is done."""
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
        assert agent in AGENTS


# PettingZoo's own tests, for the default rules and every preset ----------------------------


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_api(rules: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test passes an unknown reset option on purpose
        api_test(scopa_v0.env(rules=rules), num_cycles=300)
        api_test(scopa_v0.env(rules=rules, episode="deal", reward="points"), num_cycles=100)


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_seed(rules: str | None) -> None:
    seed_test(partial(scopa_v0.env, rules=rules), num_cycles=300)


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_render(rules: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(partial(scopa_v0.env, rules=rules))
    assert "Scopa" in capsys.readouterr().out  # the "human" mode prints the text picture


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_bombardment(rules: str | None) -> None:
    bombardment(scopa_v0.env(rules=rules), cycles=300)


@pytest.mark.parametrize("rules", RULES)
def test_pickle_round_trip_keeps_the_game(rules: str | None) -> None:
    rng = np.random.default_rng(3)
    env = scopa_v0.env(rules=rules)
    env.reset(seed=11)
    for _ in range(int(rng.integers(1, 60))):
        random_step(env, rng)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.rules == env.unwrapped.rules
    assert clone.unwrapped.deal == env.unwrapped.deal
    for _ in range(200):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        obs, reward, termination, truncation, info = env.last()
        obs_c, reward_c, termination_c, truncation_c, info_c = clone.last()
        np.testing.assert_array_equal(obs["observation"], obs_c["observation"])
        np.testing.assert_array_equal(obs["action_mask"], obs_c["action_mask"])
        assert (reward, termination, truncation, info) == (
            reward_c,
            termination_c,
            truncation_c,
            info_c,
        )
        action = random_step(env, rng)
        clone.step(action)
    # The random generator travels too: the next deals are the same.
    assert clone.unwrapped.match.scores == env.unwrapped.match.scores
    # A never-reset environment pickles as its configuration.
    fresh = pickle.loads(pickle.dumps(scopa_v0.raw_env(rules=rules, episode="deal")))
    assert fresh.episode == "deal" and fresh.rules == scopa_v0.raw_env(rules=rules).rules


def test_deepcopy_is_independent() -> None:
    env = scopa_v0.raw_env()
    env.reset(seed=5)
    twin = copy.deepcopy(env)
    rng = np.random.default_rng(0)
    random_step(twin, rng)
    assert env.deal != twin.deal
    assert env.agent_selection != twin.agent_selection or env.phase != twin.phase


@pytest.mark.skipif(
    not hasattr(pettingzoo, "aec_registry"), reason="PettingZoo < 1.27 has no registry"
)
def test_registered_with_pettingzoo() -> None:
    assert "scopa/scopa-v0" in pettingzoo.aec_registry
    env = pettingzoo.make("aec", "scopa/scopa-v0", rules="napola")
    env.reset(seed=0)
    assert str(env) == "scopa_v0" and env.unwrapped.rules.napola
    assert scopa_env.scopa_v0 is scopa_v0


# A scripted deal from a fixed deck, step by step -------------------------------------------

# deck[0], deck[2], deck[4] go to the first player (player_0), deck[1], deck[3], deck[5] to the
# dealer (player_1) and deck[6:10] to the table; the rest is dealt six at a time the same way.
SCRIPTED_DECK = (
    "5D 2C 6D 5B 4C 4S 5C 5S AB 3B "  # round 1: hands 5D 6D 4C / 2C 5B 4S, table 5C 5S AB 3B
    "7D 7C JD AS 2B QD "  # round 2
    "AD QS 3C 7B 3D 2D "  # round 3
    "KB AC JB 6S 4D 4B "  # round 4
    "3S JC KS 6B JS QC "  # round 5
    "QB 7S 6C KD 2S KC"  # round 6
)

# (agent to move, its legal actions, the action taken). Rounds 2-6 take the first legal action.
SCRIPT = [
    # Round 1, checked by hand.
    # 5D: equal cards 5C and 5S on the table, so single-card priority offers exactly those two.
    ("player_0", "play 5D, play 6D, play 4C", "play 5D"),
    ("player_0", "take 5C, take 5S", "take 5S"),
    # 2C captures nothing (no 2, and no two cards sum to 2): it is laid down.
    ("player_1", "play 2C, play 4S, play 5B", "play 2C"),
    # 6D: no 6 on the table; 6 = 5C+AB = AB+3B+2C, so every table card leads to a capture.
    ("player_0", "play 6D, play 4C", "play 6D"),
    ("player_0", "take 2C, take 5C, take AB, take 3B", "take AB"),
    # After AB both sets remain, AB is no longer offered.
    ("player_0", "take 2C, take 5C, take 3B", "take 3B"),
    # 5B takes the lone 5C: a scopa.
    ("player_1", "play 4S, play 5B", "play 5B"),
    ("player_0", "play 4C", "play 4C"),
    # 4S takes 4C with the last card of round 1: a scopa (not the last play of the deal).
    ("player_1", "play 4S", "play 4S"),
    # Round 2.
    ("player_0", "play 7D, play JD, play 2B", "play 7D"),
    ("player_1", "play QD, play 7C, play AS", "play QD"),
    ("player_0", "play JD, play 2B", "play JD"),
    ("player_1", "play 7C, play AS", "play 7C"),
    ("player_0", "play 2B", "play 2B"),
    ("player_1", "play AS", "play AS"),
    # Round 3.
    ("player_0", "play AD, play 3D, play 3C", "play AD"),
    ("player_1", "play 2D, play QS, play 7B", "play 2D"),
    ("player_0", "play 3D, play 3C", "play 3D"),
    ("player_1", "play QS, play 7B", "play QS"),
    ("player_0", "play 3C", "play 3C"),
    ("player_1", "play 7B", "play 7B"),
    # Round 4.
    ("player_0", "play 4D, play JB, play KB", "play 4D"),
    ("player_1", "play AC, play 6S, play 4B", "play AC"),
    ("player_0", "play JB, play KB", "play JB"),
    ("player_1", "play 6S, play 4B", "play 6S"),
    ("player_0", "play KB", "play KB"),
    ("player_1", "play 4B", "play 4B"),
    # Round 5: JC on AC 3S 4B 7B takes AC+7B or AC+3S+4B.
    ("player_0", "play 3S, play JS, play KS", "play 3S"),
    ("player_1", "play JC, play QC, play 6B", "play JC"),
    ("player_1", "take AC, take 3S, take 4B, take 7B", "take AC"),
    ("player_1", "take 3S, take 4B, take 7B", "take 3S"),
    ("player_0", "play JS, play KS", "play JS"),
    ("player_1", "play QC, play 6B", "play QC"),
    ("player_0", "play KS", "play KS"),
    ("player_1", "play 6B", "play 6B"),
    # Round 6.
    ("player_0", "play 6C, play 2S, play QB", "play 6C"),
    ("player_1", "play KD, play KC, play 7S", "play KD"),
    ("player_0", "play 2S, play QB", "play 2S"),
    ("player_1", "play KC, play 7S", "play KC"),
    ("player_0", "play QB", "play QB"),
    # The very last play of the deal sweeps the table (7S takes 7B): no scopa.
    ("player_1", "play 7S", "play 7S"),
]


def scripted_env(**kwargs: Any) -> Any:
    env = scopa_v0.raw_env(**kwargs)
    env.reset(seed=0, options={"deck": list(parse_cards(SCRIPTED_DECK)), "first_player": 0})
    return env


def parse_action(text: str) -> int:
    verb, name = text.split()
    return play(name) if verb == "play" else take(name)


def test_scripted_deal_masks_follow_the_script() -> None:
    env = scripted_env(episode="deal", reward="points")
    for i, (agent, legal, action) in enumerate(SCRIPT):
        assert env.agent_selection == agent, f"step {i}"
        expected = sorted(parse_action(a) for a in legal.split(", "))
        assert env.legal_actions() == expected, f"step {i}: {action_names(env)}"
        mask = env.observe(agent)["action_mask"]
        assert mask.dtype == np.int8 and np.flatnonzero(mask).tolist() == expected
        other = AGENTS[1 - AGENTS.index(agent)]
        assert not env.observe(other)["action_mask"].any(), f"step {i}"
        assert not env.terminations[agent]
        env.step(parse_action(action))
    assert all(env.terminations.values())


def test_scripted_deal_round_one_in_detail() -> None:
    env = scripted_env(episode="deal", reward="points")
    deal = env.deal
    assert deal.hands == (parse_cards("5D 6D 4C"), parse_cards("2C 4S 5B"))
    assert set(deal.table) == set(parse_cards("5C 5S AB 3B"))
    assert deal.first_player == 0 and deal.dealer == 1 and len(deal.stock) == 30

    # Playing 5D opens a capture choice; nothing has moved yet in the engine.
    env.step(play("5D"))
    assert (
        env.phase == "pick" and env.pending_card == play("5D") and env.agent_selection == "player_0"
    )
    obs = env.observe("player_0")["observation"]
    assert plane(obs, "hand").nonzero()[0].tolist() == sorted(parse_cards("6D 4C"))
    assert plane(obs, "pending").nonzero()[0].tolist() == [play("5D")]
    assert not plane(obs, "picked").any()
    assert plane(obs, "phase").tolist() == [0.0, 1.0]
    assert env.deal.table == deal.table and env.rewards == {"player_0": 0.0, "player_1": 0.0}
    env.step(take("5S"))
    assert env.phase == "play" and env.agent_selection == "player_1"
    assert set(env.deal.captures[0]) == set(parse_cards("5D 5S"))
    assert set(env.deal.table) == set(parse_cards("5C AB 3B"))

    # 2C is laid down; the opponent sees it as played by the other side.
    env.step(play("2C"))
    obs = env.observe("player_0")["observation"]
    assert plane(obs, "opp_played").nonzero()[0].tolist() == [play("2C")]
    assert plane(obs, "last_capturer").tolist() == [1.0, 0.0, 0.0]

    # Sum choice: pick AB (both sets remain), then 3B (one set left: capture).
    env.step(play("6D"))
    env.step(take("AB"))
    assert env.phase == "pick" and env.picked == (play("AB"),)
    obs = env.observe("player_0")["observation"]
    assert plane(obs, "picked").nonzero()[0].tolist() == [play("AB")]
    # The opponent's view shows the position before the play while the capture is chosen.
    opp = env.observe("player_1")["observation"]
    assert plane(opp, "phase").tolist() == [1.0, 0.0] and not plane(opp, "pending").any()
    assert plane(opp, "opp_hand_size")[0] == pytest.approx(2 / 3)
    env.step(take("3B"))
    assert set(env.deal.captures[0]) == set(parse_cards("5D 5S 6D AB 3B 2C"))
    assert env.deal.table == (play("5C"),)

    # Scopa with 5B, then another with the last card of the round.
    env.step(play("5B"))
    assert env.deal.scope == (0, 1) and env.deal.table == ()
    obs = env.observe("player_0")["observation"]
    assert plane(obs, "scope").tolist() == pytest.approx([0.0, 1 / 18])
    env.step(play("4C"))
    env.step(play("4S"))
    assert env.deal.scope == (0, 2)
    assert env.deal.hands == (parse_cards("7D JD 2B"), parse_cards("QD 7C AS"))
    assert len(env.deal.stock) == 24 and env.agent_selection == "player_0"
    assert all(info == {} for info in env.infos.values())


def test_scripted_deal_end_last_play_rule_and_infos() -> None:
    env = scripted_env(episode="deal", reward="points")
    for _, _, action in SCRIPT[:-1]:
        env.step(parse_action(action))
    assert env.deal.table == (parse_card("7B"),) and env.deal.scope == (0, 2)
    env.step(play("7S"))
    # 7S takes the last table card, but the very last play of a deal never scores a scopa.
    assert env.deal.is_over and env.deal.scope == (0, 2) and env.deal.table == ()
    piles = env.deal.captures
    assert set(piles[0]) == set(
        parse_cards("AD 3D 4D 5D 6D JD 2C 3C 6C QC AS 5S 6S AB 3B 6B JB QB KB")
    )
    assert len(piles[1]) == 21
    # By hand: cards 19-21 (player_1), coins 6-4 (player_0), settebello (player_1),
    # primiera 72 (four sixes) - 84 (four sevens) (player_1), scope 0-2.
    expected = [
        {"cards": 0, "coins": 1, "settebello": 0, "primiera": 0, "scope": 0, "total": 1},
        {"cards": 1, "coins": 0, "settebello": 1, "primiera": 1, "scope": 2, "total": 5},
    ]
    for agent in AGENTS:
        info = env.infos[agent]
        assert info["match_score"] == (1, 5) and info["winner"] == "player_1"
        for got, want in zip(info["deal_score"], expected, strict=True):
            assert {k: got[k] for k in want} == want
    assert env.rewards == {"player_0": -4.0, "player_1": 4.0}
    assert all(env.terminations.values()) and not any(env.truncations.values())
    for agent in AGENTS:
        assert not env.observe(agent)["action_mask"].any()
    # Dead steps remove both agents.
    env.step(None)
    env.step(None)
    assert env.agents == []


def test_scripted_deal_in_a_match_deals_again() -> None:
    env = scripted_env()  # episode="match", reward="match"
    for _, _, action in SCRIPT:
        env.step(parse_action(action))
    assert not any(env.terminations.values())
    assert env.match.scores == (1, 5) and env.match.deals_played == 1
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    assert env.last_play == (1, play("7S"), 1 << play("7B"), False)  # the previous deal's
    # The dealer alternates: player_1 dealt the first deal, so player_0 deals now.
    assert env.deal.first_player == 1 and env.agent_selection == "player_1"
    assert env.deal.hands[0] and env.deal.table and len(env.deal.stock) == 30
    for agent in AGENTS:
        assert env.infos[agent]["match_score"] == (1, 5) and "winner" not in env.infos[agent]
    obs = env.observe("player_1")["observation"]
    assert plane(obs, "match_score").tolist() == pytest.approx([5 / 11, 1 / 11])
    # An agent's info is cleared when it acts, not before.
    random_step(env, np.random.default_rng(0))
    assert env.infos["player_1"] == {} and "deal_score" in env.infos["player_0"]


# Information: no leaks ---------------------------------------------------------------------


def replay(deck: list[int], first_player: int, actions: list[int]) -> Any:
    env = scopa_v0.raw_env(episode="deal")
    env.reset(options={"deck": deck, "first_player": first_player})
    for action in actions:
        env.step(action)
    return env


@pytest.mark.parametrize("seed", range(12))
def test_no_leak_of_hidden_card_order(seed: int) -> None:
    """Two decks that differ only in cards a player cannot see look the same to that player."""
    rng = np.random.default_rng(seed)
    deck = rng.permutation(40).tolist()
    first = int(rng.integers(2))
    env = replay(deck, first, [])
    actions: list[int] = []
    for _ in range(int(rng.integers(0, 70))):
        if env.deal.is_over:
            break
        actions.append(random_step(env, rng))
    viewers = [env.deal.current_player]
    if env.phase == "play" and not env.deal.is_over:
        viewers.append(1 - env.deal.current_player)
    for viewer in viewers:
        hidden = hidden_cards(env, viewer)
        positions = [i for i, card in enumerate(deck) if hidden >> card & 1]
        for _ in range(3):
            other = list(deck)
            shuffled = rng.permutation([deck[i] for i in positions])
            for i, card in zip(positions, shuffled, strict=True):
                other[i] = int(card)
            twin = replay(other, first, actions)
            agent = AGENTS[viewer]
            np.testing.assert_array_equal(
                env.observe(agent)["observation"], twin.observe(agent)["observation"]
            )
            np.testing.assert_array_equal(
                env.observe(agent)["action_mask"], twin.observe(agent)["action_mask"]
            )


def test_observation_holds_no_hidden_card() -> None:
    rng = np.random.default_rng(1)
    env = scopa_v0.raw_env()
    env.reset(seed=1)
    for _ in range(200):
        for player, agent in enumerate(AGENTS):
            obs = env.observe(agent)["observation"]
            hidden = hidden_cards(env, player)
            seen = 0
            for name in ("hand", "table", "my_captures", "opp_captures", "my_played"):
                seen |= mask_of(np.flatnonzero(plane(obs, name)).tolist())
            seen |= mask_of(np.flatnonzero(plane(obs, "opp_played")).tolist())
            assert not seen & hidden
            unseen = mask_of(np.flatnonzero(plane(obs, "unseen")).tolist())
            pending = 0 if env.pending_card is None else 1 << env.pending_card
            if player == env.deal.current_player:
                assert unseen == hidden
            else:
                assert unseen == hidden | pending
        if all(env.terminations.values()):
            break
        random_step(env, rng)


# The capture choice: every legal capture is reachable, nothing else ------------------------


def reachable_captures(env: Any, card: int) -> set[frozenset[int]]:
    """Every capture reachable by playing ``card`` then following the mask, by search."""
    player = env.deal.current_player
    before = set(env.deal.captures[player])
    found: set[frozenset[int]] = set()

    def explore(state: Any) -> None:
        if state.phase == "pick":
            for action in state.legal_actions():
                assert action >= PICK_OFFSET
                child = copy.deepcopy(state)
                child.step(action)
                explore(child)
        else:
            found.add(frozenset(set(state.deal.captures[player]) - before - {card}))

    start = copy.deepcopy(env)
    start.step(card)
    explore(start)
    return found


@pytest.mark.parametrize("rules", RULES)
def test_every_legal_capture_is_reachable_and_nothing_else(rules: str | None) -> None:
    rng = np.random.default_rng(7)
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    checked = 0
    for game in range(6):
        env.reset(seed=game)
        while not env.deal.is_over:
            if env.phase == "play":
                for card in env.legal_actions():
                    legal = set(env.deal.capture_options(card)) or {frozenset()}
                    if len(legal) > 1:
                        checked += 1
                    if env.deal.stock or len(env.deal.hands[env.deal.current_player]) > 1:
                        # (a capture on the final play also sweeps leftovers; skip that case)
                        assert reachable_captures(env, card) == legal
            random_step(env, rng)
    assert checked > 0


# Illegal actions -----------------------------------------------------------------------------


@pytest.mark.parametrize("action", [play("KB"), take("5C"), 80, -1, None, 1.5, "6", np.int64(99)])
def test_raw_env_rejects_an_illegal_action_and_changes_nothing(action: Any) -> None:
    env = scripted_env()
    before = snapshot(env)
    with pytest.raises(IllegalActionError) as error:
        env.step(action)
    assert isinstance(error.value, ValueError)
    message = str(error.value)
    assert repr(action) in message and "player_0" in message
    assert "legal actions: 4 (play 5D), 5 (play 6D), 13 (play 4C)" in message
    assert_same(before, snapshot(env))


def test_raw_env_rejects_an_illegal_pick_and_changes_nothing() -> None:
    env = scripted_env()
    env.step(play("6D"))
    env.step(take("AB"))
    before = snapshot(env)
    assert env.legal_actions() == [take("5C"), take("5S")]  # 6 = AB+5C = AB+5S
    for action in (take("AB"), take("3B"), play("4C")):
        with pytest.raises(IllegalActionError, match=re.escape("picked AB")):
            env.step(action)
        assert_same(before, snapshot(env))


def test_wrapped_env_ends_the_game_on_an_illegal_action() -> None:
    env = scopa_v0.env()
    env.reset(seed=0, options={"deck": list(parse_cards(SCRIPTED_DECK))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(play("KB"))  # player_0 does not hold KB
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0}
    _, reward, termination, _, _ = env.last()
    assert termination and reward == env._cumulative_rewards[env.agent_selection]
    for _ in AGENTS:
        env.step(None)
    assert env.agents == []


def test_wrapped_env_asserts_actions_in_bounds() -> None:
    env = scopa_v0.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError):
        env.step(80)


# Rewards and episodes ----------------------------------------------------------------------


@pytest.mark.parametrize("reward", ["match", "points"])
@pytest.mark.parametrize("target", [1, 11])
def test_match_episode_rewards_and_winner(reward: str, target: int) -> None:
    rng = np.random.default_rng(target)
    env = scopa_v0.env(rules=Rules(target=target), reward=reward)
    env.reset(seed=target)
    totals = dict.fromkeys(AGENTS, 0.0)
    deals = 0
    final: dict[str, Any] = {}
    for agent in env.agent_iter():
        obs, reward_now, termination, truncation, info = env.last()
        totals[agent] += reward_now
        if "deal_score" in info:
            deals += agent == "player_0"
        if termination:
            final[agent] = info
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    match = env.unwrapped.match
    winner = AGENTS[match.winner]
    assert match.is_over and max(match.scores) >= target
    assert final["player_0"]["winner"] == final["player_1"]["winner"] == winner
    assert final["player_0"]["match_score"] == match.scores
    assert totals["player_0"] == -totals["player_1"]
    if reward == "match":
        assert totals[winner] == 1.0
    else:
        assert totals["player_0"] == match.scores[0] - match.scores[1]
    assert deals >= 1


def test_deal_episode_ends_after_one_deal() -> None:
    env = scopa_v0.raw_env(episode="deal", reward="match")
    for seed in range(5):
        env.reset(seed=seed)
        steps = 0
        while not any(env.terminations.values()):
            random_step(env, np.random.default_rng(seed))
            steps += 1
        assert env.match.deals_played == 1 and 36 <= steps <= 36 + 36 * 4
        totals = [s["total"] for s in env.infos["player_0"]["deal_score"]]
        if totals[0] == totals[1]:
            assert env.infos["player_0"]["winner"] is None
            assert env._cumulative_rewards == {"player_0": 0.0, "player_1": 0.0}
        else:
            winner = AGENTS[int(totals[1] > totals[0])]
            assert env.infos["player_1"]["winner"] == winner
            assert env._cumulative_rewards[winner] == 1.0


# Reset, seeding and options ----------------------------------------------------------------


def test_same_seed_same_game_and_unseeded_resets_continue() -> None:
    a, b = scopa_v0.raw_env(), scopa_v0.raw_env()
    a.reset(seed=42)
    b.reset(seed=42)
    assert a.deal == b.deal and a.agent_selection == b.agent_selection
    first = a.deal.to_dict()
    a.reset()
    assert a.deal.to_dict() != first
    a.reset(seed=42)
    assert a.deal.to_dict() == first


def test_reset_with_a_deck_replays_the_deal_with_either_first_player() -> None:
    deck = list(parse_cards(SCRIPTED_DECK))
    env = scopa_v0.raw_env(rules="napola", episode="deal")
    for seed, first in ((1, 0), (2, 1), (None, 1)):
        env.reset(seed=seed, options={"deck": deck, "first_player": first})
        assert env.deal.first_player == first and env.agent_selection == AGENTS[first]
        assert env.deal.hands[first] == parse_cards("5D 6D 4C")
        assert env.match.dealer == 1 - first and env.rules.napola  # configuration kept
    env.reset(options={"deck": deck})
    assert env.deal.first_player == 0
    env.reset(seed=3, options={"first_player": 1})
    assert env.deal.first_player == 1 and env.deal.to_dict() != scripted_env().deal.to_dict()


@pytest.mark.parametrize(
    "options, message",
    [
        ({"deck": list(range(39))}, "40 cards"),
        ({"deck": [0] * 40}, "40 cards"),
        ({"deck": list(range(40)), "first_player": 2}, "first_player"),
        ({"first_player": True}, "first_player"),
        ("deck", "dict"),
    ],
)
def test_bad_reset_options_raise_and_keep_the_game(options: Any, message: str) -> None:
    env = scripted_env()
    before = snapshot(env)
    with pytest.raises(ValueError, match=message):
        env.reset(options=options)
    assert_same(before, snapshot(env))


def test_failed_reset_keeps_the_generator() -> None:
    a, b = scopa_v0.raw_env(), scopa_v0.raw_env()
    a.reset(seed=1)
    b.reset(seed=1)
    with pytest.raises(ValueError):
        a.reset(seed=99, options={"deck": [1, 2, 3]})
    a.reset()
    b.reset()
    assert a.deal == b.deal


def test_human_mode_prints_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = scripted_env(render_mode="human")
    capsys.readouterr()
    env.step(play("5D"))  # opens the capture choice
    assert "to pick table cards for 5D" in capsys.readouterr().out
    env.step(take("5C"))
    assert "player_1 to play a card" in capsys.readouterr().out


def test_unknown_reset_option_warns() -> None:
    env = scopa_v0.raw_env()
    with pytest.warns(UserWarning, match="unknown option"):
        env.reset(options={"dek": list(range(40))})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rules": "scopone"}, "unknown rules preset"),
        ({"rules": {"target": 0}}, "target"),
        ({"rules": 3}, "rules must be"),
        ({"episode": "game"}, "episode"),
        ({"reward": "win"}, "reward"),
        ({"render_mode": "rgb"}, "render_mode"),
        ({"show_hands": "player_2"}, "show_hands"),
    ],
)
def test_invalid_construction_raises(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scopa_v0.raw_env(**kwargs)
    with pytest.raises(ValueError, match=message):
        scopa_v0.env(**kwargs)


# Spaces, observations, introspection and documentation -------------------------------------


def test_spaces_and_observations() -> None:
    env = scopa_v0.env()
    env.reset(seed=0)
    space = env.observation_space("player_0")
    assert space["observation"].shape == (OBS_SIZE,) and space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (80,) and space["action_mask"].dtype == np.int8
    assert env.action_space("player_1").n == 80
    obs = env.observe(env.agent_selection)
    assert space.contains(obs)
    hand = plane(obs["observation"], "hand")
    assert hand.sum() == 3 and (obs["action_mask"][:40] == hand).all()
    assert env.observe(env.agent_selection) is obs  # cached within a step


def test_engine_is_exposed_through_the_wrappers() -> None:
    env = scopa_v0.env(rules="re_bello")
    env.reset(seed=0)
    assert isinstance(env.deal, scopa_env.Deal) and isinstance(env.match, scopa_env.Match)
    assert env.deal.rules.re_bello and env.match.rules == env.deal.rules
    assert env.unwrapped.describe_action(6) == "play 7D"
    assert env.unwrapped.describe_action(46) == "take 7D"
    with pytest.raises(ValueError):
        env.unwrapped.describe_action(80)
    with pytest.raises(AttributeError, match="reset"):
        _ = scopa_v0.raw_env().deal


def test_docstring_layout_table_matches_the_code() -> None:
    rows = re.findall(r"^\| (\d+) +\| `(\w+)` +\| (\d+) +\|", scopa_v0.__doc__, re.MULTILINE)
    assert len(rows) == len(OBS_SLICES)
    for start, name, size in rows:
        assert OBS_SLICES[name] == slice(int(start), int(start) + int(size)), name
    assert f"Observation Shape  | ({OBS_SIZE},)" in scopa_v0.__doc__


# Rendering -----------------------------------------------------------------------------------


def test_ansi_hides_the_opponent_hand_unless_asked() -> None:
    env = scripted_env(render_mode="ansi")
    text = env.render()
    assert "5D 6D 4C" in text and "2C" not in text.split("table")[0].split("hand")[1]
    assert "?? ?? ??" in text and "player_0 to play a card" in text
    assert "5C 5S AB 3B" in text
    env.step(play("6D"))
    env.step(take("AB"))
    text = env.render()
    assert "playing 6D, picked: AB" in text and "to pick table cards for 6D" in text
    everything = scripted_env(render_mode="ansi", show_hands="all").render()
    assert "2C 4S 5B" in everything and "??" not in everything
    seat_1 = scripted_env(render_mode="ansi", show_hands="player_1").render()
    assert "2C 4S 5B" in seat_1 and "5D 6D 4C" not in seat_1


def test_ansi_reports_plays_scope_and_the_result() -> None:
    env = scripted_env(render_mode="ansi", episode="deal")
    for _, _, action in SCRIPT[:7]:
        env.step(parse_action(action))
    assert "player_1 played 5B and took 5C  SCOPA!" in env.render()
    for _, _, action in SCRIPT[7:]:
        env.step(parse_action(action))
    text = env.render()
    assert "game over: player_1 wins" in text and "took 7B" in text and "SCOPA" not in text
    assert env.last_play == Play(player=1, card=play("7S"), capture=1 << play("7B"), scopa=False)
    assert describe_play(env.last_play) == "player_1 played 7S and took 7B"
    assert describe_play(None) == "-"
    env.reset(seed=0)
    assert env.last_play is None


def test_rgb_array_image() -> None:
    env = scripted_env(render_mode="rgb_array")
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 10
    env.step(play("6D"))
    assert not np.array_equal(image, env.render())


def test_render_without_mode_warns_and_returns_none() -> None:
    env = scripted_env()
    with pytest.warns(UserWarning, match="render"):
        assert env.render() is None
