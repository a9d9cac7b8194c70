"""``scopa ladder``: every player of a config against every other, ranked by Elo.

``evaluation.ladder`` documents what is played, kept and reported. Add a player to the config
and run the same command again: only its pairings are played.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from cli.arguments import positive_int
from evaluation.ladder import (
    LadderConfig,
    describe,
    ladder_result,
    load_ladder_config,
    run_ladder,
    write_ladder,
)
from evaluation.records import folder_lock
from training.config import parse_overrides


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=Path("configs/ladder.yaml"),
        help="YAML ladder config: players, deals, seed, chunk, rules, table "
        "(default: configs/ladder.yaml)",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="replace a top-level key of the config, e.g. deals=100 or 'players=[random, greedy]'",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("runs/ladder"),
        help="output folder; its pairings/ journals are kept, so a rerun plays only what is "
        "missing (default: runs/ladder)",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help=f"worker processes (default: 1; this machine has {os.cpu_count()})",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    config = load_ladder_config(args.config, parse_overrides(args.overrides))
    start = time.perf_counter()
    with folder_lock(args.out):
        try:
            result = run_ladder(config, args.out, args.workers, progress=not args.no_progress)
        except KeyboardInterrupt:
            partial = ladder_result(config, args.out)
            write_ladder(args.out, partial, _header(config, args, start, "PARTIAL: stopped"))
            raise KeyboardInterrupt(
                f"a partial ladder of the {len(partial.records)} finished games is in "
                f"{args.out}; run the same command again to continue"
            ) from None
        text = write_ladder(args.out, result, _header(config, args, start))
    print(text, end="")
    print(
        f"played {result.played} games ({result.games - result.played} from the "
        f"journals); wrote {args.out}/ladder.md, ladder.csv, matrix.csv, pairings.csv, "
        "games.csv, ladder.png"
    )
    return 0


def _header(
    config: LadderConfig, args: argparse.Namespace, start: float, status: str | None = None
) -> dict[str, Any]:
    command = "scopa ladder " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    if len(sys.argv) < 2 or sys.argv[1] != "ladder":
        command = f"scopa ladder --config {args.config}"
    header: dict[str, Any] = {"status": status} if status else {}
    return (
        header
        | {"command": command, **describe(config)}
        | {"wall time": f"{time.perf_counter() - start:.0f} s with {args.workers} worker(s)"}
    )
