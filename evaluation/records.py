"""What an evaluation or a training run writes down: game records, CSV tables, library versions.

Every file a command leaves is written whole or not at all: ``atomic_path`` gives a temporary
name in the same folder, and the file is renamed over its real name only once it is complete
(a rename within one file system is atomic), so a kill at any instant leaves the old file or
the new one, never half of one. ``write_text``, ``copy_file`` and the CSV writers use it, and so
does everything else that saves (checkpoints, plots, journals, exports).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from scopa_env.errors import ScopaError

#: The libraries whose versions a run records beside its results.
LIBRARIES = ("scopa-env", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy")


@dataclass
class GameRecord:
    """One game of a duplicate pair, from player A's side."""

    kind: str  # "deal" or "match"
    pairing: int
    player_a: str
    player_b: str
    pair: int
    replica: int  # 0: A in seat 0 (Scopone: seats 0 and 2); 1: the seats swapped
    first_player: int  # seat that led the (first) deal
    points_a: int
    points_b: int
    deals: int
    cpu_seconds_a: float
    cpu_seconds_b: float
    plays_a: int
    plays_b: int
    categories_a: str = ""
    categories_b: str = ""

    @classmethod
    def from_row(cls, row: dict[str, str]) -> GameRecord:
        """A record from a row of ``games.csv`` (values as text); a missing column is a
        ``KeyError``, a malformed value a ``ValueError``."""
        parse = {"int": int, "float": float, "str": str}
        return cls(**{f.name: parse[str(f.type)](row[f.name]) for f in fields(cls)})


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed to ``path`` when the block ends.

    The temporary name starts with a dot (globs such as ``task_*.npz`` do not see it) and keeps
    the suffix, so writers that add one (``np.savez``, SB3's ``save``) leave it as it is. If the
    block raises, the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield tmp
        with open(tmp, "rb+") as handle:  # on disk before it takes the real name
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


#: The lock file of a folder a command is writing (see ``folder_lock``).
LOCK = ".lock"


class FolderInUseError(ScopaError, RuntimeError):
    """Another running command is writing the folder."""


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder/.lock``, which names this process, while writing ``folder``.

    A second command that would write the same folder meanwhile gets ``FolderInUseError``
    naming the first one's pid; a lock left by a process that no longer runs (killed) is taken
    over. The folder is created if needed, and removed again (with the parents it created) if
    it is left empty, so a command that fails leaves no trace.
    """
    folder = Path(folder)
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / LOCK
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid = int(lock.read_text().strip() or 0)
            except (OSError, ValueError):
                pid = 0
            if pid and pid != os.getpid() and _running(pid):
                raise FolderInUseError(
                    f"{folder} is being written by another command (pid {pid}, see {lock}); "
                    "wait for it to finish, or stop it, or choose another folder"
                ) from None
            lock.unlink(missing_ok=True)  # its process has gone: take it over
            continue
        with os.fdopen(fd, "w") as handle:
            handle.write(f"{os.getpid()}\n")
        break
    else:
        raise FolderInUseError(f"{folder}: another command took {lock} at the same moment")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)
        for path in created:  # innermost first
            if any(path.iterdir()):
                break
            path.rmdir()


def write_text(path: Path, text: str) -> None:
    """Write a whole text file atomically (see ``atomic_path``)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def copy_file(source: Path, dest: Path) -> None:
    """Copy ``source`` to ``dest`` atomically: ``dest`` is the old file or the whole copy."""
    with atomic_path(dest) as tmp:
        shutil.copyfile(source, tmp)


def _csv_text(rows: Sequence[dict[str, Any]], fields: Sequence[str]) -> str:
    handle = io.StringIO(newline="")
    writer = csv.DictWriter(handle, fieldnames=list(fields))
    writer.writeheader()
    writer.writerows(rows)
    return handle.getvalue()


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` (dicts with the same keys) as a CSV table with a header; none: no file."""
    if not rows:
        return
    write_text(path, _csv_text(rows, list(rows[0])))


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV table (values as text); a missing file has none."""
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def append_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Add ``rows`` to a CSV table, writing its header first if the file is new.

    The table is written again whole (atomically), so a stop never leaves half a row.
    """
    if not rows:
        return
    old = read_csv(path)
    fields = list(old[0]) if old else list(rows[0])
    write_text(path, _csv_text([*old, *rows], fields))


def library_versions(libraries: Sequence[str] = LIBRARIES) -> dict[str, str]:
    """The installed version of each library, ``"not installed"`` for a missing one."""
    versions = {}
    for name in libraries:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions
