"""A run's resumable state: checkpoints of the model, the opponent pool and every random stream."""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

CHECKPOINTS_KEPT = 2


def cpu_seconds() -> float:
    """CPU time used so far by this process and its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@dataclass
class RunState:
    """What a checkpoint holds beside the model: counters, best score, timing."""

    updates: int = 0
    best_score: float | None = None
    best_update: int = -1
    wall_s: float = 0.0
    learn_s: float = 0.0
    learn_steps: int = 0
    env_s: float = 0.0
    opponent_s: float = 0.0
    eval_s: float = 0.0  # the final evaluation
    warm_start: dict[str, float] | None = None
    cpu_s: float = 0.0  # CPU time of this process and its children (wall time on an idle CPU)

    def save(self, folder: Path, pool: Any) -> None:
        import torch

        (folder / "state.json").write_text(json.dumps(self.__dict__, indent=2) + "\n")
        torch.save(
            {
                "pool": pool.state_dict(),
                "python": random.getstate(),
                "numpy": np.random.get_state(),  # noqa: NPY002 - SB3's minibatch shuffling
                "torch": torch.get_rng_state(),
            },
            folder / "pool_and_rng.pt",
        )

    @classmethod
    def load(cls, folder: Path, pool: Any) -> RunState:
        import torch

        state = cls(**json.loads((folder / "state.json").read_text()))
        saved = torch.load(folder / "pool_and_rng.pt", weights_only=False)
        pool.load_state_dict(saved["pool"])
        random.setstate(saved["python"])
        np.random.set_state(saved["numpy"])  # noqa: NPY002
        torch.set_rng_state(saved["torch"])
        return state


def latest_checkpoint(run_dir: Path) -> Path | None:
    folders = sorted((run_dir / "checkpoints").glob("update_*"))
    complete = [f for f in folders if (f / "done").exists()]
    return complete[-1] if complete else None


def save_checkpoint(run_dir: Path, model: MaskablePPO, state: RunState, pool: Any) -> Path:
    """Write a complete checkpoint; the ``done`` marker makes a half-written one invisible."""
    folder = run_dir / "checkpoints" / f"update_{state.updates:06d}"
    folder.mkdir(parents=True, exist_ok=True)
    model.save(folder / "model.zip")
    state.save(folder, pool)
    (folder / "done").touch()
    for old in sorted((run_dir / "checkpoints").glob("update_*"))[:-CHECKPOINTS_KEPT]:
        shutil.rmtree(old)
    return folder


class preserved_rng:  # noqa: N801 - used as a context manager
    """Restore Python's, numpy's and torch's global random states on exit."""

    def __enter__(self) -> None:
        import torch

        self.states = (random.getstate(), np.random.get_state(), torch.get_rng_state())  # noqa: NPY002

    def __exit__(self, *exc: object) -> None:
        import torch

        random.setstate(self.states[0])
        np.random.set_state(self.states[1])  # noqa: NPY002
        torch.set_rng_state(self.states[2])
