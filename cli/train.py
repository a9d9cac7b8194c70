"""``scopa train``: train an agent from a config (``training.train`` documents the run)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from training.config import ConfigError, is_rllib_config, load_config
from training.train import collect_decisions, train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="YAML config (see configs/)")
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, e.g. ppo.n_epochs=2"
    )
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="continue a run from its last checkpoint"
    )
    parser.add_argument("--run-dir", type=Path, help="run folder (default: runs/NAME-TIMESTAMP)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--collect-only",
        action="store_true",
        help="play the warm start's decisions into RUN_DIR/warm_start and stop (no clone, no "
        "PPO); --resume RUN_DIR continues them, or the whole run without this flag",
    )


def run(args: argparse.Namespace) -> int:
    config_file = args.config if args.resume is None else args.resume / "config.yaml"
    if args.collect_only and config_file and config_file.is_file() and is_rllib_config(config_file):
        raise ConfigError("--collect-only plays a warm start's tasks; an RLlib run has none")
    if args.resume is not None:
        if args.config is not None:
            raise ConfigError("--resume uses the run's own config.yaml; drop --config")
        if (args.resume / "config.yaml").is_file() and is_rllib_config(args.resume / "config.yaml"):
            return _rllib(
                args.resume / "config.yaml",
                args.overrides,
                args.resume,
                not args.no_progress,
                resume=True,
            )
        # train() checks the overrides against the run before it rewrites its config.yaml.
        config = load_config(args.resume / "config.yaml", args.overrides)
    else:
        if args.config is None:
            raise ConfigError("give --config configs/NAME.yaml (or --resume RUN_DIR)")
        rllib = args.config.is_file() and is_rllib_config(args.config)  # engine: rllib
        if args.run_dir is not None and args.run_dir.exists():
            how = "" if rllib else f"continue it with --resume {args.run_dir} or "
            raise ConfigError(
                f"run folder {args.run_dir} already exists; {how}choose another --run-dir"
            )
        if rllib:
            return _rllib(args.config, args.overrides, args.run_dir, not args.no_progress)
        config = load_config(args.config, args.overrides)
    if args.collect_only:
        run_dir = args.resume or args.run_dir
        if run_dir is None:
            raise ConfigError("--collect-only saves the decisions in a run folder: give --run-dir")
        start = time.perf_counter()
        decisions = collect_decisions(
            config, run_dir, resume=args.resume is not None, progress=not args.no_progress
        )
        print(
            f"{decisions:,} decisions in {run_dir / 'warm_start'} "
            f"({time.perf_counter() - start:.0f} s); clone and train on them with "
            f"scopa train --resume {run_dir}"
        )
        return 0
    result = train(
        config,
        run_dir=args.resume or args.run_dir,
        resume=args.resume is not None,
        progress=not args.no_progress,
    )
    print(result.table)
    print(f"run folder: {result.run_dir}")
    return 0


def _rllib(
    path: Path, overrides: list[str], run_dir: Path | None, progress: bool, resume: bool = False
) -> int:
    from evaluation.ray_backend import import_ray

    import_ray()  # a clear message naming the extra, before the RLlib imports
    from training.rllib_train import load_rllib_config, train_rllib

    config = load_rllib_config(path, overrides)
    print(train_rllib(config, run_dir, resume=resume, progress=progress), end="")
    return 0
