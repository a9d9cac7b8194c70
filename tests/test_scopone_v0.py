"""The PettingZoo AEC environment ``scopone_v0``: API conformance, scripted deals worked out by
hand from RULES.md section 8, no leaks, illegal actions, rewards, pickling, rendering, players
and the evaluation harness."""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from functools import partial
from math import comb
from typing import Any

import numpy as np
import pettingzoo
import pytest
from conftest import assert_same, bombardment, hidden_cards, play, random_step, snapshot, take
from pettingzoo.test import api_test, render_test, seed_test

import scopa_env
from agents import make_agent
from agents.determinize import Determinizer
from agents.seats import SeatView
from cli import main as cli
from evaluation.harness import duplicate_deck, evaluate
from evaluation.report import markdown_report
from scopa_env import render, scopone_observation, scopone_v0
from scopa_env.cards import card_name, mask_of, parse_card, parse_cards
from scopa_env.info_state import InfoState
from scopa_env.rules import PRESETS, Rules
from scopa_env.scopone_observation import OBS_SIZE, OBS_SLICES, plane
from scopa_env.scopone_v0 import IllegalActionError

# PettingZoo's bombardment_test, repaired for dict observations (see test_scopa_v0).

AGENTS = ("player_0", "player_1", "player_2", "player_3")
DEALS = ("scopone", "scopone_scientifico")
RULES = [None, *sorted(PRESETS)]


def cards(names: str) -> set[int]:
    return set(parse_cards(names))


def plane_cards(obs: np.ndarray, name: str) -> set[int]:
    return set(np.flatnonzero(plane(obs, name)).tolist())


def deck_of(hands: list[str], table: str = "") -> list[int]:
    """The deck that deals ``hands[s]`` to seat ``s`` when player_0 leads (RULES.md 8 and the
    convention of ``scopone_v0``: one card at a time in seat order, then the table)."""
    split = [parse_cards(h) for h in hands]
    deck = [split[seat][k] for k in range(len(split[0])) for seat in range(4)]
    return deck + list(parse_cards(table))


# PettingZoo's own tests, for both deals and every preset --------------------------------


@pytest.mark.parametrize("deal", DEALS)
@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_api(deal: str, rules: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test passes an unknown reset option on purpose
        api_test(scopone_v0.env(rules=rules, deal=deal), num_cycles=200)
        api_test(scopone_v0.env(rules=rules, deal=deal, episode="deal", reward="points"))


@pytest.mark.parametrize("deal", DEALS)
def test_pettingzoo_seed(deal: str) -> None:
    seed_test(partial(scopone_v0.env, deal=deal), num_cycles=300)


@pytest.mark.parametrize("deal", DEALS)
def test_pettingzoo_render(deal: str, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(partial(scopone_v0.env, deal=deal))
    assert "Scopone" in capsys.readouterr().out


@pytest.mark.parametrize("deal", DEALS)
@pytest.mark.parametrize("rules", [None, "scopa_a_quindici", "asso_pigliatutto"])
def test_pettingzoo_bombardment(deal: str, rules: str | None) -> None:
    bombardment(scopone_v0.env(rules=rules, deal=deal), cycles=100)


@pytest.mark.parametrize("deal", DEALS)
def test_pickle_round_trip_keeps_the_game(deal: str) -> None:
    rng = np.random.default_rng(3)
    env = scopone_v0.env(deal=deal, reward="points")
    env.reset(seed=11)
    for _ in range(int(rng.integers(1, 60))):
        random_step(env, rng)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.deal == env.unwrapped.deal and clone.unwrapped.table.name == deal
    for _ in range(400):
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
        clone.step(random_step(env, rng))
    assert clone.unwrapped.match.scores == env.unwrapped.match.scores
    assert env.unwrapped.match.deals_played >= 2  # the generator travelled with the game
    fresh = pickle.loads(pickle.dumps(scopone_v0.raw_env(deal=deal, episode="deal")))
    assert fresh.episode == "deal" and fresh.table.name == deal
    twin = copy.deepcopy(env.unwrapped)
    assert twin.deal == env.unwrapped.deal and twin.deal is not env.unwrapped.deal


@pytest.mark.skipif(
    not hasattr(pettingzoo, "aec_registry"), reason="PettingZoo < 1.27 has no registry"
)
def test_registered_with_pettingzoo() -> None:
    assert "scopa/scopone-v0" in pettingzoo.aec_registry
    env = pettingzoo.make("aec", "scopa/scopone-v0", deal="scopone_scientifico", rules="napola")
    env.reset(seed=0)
    assert str(env) == "scopone_v0" and env.unwrapped.rules.napola
    assert env.unwrapped.deal.kind.name == "scopone_scientifico"
    assert scopa_env.scopone_v0 is scopone_v0 and env.possible_agents == list(AGENTS)


# A scripted Scopone deal, worked out by hand ---------------------------------------------

HANDS = [
    "5D 4C 7D AD 2D 3D 4D JD QD",  # player_0, who leads (player_3 deals)
    "2C 4S AC 3C 6C 7C JC QC KC",  # player_1
    "6D KD AS 2S 3S 6S 7S JS QS",  # player_2, player_0's partner
    "5B KS 2B 4B 6B 7B JB QB KB",  # player_3
]
TABLE = "5C 5S AB 3B"


def scripted_env(**kwargs: Any) -> Any:
    env = scopone_v0.raw_env(**kwargs)
    env.reset(seed=0, options={"deck": deck_of(HANDS, TABLE), "first_player": 0})
    return env


def legal(env: Any) -> list[int]:
    mask = env.observe(env.agent_selection)["action_mask"]
    assert mask.dtype == np.int8 and env.legal_actions() == np.flatnonzero(mask).tolist()
    for agent in AGENTS:
        if agent != env.agent_selection:
            assert not env.observe(agent)["action_mask"].any()
    return env.legal_actions()


def test_scripted_deal_masks_captures_and_scope() -> None:
    env = scripted_env(episode="deal", reward="points")
    deal = env.deal
    assert [set(h) for h in deal.hands] == [cards(h) for h in HANDS]
    assert set(deal.table) == cards(TABLE) and deal.dealer == 3

    # 5D: the equal cards 5C and 5S are on the table; single-card priority offers just those.
    assert env.agent_selection == "player_0"
    assert legal(env) == sorted(play(c) for c in HANDS[0].split())
    env.step(play("5D"))
    assert env.agent_selection == "player_0" and env.phase == "pick"
    assert legal(env) == sorted([take("5C"), take("5S")])
    env.step(take("5S"))

    # 2C: no 2 on 5C AB 3B and no two cards sum to 2: laid down.
    assert env.agent_selection == "player_1"
    assert legal(env) == sorted(play(c) for c in HANDS[1].split())
    env.step(play("2C"))
    assert set(env.deal.table) == cards("5C AB 3B 2C")

    # 6D: 6 = 5C+AB = AB+3B+2C. Picking AB keeps both open; then 3B decides.
    env.step(play("6D"))
    assert legal(env) == sorted(take(c) for c in ("5C", "AB", "3B", "2C"))
    env.step(take("AB"))
    assert legal(env) == sorted(take(c) for c in ("5C", "3B", "2C"))
    env.step(take("3B"))
    assert env.deal.table == (parse_card("5C"),)

    # 5B takes the lone 5C: a scopa for player_3's partnership.
    env.step(play("5B"))
    assert env.last_play.scopa and env.deal.scope == (0, 0, 0, 1)
    # 4C is laid on the empty table; 4S takes it with another scopa.
    env.step(play("4C"))
    env.step(play("4S"))
    assert env.deal.scope == (0, 1, 0, 1) and env.deal.team_scope == (0, 2)
    assert set(env.deal.team_captures[0]) == cards("5D 5S 6D AB 3B 2C")
    assert set(env.deal.team_captures[1]) == cards("5B 5C 4S 4C")
    assert env.agent_selection == "player_2"
    assert env.rewards == dict.fromkeys(AGENTS, 0.0)


def test_scripted_observation_of_every_feature() -> None:
    env = scripted_env()
    for action in (play("5D"), take("5S"), play("2C"), play("6D"), take("AB"), take("3B")):
        env.step(action)
    for action in (play("5B"), play("4C"), play("4S")):
        env.step(action)
    obs = env.observe("player_2")["observation"]
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    expected = {
        "hand": cards("KD AS 2S 3S 6S 7S JS QS"),
        "table": set(),
        "our_captures": cards("5D 5S 6D AB 3B 2C"),
        "their_captures": cards("5B 5C 4S 4C"),
        "my_played": cards("6D"),
        "next_played": cards("5B"),  # player_3
        "partner_played": cards("5D 4C"),  # player_0
        "prev_played": cards("2C 4S"),  # player_1
        # Everything in the three other hands, the partner's too.
        "unseen": cards("KS 2B 4B 6B 7B JB QB KB 7D AD 2D 3D 4D JD QD AC 3C 6C 7C JC QC KC"),
        "pending": set(),
        "picked": set(),
    }
    for name, want in expected.items():
        assert plane_cards(obs, name) == want, name
    scalars = {
        "phase": [1, 0],
        "hand_sizes": [0.8, 0.7, 0.7],  # player_3 holds 8, player_0 and player_1 hold 7
        "scope": [0, 2 / 20],
        "match_score": [0, 0],
        "target": [0.11],
        "dealer": [0, 1, 0, 0],  # player_3 deals: the next player from player_2
        "last_capturer": [0, 1, 0],  # player_1: the opponents
    }
    for name, want in scalars.items():
        np.testing.assert_allclose(plane(obs, name), want, rtol=1e-6, err_msg=name)
    # The mask of the player to move is its hand; player_0 sees the same piles from its seat.
    mask = env.observe("player_2")["action_mask"]
    assert set(np.flatnonzero(mask).tolist()) == expected["hand"]
    mine = env.observe("player_0")["observation"]
    assert plane_cards(mine, "our_captures") == expected["our_captures"]
    assert plane_cards(mine, "partner_played") == cards("6D")
    assert plane_cards(mine, "next_played") == cards("2C 4S")
    np.testing.assert_allclose(plane(mine, "dealer"), [0, 0, 0, 1])
    np.testing.assert_allclose(plane(mine, "hand_sizes"), [0.7, 0.8, 0.8])


def test_capture_choice_is_hidden_from_the_others_until_made() -> None:
    env = scripted_env()
    env.step(play("5D"))
    chooser = env.observe("player_0")["observation"]
    assert plane_cards(chooser, "pending") == cards("5D")
    assert plane_cards(chooser, "hand") == cards(HANDS[0]) - cards("5D")
    for agent in AGENTS[1:]:
        obs = env.observe(agent)["observation"]
        assert plane(obs, "phase").tolist() == [1.0, 0.0] and not plane(obs, "pending").any()
        assert parse_card("5D") in plane_cards(obs, "unseen")
    # player_1 sees player_0 (its previous player) still holding nine cards.
    assert plane(env.observe("player_1")["observation"], "hand_sizes")[2] == pytest.approx(0.9)


# One whole deal worked out by hand: scientifico, one suit per seat ------------------------

# Each seat holds one suit (player_0 coins, player_1 cups, player_2 swords, player_3 clubs).
# Scripted: in round k player_0 lays the k of coins on the empty table and player_1 takes it with
# the k of cups (a scopa), then player_2 lays the k of swords and player_3 takes it with the k of
# clubs (a scopa, except the very last play of the deal).
SUIT_HANDS = [" ".join(rank + suit for rank in "A234567JQK") for suit in "DCSB"]


def play_suits(env: Any) -> None:
    for rank in "A234567JQK":
        for seat, suit in enumerate("DCSB"):
            assert env.agent_selection == AGENTS[seat]
            remaining = SUIT_HANDS[seat][SUIT_HANDS[seat].index(rank + suit) :].split()
            assert legal(env) == sorted(play(c) for c in remaining)
            env.step(play(rank + suit))


@pytest.mark.parametrize("last_play_scopa", [False, True])
def test_whole_scientifico_deal_rewards_and_infos(last_play_scopa: bool) -> None:
    env = scopone_v0.raw_env(
        rules=Rules(last_play_scopa=last_play_scopa),
        deal="scopone_scientifico",
        episode="deal",
        reward="points",
    )
    env.reset(options={"deck": deck_of(SUIT_HANDS), "first_player": 0})
    play_suits(env)
    # Partnership 1 took all 40 cards: cards, coins, settebello and primiera (partnership 0
    # has no suit at all), plus 10 scope by player_1 and 9 (10) by player_3.
    scope = 20 if last_play_scopa else 19
    total = 4 + scope
    assert env.deal.scope == (0, 10, 0, scope - 10)
    expected_scores = [
        {"cards": 0, "coins": 0, "settebello": 0, "primiera": 0, "scope": 0, "total": 0},
        {"cards": 1, "coins": 1, "settebello": 1, "primiera": 1, "scope": scope, "total": total},
    ]
    for agent in AGENTS:
        info = env.infos[agent]
        assert info["winner"] == ("player_1", "player_3")
        assert info["match_score"] == (0, total)
        for got, want in zip(info["deal_score"], expected_scores, strict=True):
            assert {k: got[k] for k in want} == want
    assert env.rewards == {
        "player_0": -total,
        "player_1": total,
        "player_2": -total,
        "player_3": total,
    }
    assert all(env.terminations.values())
    assert not any(env.observe(a)["action_mask"].any() for a in AGENTS)


def test_whole_scientifico_match_reward_goes_to_both_partners() -> None:
    env = scopone_v0.env(deal="scopone_scientifico")  # a match to 11, reward "match"
    env.reset(options={"deck": deck_of(SUIT_HANDS), "first_player": 0})
    play_suits(env.unwrapped)
    # 23-0 after one deal: partnership 1 reaches 11 with a strict lead.
    assert env.unwrapped.match.scores == (0, 23) and env.unwrapped.match.winner == 1
    rewards = {}
    for agent in env.agent_iter():
        _, reward, termination, _, info = env.last()
        assert termination and info["winner"] == ("player_1", "player_3")
        rewards[agent] = reward
        env.step(None)
    assert rewards == {"player_0": -1.0, "player_1": 1.0, "player_2": -1.0, "player_3": 1.0}
    assert env.agents == []


def test_ansi_shows_partnerships_and_the_result() -> None:
    env = scopone_v0.raw_env(deal="scopone_scientifico", episode="deal", render_mode="ansi")
    env.reset(options={"deck": deck_of(SUIT_HANDS), "first_player": 0})
    text = env.render()
    assert "Scopone scientifico  deal 1" in text
    assert "player_0 (first player)  hand   " + SUIT_HANDS[0] in text
    assert "player_1                 hand   " + " ".join(["??"] * 10) in text
    assert "player_3 (dealer)" in text and "player_0 to play a card" in text
    play_suits(env)
    text = env.render()
    assert "player_1 + player_3  match 23  captured 40 cards, 10 coins, 7D  scope 19" in text
    assert "last play: player_3 played KB and took KS" in text and "SCOPA" not in text
    assert "game over: player_1 and player_3 win" in text


# Information: no leaks ---------------------------------------------------------------------


def replay(deck: list[int], first: int, deal: str, actions: list[int]) -> Any:
    env = scopone_v0.raw_env(deal=deal, episode="deal")
    env.reset(options={"deck": deck, "first_player": first})
    for action in actions:
        env.step(action)
    return env


@pytest.mark.parametrize("deal", DEALS)
@pytest.mark.parametrize("seed", range(6))
def test_no_leak_of_hidden_cards(deal: str, seed: int) -> None:
    """Decks that differ only in cards a player cannot see look the same to that player."""
    rng = np.random.default_rng(seed)
    deck = rng.permutation(40).tolist()
    first = int(rng.integers(4))
    env = replay(deck, first, deal, [])
    actions = [random_step(env, rng) for _ in range(int(rng.integers(0, 38)))]
    for viewer in range(4):
        hidden = hidden_cards(env, viewer)
        positions = [i for i, card in enumerate(deck) if hidden >> card & 1]
        for _ in range(2):
            other = list(deck)
            shuffled = rng.permutation([deck[i] for i in positions])
            for i, card in zip(positions, shuffled, strict=True):
                other[i] = int(card)
            twin = replay(other, first, deal, actions)
            for key in ("observation", "action_mask"):
                np.testing.assert_array_equal(
                    env.observe(AGENTS[viewer])[key], twin.observe(AGENTS[viewer])[key]
                )


def test_observations_hold_no_hidden_card() -> None:
    rng = np.random.default_rng(1)
    env = scopone_v0.raw_env()
    env.reset(seed=1)
    for _ in range(300):
        for player, agent in enumerate(AGENTS):
            obs = env.observe(agent)["observation"]
            # A pending card is still in the chooser's hand: hidden from the three others.
            hidden = hidden_cards(env, player)
            seen = 0
            for name in scopone_observation.PLANES:
                if name != "unseen":
                    seen |= mask_of(plane_cards(obs, name))
            assert not seen & hidden
            assert mask_of(plane_cards(obs, "unseen")) == hidden
        if all(env.terminations.values()):
            break
        random_step(env, rng)


# Illegal actions -----------------------------------------------------------------------------


# snapshot(env) and assert_same(a, b): every observable part of the state, compared.


@pytest.mark.parametrize(
    "action", [play("2C"), play("KB"), take("5C"), 80, -1, None, 1.5, "6", np.int64(99)]
)
def test_raw_env_rejects_an_illegal_action_and_changes_nothing(action: Any) -> None:
    env = scripted_env()
    before = snapshot(env)
    with pytest.raises(IllegalActionError) as error:
        env.step(action)
    assert isinstance(error.value, ValueError)
    message = str(error.value)
    assert repr(action) in message and "player_0, who is playing a card" in message
    assert "4 (play 5D)" in message and "13 (play 4C)" in message
    assert_same(before, snapshot(env))


def test_raw_env_rejects_an_illegal_pick_and_changes_nothing() -> None:
    env = scripted_env()
    env.step(play("5D"))
    before = snapshot(env)
    for action in (take("AB"), play("4C"), take("5D")):
        with pytest.raises(IllegalActionError, match=re.escape("choosing the capture for 5D")):
            env.step(action)
        assert_same(before, snapshot(env))


def test_wrapped_env_ends_the_game_on_an_illegal_action() -> None:
    env = scopone_v0.env()
    env.reset(options={"deck": deck_of(HANDS, TABLE)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(play("2C"))  # player_1's card, not player_0's
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 0.0, "player_3": 0.0}
    bounded = scopone_v0.env()
    bounded.reset(seed=0)
    with pytest.raises(AssertionError):
        bounded.step(80)


# Construction and reset options ------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"deal": "scopa"}, "deal must be one of"),
        ({"deal": None}, "deal must be one of"),
        ({"rules": "scopone"}, "unknown rules preset"),
        ({"rules": {"target": 0}}, "target"),
        ({"episode": "game"}, "episode"),
        ({"reward": "win"}, "reward"),
        ({"render_mode": "rgb"}, "render_mode"),
        ({"show_hands": "player_4"}, "show_hands"),
    ],
)
def test_invalid_construction_raises(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scopone_v0.raw_env(**kwargs)
    with pytest.raises(ValueError, match=message):
        scopone_v0.env(**kwargs)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"deck": list(range(39))}, "40 cards"),
        ({"deck": list(range(40)), "first_player": 4}, "0, 1, 2 or 3"),
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


def test_reset_options_and_seeds() -> None:
    env = scopone_v0.raw_env()
    for first in range(4):
        env.reset(options={"deck": deck_of(HANDS, TABLE), "first_player": first})
        assert env.agent_selection == AGENTS[first] and env.deal.dealer == (first + 3) % 4
        # deck[i] goes to seat (first + i) % 4: seat first holds what player_0 held above.
        assert set(env.deal.hands[first]) == cards(HANDS[0])
    a, b = scopone_v0.raw_env(), scopone_v0.raw_env()
    a.reset(seed=42)
    b.reset(seed=42)
    assert a.deal == b.deal and a.agent_selection == b.agent_selection
    with pytest.warns(UserWarning, match="unknown option"):
        a.reset(options={"dek": 1})


# Random games: invariants ------------------------------------------------------------------


@pytest.mark.parametrize("deal", DEALS)
@pytest.mark.parametrize("rules", RULES)
def test_random_matches_keep_cards_and_team_points_consistent(deal: str, rules: Any) -> None:
    rng = np.random.default_rng(len(deal) + len(str(rules)))
    env = scopone_v0.env(rules=rules, deal=deal, reward="points")
    env.reset(seed=int(rng.integers(1 << 30)))
    raw = env.unwrapped
    totals = dict.fromkeys(AGENTS, 0.0)
    deal_points = [0, 0]
    winners = set()
    for agent in env.agent_iter():
        obs, reward, termination, _, info = env.last()
        totals[agent] += reward
        if agent == "player_0" and "deal_score" in info:  # once per deal
            deal_points[0] += info["deal_score"][0]["total"]
            deal_points[1] += info["deal_score"][1]["total"]
        if termination:
            winners.add(info["winner"])
            env.step(None)
            continue
        d = raw.deal
        places = [*d.hands, d.table, *d.captures]
        assert sorted(c for place in places for c in place) == list(range(40))
        for player, name in enumerate(AGENTS):
            sizes = plane(env.observe(name)["observation"], "hand_sizes") * 10
            assert np.rint(sizes).tolist() == [len(d.hands[(player + k) % 4]) for k in (1, 2, 3)]
        legal_actions = np.flatnonzero(obs["action_mask"])
        env.step(int(legal_actions[rng.integers(len(legal_actions))]))
    match = raw.match
    assert match.is_over and tuple(deal_points) == match.scores
    assert totals["player_0"] == totals["player_2"] == match.scores[0] - match.scores[1]
    assert totals["player_1"] == totals["player_3"] == -totals["player_0"]
    assert winners == {scopone_v0.TEAMS[match.winner]}


# Spaces, introspection and documentation ---------------------------------------------------


def test_spaces_and_observations() -> None:
    env = scopone_v0.env(deal="scopone_scientifico")
    env.reset(seed=0)
    space = env.observation_space("player_3")
    assert space["observation"].shape == (OBS_SIZE,) and space["action_mask"].shape == (80,)
    assert env.action_space("player_2").n == 80
    obs = env.observe(env.agent_selection)
    assert space.contains(obs) and plane(obs["observation"], "hand").sum() == 10
    assert env.observe(env.agent_selection) is obs
    assert env.unwrapped.describe_action(46) == "take 7D"


def test_docstring_layout_tables_match_the_code() -> None:
    rows = re.findall(r"^\| (\d+) +\| `(\w+)` +\| (\d+) +\|", scopone_v0.__doc__, re.MULTILINE)
    assert len(rows) == len(OBS_SLICES)
    for start, name, size in rows:
        assert OBS_SLICES[name] == slice(int(start), int(start) + int(size)), name
    assert f"Observation Shape  | ({OBS_SIZE},)" in scopone_v0.__doc__
    rows = re.findall(r"^(\d+) +``(\w+)`` +(\d+) ", scopone_observation.__doc__, re.MULTILINE)
    assert len(rows) == len(OBS_SLICES)
    for start, name, size in rows:
        assert OBS_SLICES[name] == slice(int(start), int(start) + int(size)), name


def test_rgb_array_image() -> None:
    env = scripted_env(render_mode="rgb_array")
    image = env.render()
    assert image.shape == (render.SCOPONE_HEIGHT, render.WIDTH, 3) and image.dtype == np.uint8
    env.step(play("5D"))
    assert not np.array_equal(image, env.render())


def test_show_hands_all() -> None:
    shown = [" ".join(card_name(c) for c in sorted(parse_cards(hand))) for hand in HANDS]
    text = scripted_env(render_mode="ansi", show_hands="all").render()
    assert "??" not in text and all(hand in text for hand in shown)
    text = scripted_env(render_mode="ansi", show_hands="player_2").render()
    assert shown[2] in text and shown[0] not in text and "?? ??" in text


# Players and the evaluation harness --------------------------------------------------------


def test_info_state_reads_the_partnership_view() -> None:
    env = scripted_env()
    for action in (play("5D"), take("5S"), play("2C"), play("6D"), take("AB"), take("3B")):
        env.step(action)
    for action in (play("5B"), play("4C"), play("4S")):
        env.step(action)
    info = InfoState.from_observation(env.observe("player_2")["observation"])
    assert info.hand == mask_of(cards("KD AS 2S 3S 6S 7S JS QS"))
    assert info.piles == (mask_of(cards("5D 5S 6D AB 3B 2C")), mask_of(cards("5B 5C 4S 4C")))
    assert info.played == (mask_of(cards("6D 5D 4C")), mask_of(cards("5B 2C 4S")))
    assert info.opp_hand_size == 8 and info.other_hands == (8, 7, 7)
    assert info.scope == (0, 2) and info.last_capturer == 1 and not info.is_dealer
    assert info.stock_size == 0 and info.cards_to_play == 30 and not info.is_last_play
    view = SeatView.from_observation(env.observe("player_2")["observation"])
    sample = Determinizer(view, Rules()).sample(np.random.default_rng(0))
    assert [len(h) for h in sample.hands] == [8, 8, 7, 7] and not sample.stock


@pytest.mark.parametrize("deal", DEALS)
@pytest.mark.parametrize("name", ["random", "greedy", "heuristic"])
def test_players_play_scopone(deal: str, name: str) -> None:
    env = scopone_v0.raw_env(deal=deal, rules="napola", episode="deal")
    player = make_agent(name, rules="napola", seed=0)
    for seed in range(3):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            env.step(player.act(env.observe(env.agent_selection)))
        assert env.match.deals_played == 1


def test_heuristic_reply_model_uses_the_next_players_hand() -> None:
    # player_2 to move after the scripted opening; the table is empty. If it lays QS, the next
    # player (player_3, 8 cards) sweeps it with any unseen queen: QD, QC or QB, 3 of the 22
    # cards player_2 cannot see. With every card worth 0, the reply is worth a sweep times the
    # chance that player_3's 8 cards (a uniform draw of the 22) hold a queen.
    env = scripted_env()
    for action in (play("5D"), take("5S"), play("2C"), play("6D"), take("AB"), take("3B")):
        env.step(action)
    for action in (play("5B"), play("4C"), play("4S")):
        env.step(action)
    info = InfoState.from_observation(env.observe("player_2")["observation"])
    agent = make_agent("heuristic")
    expected = agent.values.sweep * (1 - comb(19, 8) / comb(22, 8))
    table = mask_of(cards("QS"))
    assert agent.expected_reply(info, table, [0] * 40) == pytest.approx(expected)


def test_evaluate_plays_partnerships_on_duplicate_deals() -> None:
    # Identical deterministic players: each deal played twice with the partnerships swapped
    # gives A exactly what it gave B, so every pair sums to zero.
    records, summaries, _ = evaluate(["greedy", "greedy:seed=1"], deals=4, table="scopone")
    assert [(r.pair, r.replica) for r in records] == [(p, k) for p in range(4) for k in (0, 1)]
    for pair in range(4):
        one, two = records[2 * pair : 2 * pair + 2]
        assert one.first_player == two.first_player == pair % 4
        assert (one.points_a, one.points_b) == (two.points_b, two.points_a)
        assert one.plays_a + one.plays_b == 36  # 9 cards for each of the four seats
    assert summaries[0].points_per_deal == 0.0
    deck, first = duplicate_deck(0, 0, Rules(), "scopone")
    assert kings(deck[36:40]) < 3 and first == 0


def kings(cards_: list[int]) -> int:
    return sum(card % 10 == 9 for card in cards_)


def test_evaluate_reports_team_results_for_scopone() -> None:
    _, summaries, _ = evaluate(["greedy", "random"], deals=20, seed=1, table="scopone_scientifico")
    s = summaries[0]
    assert s.deal_pairs == 20 and s.points_per_deal - s.points_per_deal_ci > 1.0
    report = markdown_report(summaries, [], {"table": "scopone_scientifico"})
    assert "partnerships" in report and "| greedy | random | 20 |" in report
    with pytest.raises(ValueError, match="unknown table"):
        evaluate(["greedy", "random"], deals=1, table="briscola")


def test_cli_eval_game_scopone(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval"
    code = cli.main(["eval", "greedy", "random", "--game", "scopone", "--deals", "2",
                     "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "- table: `scopone`" in text and "| greedy | random | 2 |" in text
