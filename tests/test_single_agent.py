"""The single-agent Gymnasium view: Gymnasium's checker, the opponent loop, seats, rewards,
illegal actions, and a short MaskablePPO run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
from scopa_env import players
from scopa_env.cards import parse_cards
from scopa_env.observation import OBS_SIZE, plane
from scopa_env.players import UnknownPlayerError
from scopa_env.rules import PRESETS
from scopa_env.scopa_v0 import IllegalActionError
from scopa_env.single_agent import ScopaSingleAgentEnv

DECK = list(
    parse_cards(
        "5D 2C 6D 5B 4C 4S 5C 5S AB 3B 7D 7C JD AS 2B QD AD QS 3C 7B "
        "3D 2D KB AC JB 6S 4D 4B 3S JC KS 6B JS QC QB 7S 6C KD 2S KC"
    )
)


def first_legal(observation: dict[str, np.ndarray]) -> int:
    """A deterministic opponent: the lowest legal action."""
    return int(np.flatnonzero(observation["action_mask"])[0])


class RandomLegal:
    """An opponent object with ``act`` and the agents' optional ``reset(seed=...)``."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.seeds: list[int | None] = []

    def reset(self, seed: int | None = None) -> None:
        self.seeds.append(seed)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


def run_episode(env: ScopaSingleAgentEnv, seed: int | None, rng: np.random.Generator) -> dict:
    obs, info = env.reset(seed=seed)
    rewards, steps = [], 0
    while True:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert (info["action_mask"] == mask).all()
        assert env.aec.agent_selection == env.agent  # every transition is the learner's own
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert obs.shape == (OBS_SIZE,) and not truncated
        rewards.append(reward)
        steps += 1
        if terminated:
            return {"rewards": rewards, "info": info, "steps": steps, "obs": obs}


@pytest.mark.parametrize("rules", [None, *sorted(PRESETS)])
def test_gymnasium_check_env(rules: str | None) -> None:
    check_env(ScopaSingleAgentEnv(rules=rules), skip_render_check=True)


@pytest.mark.filterwarnings("ignore:.*not having a spec")
@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_gymnasium_check_env_with_rendering(render_mode: str) -> None:
    env = ScopaSingleAgentEnv(opponent=first_legal, render_mode=render_mode)
    check_env(env, skip_render_check=False)
    env.reset(seed=0)
    picture = env.render()
    if render_mode == "ansi":
        assert "?? ??" in picture or "??" in picture
    else:
        assert picture.shape[2] == 3 and picture.dtype == np.uint8


@pytest.mark.parametrize("reward", ["match", "points"])
def test_learner_gets_its_terminal_reward(reward: str) -> None:
    env = ScopaSingleAgentEnv(opponent=RandomLegal(), reward=reward)
    rng = np.random.default_rng(1)
    for seed in range(4):
        result = run_episode(env, seed if seed == 0 else None, rng)
        match = env.aec.match
        winner = result["info"]["winner"]
        assert winner == f"player_{match.winner}"
        mine, theirs = match.scores[env.seat], match.scores[1 - env.seat]
        if reward == "match":
            assert result["rewards"][-1] == (1.0 if winner == env.agent else -1.0)
            assert sum(result["rewards"]) == result["rewards"][-1]
        else:
            assert sum(result["rewards"]) == mine - theirs
        assert result["info"]["match_score"] == match.scores


def test_seats_alternate_and_can_be_fixed() -> None:
    env = ScopaSingleAgentEnv(opponent=first_legal)
    seats = []
    for i in range(4):
        env.reset(seed=7 if i == 0 else None)
        seats.append(env.seat)
    assert seats == [0, 1, 0, 1]
    env.reset(seed=8)  # a seed restarts the alternation
    assert env.seat == 0
    env.reset(options={"seat": 1})
    assert env.seat == 1 and env.agent == "player_1"
    fixed = ScopaSingleAgentEnv(opponent=first_legal, seat=1)
    assert {fixed.reset(seed=s) and fixed.seat for s in range(3)} == {1}
    random_seat = ScopaSingleAgentEnv(opponent=first_legal, seat="random")
    assert {random_seat.reset(seed=s) and random_seat.seat for s in range(20)} == {0, 1}


def test_opponent_moves_first_when_the_learner_deals() -> None:
    env = ScopaSingleAgentEnv(opponent=first_legal, seat=1, episode="deal")
    obs, _ = env.reset(options={"deck": DECK, "first_player": 0})
    # player_0 (the opponent) led 5D, which opens a choice (5C or 5S): it picked 5C.
    assert env.aec.agent_selection == "player_1"
    assert plane(obs, "opp_played").nonzero()[0].tolist() == [parse_cards("5D")[0]]
    assert plane(obs, "hand").sum() == 3 and set(env.aec.deal.table) == set(parse_cards("5S AB 3B"))


def test_same_seed_same_episode() -> None:
    def trajectory(seed: int) -> list[Any]:
        env = ScopaSingleAgentEnv(opponent=RandomLegal(), seat="random")
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        out = [obs]
        for _ in range(60):
            obs, reward, terminated, _, _ = env.step(
                int(rng.choice(np.flatnonzero(env.action_masks())))
            )
            out += [obs, reward]
            if terminated:
                break
        return out

    a, b = trajectory(3), trajectory(3)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_opponent_reset_is_seeded_every_episode() -> None:
    opponent = RandomLegal()
    env = ScopaSingleAgentEnv(opponent=opponent)
    env.reset(seed=0)
    env.reset()
    first = list(opponent.seeds)
    env.reset(seed=0)
    env.reset()
    assert len(first) == 2 and opponent.seeds[2:] == first and first[0] != first[1]


def test_illegal_learner_action_loses_or_raises() -> None:
    env = ScopaSingleAgentEnv(opponent=first_legal)
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    after, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    np.testing.assert_array_equal(obs, after)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)

    strict = ScopaSingleAgentEnv(opponent=first_legal, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(illegal)
    assert strict.action_masks().any()  # nothing changed


def test_illegal_opponent_action_raises_clearly() -> None:
    env = ScopaSingleAgentEnv(opponent=lambda observation: 79, seat=1)
    with pytest.raises(IllegalActionError, match="the opponent chose an illegal action"):
        env.reset(seed=0, options={"deck": DECK, "first_player": 0})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"opponent": 3}, "opponent must be"),
        ({"seat": 2}, "seat"),
        ({"seat": "left"}, "seat"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"render_mode": "video"}, "render_mode"),
        ({"rules": "scopone"}, "preset"),
        ({"episode": "game"}, "episode"),
    ],
)
def test_invalid_construction_raises(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScopaSingleAgentEnv(**kwargs)


def test_named_opponent_needs_a_package_of_players(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players, "_factories", lambda: ())
    with pytest.raises(UnknownPlayerError, match="no package provides players"):
        ScopaSingleAgentEnv(opponent="random")


def test_named_opponent_is_built_with_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, dict[str, Any]]] = []

    def factory(name: str, **options: Any) -> Any:
        built.append((name, options))
        return first_legal

    monkeypatch.setattr(players, "_factories", lambda: (factory,))
    env = ScopaSingleAgentEnv(opponent="greedy", rules="napola")
    assert built == [("greedy", {"rules": env.aec.rules})]
    env.reset(seed=0)


def test_an_unknown_opponent_name_is_a_clear_error() -> None:
    with pytest.raises(UnknownPlayerError, match="unknown player 'nobody'"):
        ScopaSingleAgentEnv(opponent="nobody")


def test_real_named_opponent_plays_a_variant() -> None:
    env = ScopaSingleAgentEnv(opponent="greedy", rules="scopa_a_quindici", episode="deal")
    result = run_episode(env, 0, np.random.default_rng(0))
    assert result["info"]["winner"] in ("player_0", "player_1", None)


@pytest.mark.slow
def test_maskable_ppo_learns_for_a_few_hundred_steps() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = ScopaSingleAgentEnv(episode="deal", reward="points")
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu"
    )
    model.learn(total_timesteps=384)
    obs, _ = env.reset(seed=1)
    for _ in range(40):
        masks = get_action_masks(env)
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[int(action)]
        obs, _, terminated, _, _ = env.step(int(action))
        if terminated:
            break


def test_an_opponent_built_for_other_rules_is_refused() -> None:
    with pytest.raises(ValueError, match="other rules than the environment's"):
        ScopaSingleAgentEnv(opponent=agents.GreedyAgent(), rules="napola")
    with pytest.raises(ValueError, match="other rules"):  # also through a bound method
        ScopaSingleAgentEnv(opponent=agents.HeuristicAgent("re_bello").act, rules="napola")
    # The target is read from the observation, so it may differ.
    napola = agents.GreedyAgent("napola")
    env = ScopaSingleAgentEnv(opponent=napola, rules={"preset": "napola", "target": 21})
    assert env.aec.rules.target == 21
