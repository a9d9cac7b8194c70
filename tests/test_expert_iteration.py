"""Expert iteration: the rollout player as a cloning teacher, and ``warm_start.finetune_from``.

The rollout player improves a network's play; cloning its decisions into that same network is a
step of expert iteration. Its values must be points per deal, as every teacher's are (the regret
weighting reads them so), and the clone must start from the network it improves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SEVENS_AND_COINS, TINY, last_round, observe_deal, played_to

from agents import RolloutAgent
from agents.policy import POLICY_CHECKPOINT
from scopa_env.cards import parse_card
from scopa_env.engine import Deal
from training.config import ConfigError, validate
from training.warm_start import MoveValueTeacher

needs_network = pytest.mark.skipif(
    not POLICY_CHECKPOINT.is_file(), reason="the shipped network is not installed"
)


def values_of(player: RolloutAgent, deal: Deal) -> tuple[int, np.ndarray]:
    obs = observe_deal(deal)
    teacher = MoveValueTeacher(player)
    actions, values = teacher.act_batch_with_values(
        obs["observation"][None], obs["action_mask"][None]
    )
    return int(actions[0]), values[0]


def mid_deal(seed: int) -> Deal:
    """A deal of ``seed`` after a few random plays, player 0 to move with cards left to draw."""
    deal = played_to(seed, 6)
    return deal if deal.current_player == 0 else played_to(seed, 7)


@needs_network
def test_last_round_values_are_the_exact_points_of_each_move() -> None:
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    # 5B takes 3C+2S, a scopa, and nothing scores after it: 4 + 1 points to 0. Trailing AB
    # leaves 3+2+1 for 6S to sweep: 4 points to 1 (6S's best reply).
    action, values = values_of(RolloutAgent(samples=4, seed=0), deal)
    assert action == parse_card("5B")
    assert values[parse_card("5B")] == 5.0 and values[parse_card("AB")] == 3.0


@needs_network
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_confident_values_are_gains_on_the_network_move_in_points(seed: int) -> None:
    """With ``confidence`` 0 a move's value is its mean gain on the network's move: the
    difference of the two moves' mean rollout values, which ``confidence=None`` reports."""
    deal = mid_deal(seed)
    _, means = values_of(RolloutAgent(samples=6, seed=seed, confidence=None), deal)
    action, gains = values_of(RolloutAgent(samples=6, seed=seed, confidence=0.0), deal)
    valued = ~np.isnan(means)
    assert valued.sum() >= 2 and np.array_equal(valued, ~np.isnan(gains))
    own = int(np.flatnonzero(np.abs(gains[valued]) < 1e-3)[0])  # the network's: worth ~0
    own_action = np.flatnonzero(valued)[own]
    np.testing.assert_allclose(gains[valued], means[valued] - means[own_action], atol=0.002)
    assert gains[action] == np.nanmax(gains)  # the move played is the best valued: no regret


@needs_network
def test_confidence_lowers_every_other_move_by_its_error() -> None:
    deal = mid_deal(3)
    _, plain = values_of(RolloutAgent(samples=6, seed=3, confidence=0.0), deal)
    _, wary = values_of(RolloutAgent(samples=6, seed=3, confidence=2.0), deal)
    valued = ~np.isnan(plain)
    assert (wary[valued] <= plain[valued] + 1e-6).all()


def _tiny(**changes: object) -> dict:
    return {**TINY, **changes}


def _weights(path: Path) -> dict[str, torch.Tensor]:
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, device="cpu").policy.state_dict()


QUIET = {"every": 0, "final_deals": 0}


@pytest.mark.parametrize(
    ("warm_start", "key", "reason"),
    [
        ({"teacher": "greedy", "finetune_from": "no/such.zip"}, "finetune_from", "no file"),
        (
            {"teacher": None, "finetune_from": "pretrained_v5"},
            "warm_start",
            "set warm_start.teacher",
        ),
        (
            {"teacher": "greedy", "finetune_from": "pretrained_v5", "init_from": __file__},
            "warm_start",
            "exclude each other",
        ),
    ],
)
def test_bad_finetune_from_names_the_key(warm_start: dict, key: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=key) as error:
        validate(_tiny(warm_start={**TINY["warm_start"], **warm_start}))
    assert reason in str(error.value)


def test_a_rollout_teacher_takes_a_network_path() -> None:
    config = validate(
        _tiny(warm_start={"teacher": "rollout", "teacher_options": {"network": "x/clone.zip"}})
    )
    assert config.warm_start.teacher_options == {"network": "x/clone.zip"}


@pytest.mark.parametrize("key", ["init_from", "finetune_from"])
@pytest.mark.parametrize("name", ["pretrained_v5", "pretrained_v4"])
def test_the_shipped_networks_are_named_as_players(key: str, name: str) -> None:
    from agents.policy import SHIPPED_CHECKPOINTS
    from training.train import saved_model

    config = validate(_tiny(warm_start={"teacher": "greedy", key: name}))
    assert saved_model(getattr(config.warm_start, key)) == SHIPPED_CHECKPOINTS[name]
    assert saved_model("pretrained_v5") == POLICY_CHECKPOINT


def test_finetune_from_starts_the_clone_from_the_saved_weights(tmp_path: Path) -> None:
    """At a learning rate too small to move them, the clone keeps the saved weights; a fresh
    start at the same rate does not have them; another network is refused."""
    from training.train import train

    first = tmp_path / "first"
    train(validate(_tiny(total_timesteps=128, eval=QUIET)), first, progress=False)
    saved = first / "clone.zip"
    still = {**TINY["warm_start"], "learning_rate": 1e-12}
    run = tmp_path / "run"
    tuned = {**still, "finetune_from": str(saved)}
    train(validate(_tiny(seed=4, eval=QUIET, warm_start=tuned)), run, progress=False)
    clone, theirs = _weights(run / "clone.zip"), _weights(saved)
    assert all(torch.allclose(clone[k], theirs[k], atol=1e-8) for k in theirs)
    assert f"fine-tuning `{saved}`" in (run / "report.md").read_text()

    fresh = tmp_path / "fresh"
    train(validate(_tiny(seed=4, eval=QUIET, warm_start=still)), fresh, progress=False)
    other = _weights(fresh / "clone.zip")
    assert not all(torch.allclose(other[k], theirs[k], atol=1e-3) for k in theirs)

    wider = {**TINY["ppo"], "card_width": 16}
    refused = validate(_tiny(eval=QUIET, warm_start=tuned, ppo=wider))
    with pytest.raises(ConfigError, match=r"finetune_from: .*clone.zip holds a different network"):
        train(refused, tmp_path / "other", progress=False)


@needs_network
def test_a_step_of_expert_iteration_runs_in_tasks(tmp_path: Path) -> None:
    """The shipped config's shape, shrunk: the rollout player fine-tunes the shipped network on
    its decisions, collected in tasks, with their regret-weighted values."""
    from training.config import load_config
    from training.train import train

    config = load_config(
        Path(__file__).resolve().parents[1] / "configs" / "expert_iteration.yaml",
        [
            "warm_start.samples=128",
            "warm_start.task_samples=64",
            "warm_start.workers=1",
            "warm_start.epochs=1",
            "warm_start.teacher_options.samples=2",
            "n_envs=8",
            "selfplay.groups=2",
            "ppo.batch_size=64",
        ],
    )
    run = tmp_path / "run"
    train(config, run, progress=False)
    with np.load(run / "warm_start" / "task_0000.npz") as task:
        values = task["values"]
        actions = task["actions"]
    valued = ~np.isnan(values).all(axis=1)
    assert valued.any()
    rows = np.flatnonzero(valued)
    chosen = values[rows, actions[rows]]
    np.testing.assert_array_equal(chosen, np.nanmax(values[rows], axis=1))  # no regret
    assert "fine-tuning `pretrained_v5`" in (run / "report.md").read_text()
