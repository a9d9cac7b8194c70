"""PPO from a clone refines it: its first updates keep the clone's moves.

A warm start is only worth having if PPO's first updates do not undo it. With the critic on
the policy's shared network and the value loss weighted as SB3's default (gradient ~20x the
policy loss's), they could; the recipe's settings must keep the argmax moves of the clone
on nearly every decision. A deliberately destructive learning rate shows that the measure
would see the damage.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from training.config import load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

#: The recipe's PPO and pool, shrunk: 64 games x 32 steps a rollout, a small greedy clone.
SMALL = [
    "n_envs=64",
    "ppo.n_steps=32",
    "ppo.batch_size=512",
    "total_timesteps=6144",  # three updates
    "checkpoint_every=10",
    "warm_start.samples=16000",
    "warm_start.epochs=4",
    "warm_start.workers=null",
    "eval.every=3",
    "eval.deals=4",
    "eval.opponents=[clone]",
    "eval.best_against=clone",
    "eval.final_deals=0",
    "eval.final_matches=0",
]


def _agreement(run_dir: Path) -> float:
    """Share of decisions with a choice where ``final.zip`` plays ``clone.zip``'s move."""
    from sb3_contrib import MaskablePPO

    from agents.greedy import GreedyAgent
    from training.selfplay import OpponentPool
    from training.train import make_training_env
    from training.warm_start import collect

    config = load_config(CONFIGS / "quick.yaml", [*SMALL, "seed=99"])
    env = make_training_env(config, OpponentPool({"greedy": 1.0}, 1, seed=99))
    data = collect(env, GreedyAgent(), 4096, 1.0)  # greedy's play on deals of another seed
    choice = data.masks.sum(axis=1) > 1
    obs = torch.as_tensor(data.obs[choice])
    masks = data.masks[choice]
    moves = []
    for name in ("clone.zip", "final.zip"):
        policy = MaskablePPO.load(run_dir / name, device="cpu").policy
        with torch.no_grad():
            moves.append(policy(obs, deterministic=True, action_masks=masks)[0].numpy())
    return float(np.mean(moves[0] == moves[1]))


def _train(tmp_path: Path, name: str, *overrides: str) -> Path:
    from training.train import train

    config = load_config(CONFIGS / "quick.yaml", [*SMALL, *overrides])
    train(config, tmp_path / name, progress=False)
    return tmp_path / name


@pytest.mark.slow
def test_a_few_ppo_updates_keep_the_clones_moves(tmp_path: Path) -> None:
    import csv

    run_dir = _train(tmp_path, "recipe")
    with (run_dir / "evals.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    # The clone against itself on duplicate deals: each deck's two games cancel exactly.
    assert [(r["update"], r["opponent"]) for r in rows] == [("0", "clone"), ("3", "clone")]
    assert float(rows[0]["points_per_deal"]) == 0.0
    kept = _agreement(run_dir)
    assert kept >= 0.95, f"three updates of the quick recipe kept {kept:.1%} of the clone's moves"
    clone = f"warm_start.init_from={run_dir / 'clone.zip'}"  # the same start, not cloned again
    wrecked = _agreement(_train(tmp_path, "wrecked", clone, "ppo.learning_rate=0.02"))
    assert wrecked < kept - 0.03, (kept, wrecked)
