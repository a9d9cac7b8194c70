"""Behaviour cloning's targets: the teacher's move, or a softmax of the search's values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.card_policy import CardPolicy
from scopa_env import scopa_v0
from training.warm_start import Decisions, behaviour_clone, search_regret, soft_targets


def _decisions(actions: list[int], values: np.ndarray | None) -> Decisions:
    n = len(actions)
    masks = np.zeros((n, 80), bool)
    masks[np.arange(n), actions] = True
    return Decisions(
        obs=np.zeros((n, 1), np.float32),
        masks=masks,
        actions=np.array(actions, np.int64),
        returns=np.zeros(n, np.float32),
        values=values,
    )


def test_soft_targets_are_a_softmax_of_the_searched_values_and_the_move_elsewhere() -> None:
    values = np.full((3, 80), np.nan, np.float32)
    values[0, [2, 5]] = [1.0, 0.0]  # two moves searched, a point apart
    values[2, 7] = -0.3  # one move searched: a card whose captures were compared
    decisions = _decisions([2, 9, 7], values)  # row 1 was not searched (a planned pick)

    targets = soft_targets(decisions, temperature=0.5)
    e = math.exp(1.0 / 0.5)
    expected = np.zeros((3, 80))
    expected[0, 2], expected[0, 5] = e / (1 + e), 1 / (1 + e)
    expected[1, 9] = expected[2, 7] = 1.0
    np.testing.assert_allclose(targets, expected, atol=1e-6)

    one_hot = np.zeros((3, 80))
    one_hot[[0, 1, 2], [2, 9, 7]] = 1.0
    np.testing.assert_array_equal(soft_targets(decisions, temperature=None), one_hot)
    np.testing.assert_array_equal(soft_targets(decisions._replace(values=None), 0.5), one_hot)


def test_a_low_temperature_is_the_best_searched_move_whatever_the_pick() -> None:
    values = np.full((1, 80), np.nan, np.float32)
    values[0, [4, 6]] = [0.2, 0.1]
    targets = soft_targets(_decisions([6], values), temperature=1e-3)
    assert targets[0, 4] == pytest.approx(1.0) and targets[0].sum() == pytest.approx(1.0)


def test_search_regret_is_what_each_valued_action_gives_up() -> None:
    values = np.full((2, 80), np.nan, np.float32)
    values[0, [2, 5, 8]] = [1.0, -0.5, 0.75]
    decisions = _decisions([5, 9], values)
    expected = np.zeros((2, 80), np.float32)
    expected[0, [5, 8]] = [1.5, 0.25]
    np.testing.assert_allclose(search_regret(decisions), expected)
    assert not search_regret(decisions._replace(values=None)).any()


def _policy(kind: str, observation_size: int) -> MaskableActorCriticPolicy:
    torch.manual_seed(0)
    cls = CardPolicy if kind == "card" else MaskableActorCriticPolicy
    return cls(
        spaces.Box(0.0, 1.0, (observation_size,), np.float32),
        spaces.Discrete(80),
        lambda _: 1e-3,
    )


def _one_position(n: int, search_values: list[float], action: int) -> Decisions:
    """``n`` copies of a real decision whose first legal actions the search valued."""
    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    legal = np.flatnonzero(observation["action_mask"])[: len(search_values)]
    assert len(legal) == len(search_values)
    values = np.full((n, 80), np.nan, np.float32)
    values[:, legal] = search_values
    return Decisions(
        obs=np.repeat(observation["observation"][None], n, axis=0),
        masks=np.repeat(observation["action_mask"][None].astype(bool), n, axis=0),
        actions=np.full(n, legal[action]),
        returns=np.full(n, 1.5, np.float32),
        values=values,
    )


def _clone(policy: MaskableActorCriticPolicy, decisions: Decisions, **options: Any) -> float:
    return behaviour_clone(
        policy, decisions, batch_size=32, learning_rate=5e-3, vf_coef=0.5, seed=0, **options
    )


def _favourite(policy: MaskableActorCriticPolicy, decisions: Decisions) -> int:
    obs = torch.as_tensor(decisions.obs[:1])
    with torch.no_grad():
        return int(policy(obs, deterministic=True, action_masks=decisions.masks[:1])[0])


def test_regret_weight_overrules_a_costly_pick_of_the_teacher() -> None:
    """The teacher played a move the search valued 2 points below the best (its values and its
    pick can disagree: the pick comes from the moves that survived the halving rounds)."""
    decisions = _one_position(128, [0.0, -2.0], action=1)
    legal = np.flatnonzero(decisions.masks[0])
    decisions.values[:, legal[2:]] = -2.0  # the search values every legal move
    best, picked = legal[:2]
    favourites = {}
    for weight in (0.0, 5.0):
        policy = _policy("card", decisions.obs.shape[1])
        _clone(policy, decisions, epochs=10, regret_weight=weight)
        favourites[weight] = _favourite(policy, decisions)
    assert favourites == {0.0: picked, 5.0: best}


@pytest.mark.parametrize("kind", ["card", "mlp"])
def test_cloning_fits_the_actor_to_the_soft_targets_and_the_critic_to_the_returns(
    kind: str,
) -> None:
    decisions = _one_position(128, [0.5, 0.0, -2.0], action=0)
    policy = _policy(kind, decisions.obs.shape[1])
    accuracy = _clone(policy, decisions, epochs=25, temperature=0.5)
    obs = torch.as_tensor(decisions.obs[:1])
    with torch.no_grad():
        probs = policy.get_distribution(obs, action_masks=decisions.masks[:1]).distribution.probs
        value = policy.predict_values(obs)
    target = soft_targets(decisions, 0.5)[0]
    np.testing.assert_allclose(probs[0].numpy(), target, atol=0.03)
    assert np.sort(target)[-2] > 0.2  # the move half a point worse: a near-tie, kept as such
    assert accuracy == 1.0  # the teacher's move is still the actor's favourite
    assert value.item() == pytest.approx(1.5, abs=0.1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cloning_follows_the_policy_onto_the_gpu() -> None:
    """A config's ``device: cuda``: the decisions move to the policy's device, not the reverse."""
    decisions = _one_position(128, [0.5, 0.0, -2.0], action=0)
    policy = _policy("card", decisions.obs.shape[1]).to("cuda")
    assert _clone(policy, decisions, epochs=25, temperature=0.5) == 1.0
    assert all(p.is_cuda for p in policy.parameters())
