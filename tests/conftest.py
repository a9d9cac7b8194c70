"""Helpers shared by the test modules (``from conftest import ...``) and their fixtures."""

from __future__ import annotations

import importlib
import re
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from scopa_env import scopa_v0
from scopa_env.actions import PICK_OFFSET
from scopa_env.captures import pickable_cards
from scopa_env.cards import cards_of, mask_of, parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.observation import encode

# pettingzoo.test re-exports functions under its submodules' names: import the module by path.
api_test_module = importlib.import_module("pettingzoo.test.api_test")


def play(name: str) -> int:
    return parse_card(name)


def take(name: str) -> int:
    return PICK_OFFSET + parse_card(name)


def random_step(env: Any, rng: np.random.Generator) -> int:
    """Step the agent to move with a uniform legal action from its mask."""
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    action = int(legal[rng.integers(len(legal))])
    env.step(action)
    return action


def bombardment(env: Any, cycles: int) -> None:
    """PettingZoo's ``bombardment_test``, repaired.

    In PettingZoo 1.27 it checks the return value of ``step`` (always ``None`` in the AEC API)
    against the observation space and compares arrays with the first observation *dict*, so it
    fails for every environment with dict observations, ``connect_four_v3`` included. This is
    the same loop (each agent steps once per cycle with a random legal action, then reset) with
    the observation read from ``last()``.
    """
    rng = np.random.default_rng(0)
    env.reset()
    first, *_ = env.last()
    for _ in range(cycles):
        for agent in env.agent_iter(env.num_agents):
            obs, _, termination, truncation, _ = env.last()
            assert env.observation_space(agent).contains(obs)
            api_test_module.test_observation(obs["observation"], first["observation"])
            api_test_module.test_action_mask(obs["action_mask"])
            if termination or truncation:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        env.reset()


def scalar_values(scalars: struct.Struct, draw: Callable[[], float]) -> list[Any]:
    """Values for a layout's scalars format, each float from ``draw()``: floats, and float32
    bytes for each group packed ahead (an ``s`` field)."""
    values: list[Any] = []
    for count, code in re.findall(r"(\d*)([fs])", scalars.format):
        size = int(count or 1)
        if code == "s":
            values.append(struct.pack(f"<{size // 4}f", *(draw() for _ in range(size // 4))))
        else:
            values += [draw() for _ in range(size)]
    return values


def hidden_cards(env: Any, player: int) -> int:
    """The cards ``player`` cannot see: the other hands and the stock."""
    deal = env.deal
    others = (hand for seat, hand in enumerate(deal.hands) if seat != player)
    return mask_of(deal.stock) | mask_of(c for hand in others for c in hand)


def snapshot(env: Any) -> tuple:
    return (
        env.deal.to_dict(),
        env.match.scores,
        env.agent_selection,
        env.phase,
        env.picked,
        dict(env.rewards),
        dict(env._cumulative_rewards),
        [env.observe(a)["observation"].copy() for a in env.possible_agents],
        [env.observe(a)["action_mask"].copy() for a in env.possible_agents],
    )


def assert_same(a: tuple, b: tuple) -> None:
    assert a[:7] == b[:7]
    for x, y in zip(a[7:], b[7:], strict=True):
        for u, v in zip(x, y, strict=True):
            np.testing.assert_array_equal(u, v)


def encode_deal(deal: Deal, seat: int = 0, **kwargs: Any) -> np.ndarray:
    """``seat``'s two-player observation vector of ``deal`` (``kwargs``: ``encode``'s pending
    capture), as ``scopa_v0`` encodes it."""
    m = deal.masks
    return encode(
        m["hands"], m["table"], m["piles"], m["played"], len(deal.stock), deal.scope,
        deal.last_capturer, deal.dealer, seat, **kwargs,
    )  # fmt: skip


def observe_deal(deal: Deal, pending: int | None = None, picked: int = 0) -> dict[str, np.ndarray]:
    """Player 0's observation dict of ``deal``, as ``scopa_v0`` encodes it."""
    obs = encode_deal(deal, 0, pending_card=pending, picked=picked)
    mask = np.zeros(80, dtype=np.int8)
    if pending is None:
        mask[list(deal.hands[0])] = 1
    else:
        options = tuple(mask_of(s) for s in deal.capture_options(pending))
        mask[[PICK_OFFSET + c for c in cards_of(pickable_cards(options, picked))]] = 1
    return {"observation": obs, "action_mask": mask}


#: A training run of a few seconds (two-player Scopa), for the tests of whole runs.
TINY = {
    "name": "tiny",
    "seed": 3,
    "n_envs": 8,
    "total_timesteps": 256,
    "torch_threads": 1,
    "checkpoint_every": 1,
    "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "card_width": 8, "global_width": 16},
    "warm_start": {"teacher": "greedy", "samples": 256, "epochs": 1},
    "selfplay": {
        "groups": 2,
        "snapshot_every": 1,
        "opponents": {"random": 0.3, "greedy": 0.3, "latest": 0.4},
    },
    "eval": {
        "every": 1,
        "deals": 2,
        "final_deals": 2,
        "opponents": ["random"],
        "best_against": "random",
    },
}


# Player 0's pile wins cards (21 of 40), coins (7 of 10), the settebello and primiera (every
# seven) whatever happens: 4 points, so a last round from it turns on the scope alone.
SEVENS_AND_COINS = "7D 7C 7S 7B AD 2D 3D 4D 5D 6D JC QC KC JS QS KS 2B 3B 4B QB KB"


def card_mask(names: str) -> int:
    """The card mask of names such as ``"7D KB"``."""
    return mask_of(parse_cards(names))


def last_round(mine: str, theirs: str, table: str, my_pile: str) -> Deal:
    """A last-round position (stock empty), player 0 to lead; player 1 captured the rest."""
    placed = [parse_cards(names) for names in (mine, theirs, table, my_pile)]
    rest = [c for c in range(40) if c not in {card for cards in placed for card in cards}]
    return Deal.from_position(
        hands=(placed[0], placed[1]),
        table=placed[2],
        captures=(placed[3], rest),
        current_player=0,
        first_player=0,
        last_capturer=0,
    )


def opening(opponent: str = "2B QC 4B") -> Deal:
    """The opponent (player 1), holding ``opponent``, leads onto 7S 5C 3S JB; I hold AD 4D 6D."""
    dealt = f"AD 4D 6D {opponent} 7S 5C 3S JB"
    return Deal.from_position(
        hands=(parse_cards("AD 4D 6D"), parse_cards(opponent)),
        table=parse_cards("7S 5C 3S JB"),
        stock=[c for c in range(40) if c not in parse_cards(dealt)],
        current_player=1,
        first_player=1,
    )


def opening_trail() -> tuple[Deal, int]:
    """The opponent (player 1) leads by trailing the two of cups onto 7S 5C 3S JB."""
    deal = opening()
    table = deal.masks["table"]
    deal.play_unchecked(parse_cards("2B")[0], 0)
    return deal, table


def played_to(seed: int, plays: int) -> Deal:
    """A two-player deal of ``seed`` after ``plays`` random legal plays (the played cards
    recorded)."""
    deal = Deal.new(np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1000)
    for _ in range(plays):
        moves = deal.legal_moves()
        deal.play(moves[rng.integers(len(moves))])
    return deal


def my_turn(seed: int, plays: int) -> Deal:
    """``played_to(seed, plays)``, or one play more where it is the opponent's turn."""
    deal = played_to(seed, plays)
    return deal if deal.current_player == 0 else played_to(seed, plays + 1)


def settebello_sweep(mover: int = 0) -> Deal:
    """First round, player ``mover`` to play, the other's AC and AS taken: 7D takes 3S+4S, the
    whole table: a scopa, and the settebello in the mover's pile (two points in hand); KB and 2C
    can only trail, giving the other the table to take. Any sensible player plays 7D."""
    sweeper, other = parse_cards("7D KB 2C"), parse_cards("2D 5S JC")
    hands = (sweeper, other) if mover == 0 else (other, sweeper)
    table, taken = parse_cards("3S 4S"), parse_cards("AC AS")
    dealt = {*hands[0], *hands[1], *table, *taken}
    return Deal.from_position(
        hands=hands,
        table=table,
        stock=[c for c in range(40) if c not in dealt],
        captures=((), taken) if mover == 0 else (taken, ()),
        current_player=mover,
        first_player=mover,
        last_capturer=1 - mover,
    )


def play_deals(players: dict[str, Any], seeds: range, rules: Any = None) -> list[int]:
    """Every action of whole deals of ``scopa_v0``; each must be one the mask allows."""
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    actions = []
    for seed in seeds:
        env.reset(seed=seed)
        for agent in players.values():
            agent.reset(seed=seed)
        while not env.terminations[env.agent_selection]:
            observation = env.observe(env.agent_selection)
            action = players[env.agent_selection].act(observation)
            assert observation["action_mask"][action] == 1, action
            actions.append(action)
            env.step(action)
    return actions


def oracle_card_policy(card_width: int = 8, global_width: int = 16, lookahead: bool = True) -> Any:
    """A two-player ``OracleCardPolicy`` on the observation and its 80-float hidden block."""
    from gymnasium import spaces

    from agents.oracle_policy import OracleCardPolicy
    from scopa_env.observation import OBS_SIZE

    space = spaces.Box(0.0, 100.0, (OBS_SIZE + 80,), np.float32)
    return OracleCardPolicy(
        space, spaces.Discrete(80), lambda _: 1e-3, card_width=card_width,
        global_width=global_width, lookahead=lookahead, table="scopa", hidden=80,
    )  # fmt: skip


def assert_plays_a_match(player: Any) -> None:
    """``player`` plays a whole match of ``scopa play`` to its end, against a human who always
    types the first legal move."""
    from cli.play import play_match
    from scopa_env import scopa_v0

    env = scopa_v0.raw_env(render_mode="ansi")

    def human(prompt: str) -> str:
        return str(env.deal.legal_moves()[0]).replace("(trail)", "")

    winner = play_match(env, player.act, human=0, seed=1, ask=human, say=lambda _: None)
    assert env.match.is_over and winner in {"player_0", "player_1"}


def choice_at(table: str) -> dict[str, np.ndarray]:
    """The first observation of a deal at ``table`` (seed 0) that offers its seat a choice."""
    from scopa_env.environments import make_aec

    env = make_aec(table)
    env.reset(seed=0)
    while env.observe(env.agent_selection)["action_mask"].sum() < 2:
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    return env.observe(env.agent_selection)
