"""What an evaluation or a training run writes down: game records, CSV tables, library versions."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

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


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` (dicts with the same keys) as a CSV table with a header; none: no file."""
    if not rows:
        return
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def append_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Add ``rows`` to a CSV table, writing its header first if the file is new."""
    if not rows:
        return
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)


def library_versions(libraries: Sequence[str] = LIBRARIES) -> dict[str, str]:
    """The installed version of each library, ``"not installed"`` for a missing one."""
    versions = {}
    for name in libraries:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions
