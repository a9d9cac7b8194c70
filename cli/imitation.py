"""``scopa imitation``: how closely networks play a teacher's saved decisions, and what their
differences cost by the teacher's values (``training.imitation`` documents the figures)."""

from __future__ import annotations

import argparse
from pathlib import Path

from training.imitation import imitation, network_logits, read_tasks, uniform_imitation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "networks",
        nargs="+",
        metavar="NETWORK",
        help="pretrained_v5, pretrained_v4 or a policy checkpoint's path (a run's clone.zip)",
    )
    parser.add_argument(
        "--tasks",
        type=Path,
        required=True,
        help="a warm start's saved decisions: RUN/warm_start (its task_*.npz)",
    )


def run(args: argparse.Namespace) -> int:
    decisions = read_tasks(args.tasks)
    valued = "" if decisions.values is not None else " (the teacher saved no values: no regret)"
    print(f"{len(decisions.actions):,} decisions with a choice in {args.tasks}{valued}")
    print("| network | phase | decisions | agreement | valued | regret (points/decision) |")
    print("|---|---|---:|---:|---:|---:|")
    reports = [
        (network, imitation(decisions, network_logits(network, decisions.obs)))
        for network in args.networks
    ]
    reports.append(("a uniformly random legal pick", uniform_imitation(decisions)))
    for network, rows in reports:
        for row in rows:
            print(
                f"| {network} | {row['phase']} | {row['decisions']:,} | {row['agreement']:.1%} "
                f"± {row['agreement_ci']:.1%} | {row['valued']:,} | {row['regret']:.4f} "
                f"± {row['regret_ci']:.4f} |"
            )
    return 0
