"""A run's resumable state: checkpoints of the model, the opponent pool and every random stream."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.records import copy_file, read_csv, write_csv, write_text

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

        write_text(folder / "state.json", json.dumps(self.__dict__, indent=2) + "\n")
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


def identity_differences(found: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    """What a stopped run's saved identity and this run's differ in, ``key: A there, B here``
    for each key in sorted order; empty when they agree."""
    keys = sorted(k for k in found.keys() | expected.keys() if found.get(k) != expected.get(k))
    return ", ".join(f"{k}: {found.get(k)} there, {expected.get(k)} here" for k in keys)


def seed_everything(seed: int) -> None:
    """Seed the global streams; SB3 and RLlib shuffle minibatches with numpy's legacy one."""
    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002
    torch.manual_seed(seed)


def boundary_seed(seed: int, count: int) -> int:
    """The seed a run restarts its games from at checkpoint boundary ``count`` (an update or
    an iteration): of the run's seed and the count alone, so a resume restarts the same way."""
    return seed + 7919 * count


def checkpoint_problem(folder: Path) -> str | None:
    """Why a resume cannot start from ``folder``, or ``None`` when it is whole.

    Reads every file back: the ``done`` marker, ``model.zip`` (each member's checksum) and,
    if present, ``best.zip``; ``state.json`` and ``pool_and_rng.pt`` as they will be loaded. A
    file cut short by a kill or a full disk shows up here rather than as a traceback later.
    """
    import torch

    if not (folder / "done").is_file():
        return "incomplete (no done marker)"
    for name in ("model.zip", *(["best.zip"] if (folder / "best.zip").exists() else [])):
        try:
            with zipfile.ZipFile(folder / name) as archive:
                broken, members = archive.testzip(), archive.namelist()
        except (OSError, zipfile.BadZipFile) as error:
            return f"{name} is not a readable zip ({error})"
        if broken is not None:
            return f"{name} is corrupt ({broken} fails its checksum)"
        if not {"data", "policy.pth"} <= set(members):
            return f"{name} is not a MaskablePPO save"
    try:
        RunState(**json.loads((folder / "state.json").read_text()))
    except (OSError, ValueError, TypeError) as error:
        return f"state.json is unreadable ({type(error).__name__}: {error})"
    try:
        saved = torch.load(folder / "pool_and_rng.pt", weights_only=False)
        missing = {"pool", "python", "numpy", "torch"} - set(saved)
    except Exception as error:  # torch raises what its zip or pickle reader raised
        return f"pool_and_rng.pt is unreadable ({type(error).__name__})"
    if missing:
        return f"pool_and_rng.pt lacks {sorted(missing)}"
    return None


def latest_checkpoint(
    run_dir: Path,
    skipped: list[str] | None = None,
    kind: str = "update",
    problem: Callable[[Path], str | None] = checkpoint_problem,
) -> Path | None:
    """The newest checkpoint ``checkpoints/KIND_NNNNNN`` of a run that ``problem`` finds whole.

    Each newer one passed over is added to ``skipped`` as ``"KIND_NNNNNN: why"``. SB3 runs
    count updates (``checkpoint_problem``), RLlib runs iterations (``manifest_problem``).
    """
    for folder in sorted((run_dir / "checkpoints").glob(f"{kind}_*"), reverse=True):
        why = problem(folder)
        if why is None:
            return folder
        if skipped is not None:
            skipped.append(f"{folder.name}: {why}")
    return None


@contextmanager
def checkpoint_folder(run_dir: Path, name: str) -> Iterator[Path]:
    """A temporary folder to fill with checkpoint ``name``; renamed into place, with its
    ``done`` marker, when the block ends. A kill at any instant leaves the previous
    checkpoints as they were; only the newest ``CHECKPOINTS_KEPT`` are kept."""
    checkpoints = run_dir / "checkpoints"
    checkpoints.mkdir(parents=True, exist_ok=True)
    kind = name.rpartition("_")[0]
    for stale in checkpoints.glob(f".{kind}_*"):  # what a killed save left
        shutil.rmtree(stale, ignore_errors=True)
    tmp = checkpoints / f".{name}.{os.getpid()}.tmp"
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / "done").touch()
    folder = checkpoints / name
    if folder.exists():  # the same point saved again (a resume that stopped before the next)
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    for old in sorted(checkpoints.glob(f"{kind}_*"))[:-CHECKPOINTS_KEPT]:
        shutil.rmtree(old)


def save_checkpoint(run_dir: Path, model: MaskablePPO, state: RunState, pool: Any) -> Path:
    """Write a whole checkpoint of an SB3 run (``checkpoint_folder``).

    The folder holds the model (with its optimizer), ``state.json``, the pool and every random
    stream, and the run's ``best.zip`` as it is now, so a resume restores the best choice too.
    """
    name = f"update_{state.updates:06d}"
    with checkpoint_folder(run_dir, name) as tmp:
        model.save(tmp / "model.zip")
        state.save(tmp, pool)
        if (run_dir / "best.zip").is_file():
            shutil.copyfile(run_dir / "best.zip", tmp / "best.zip")
    return run_dir / "checkpoints" / name


MANIFEST = "manifest.json"


def write_manifest(folder: Path) -> None:
    """List every file under ``folder`` with its size and SHA-256, for ``manifest_problem``.

    For checkpoints whose files only their library can read (RLlib's), so a resume can tell
    a whole one from one cut short without loading it.
    """
    files = {
        str(p.relative_to(folder)): [p.stat().st_size, _sha256(p)]
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    write_text(folder / MANIFEST, json.dumps(files, indent=1) + "\n")


def manifest_problem(folder: Path) -> str | None:
    """Why checkpoint ``folder`` is not whole (done marker, manifest, each file's size and
    checksum), or ``None``."""
    if not (folder / "done").is_file():
        return "incomplete (no done marker)"
    try:
        files = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        return f"{MANIFEST} is unreadable ({type(error).__name__})"
    for name, (size, digest) in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != size:
            return f"{name} has {path.stat().st_size} bytes, not the {size} written"
        if _sha256(path) != digest:
            return f"{name} fails its checksum"
    return None


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def cut_csv(path: Path, column: str, last: int) -> None:
    """Drop the rows of ``path`` whose ``column`` is past ``last`` (the rows a resumed run
    writes again); the file goes when no row is left."""
    rows = read_csv(path)
    kept = [row for row in rows if int(row[column]) <= last]
    if len(kept) < len(rows):
        if kept:
            write_csv(path, kept)
        else:
            path.unlink()


def rewind_run(run_dir: Path, checkpoint: Path | None, updates: int) -> None:
    """Make the run folder what it was when ``checkpoint`` was saved, before a resume.

    ``best.zip`` becomes the checkpoint's copy (none if it had none), and ``evals.csv`` loses
    the rows of updates after ``updates``, which the resumed run plays again.
    """
    best = run_dir / "best.zip"
    if checkpoint is not None and (checkpoint / "best.zip").is_file():
        copy_file(checkpoint / "best.zip", best)
    else:
        best.unlink(missing_ok=True)
    cut_csv(run_dir / "evals.csv", "update", updates)


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
