"""``scopa value``: train the deal-value network that ``ismcts_value`` and ``alphabeta_value``
judge leaves with (``training.deal_value`` documents the run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from training.config import ConfigError, load_model
from training.deal_value import PROGRESS, WEIGHTS, DealValueConfig, train_deal_value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="YAML config (configs/deal_value.yaml)")
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, e.g. deals=1000"
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--overwrite", action="store_true", help=f"replace the {WEIGHTS} already in --out"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def run(args: argparse.Namespace) -> int:
    config = load_model(DealValueConfig, args.config, args.overrides)
    stopped = (args.out / PROGRESS).is_dir()  # carried on, even past its weights' writing
    if (args.out / WEIGHTS).exists() and not stopped and not args.overwrite:
        raise ConfigError(f"{args.out / WEIGHTS} exists; pass --overwrite to replace it")
    try:
        summary = train_deal_value(config, args.out, show_progress=not args.no_progress)
    except KeyboardInterrupt:
        progress = args.out / PROGRESS
        if not progress.is_dir():
            raise
        raise KeyboardInterrupt(
            f"the finished self-play and epochs are in {progress}: run the same command again "
            "to continue from them"
        ) from None
    print(
        f"{summary['positions']} positions from {summary['deals']} deals; held-out R^2 "
        f"{summary['held_out_r2']}; self-play {summary['self_play_s']} s, fit "
        f"{summary['fit_s']} s; read back from a stopped run: {summary['read_back']}"
    )
    print(f"wrote {args.out / WEIGHTS}, config.yaml, report.md")
    return 0
