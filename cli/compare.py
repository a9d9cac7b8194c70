"""``scopa compare``: two players' difference against the same opponents, paired deck by deck.

``evaluation.compare`` documents what is compared and why it is tighter than two reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluation.compare import compare_runs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs=2,
        type=Path,
        metavar="RUN",
        help="two folders of `scopa eval` runs with the same seed, rules and table whose "
        "players are the same but one (head to head: sharing the opponent)",
    )
    parser.add_argument(
        "--player",
        metavar="NAME",
        help="the player compared when both runs list the same players: the same name "
        "played differently in each (a default or a checkpoint changed between the runs)",
    )


def run(args: argparse.Namespace) -> int:
    run_a, run_b = args.runs
    rows = compare_runs(run_a, run_b, args.player)  # refused runs print no table
    print("| A | B | against | decks | A points/deal | B points/deal | A - B | correlation |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for c in rows:
        print(
            f"| {c.player_a} | {c.player_b} | {c.opponent} | {c.decks} | {c.points_a:+.3f} | "
            f"{c.points_b:+.3f} | {c.difference:+.3f} ± {c.difference_ci:.3f} | "
            f"{c.correlation:.2f} |"
        )
    return 0
