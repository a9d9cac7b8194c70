"""``scopa bench``: speed against OpenSpiel and PettingZoo, measured in the same run.

``benchmark.speed`` documents what is measured and against which peers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmark.speed import BATCH_SIZES, QUICK_BATCH_SIZES, VECTOR_ENV_MAX, benchmark, markdown
from cli.arguments import non_negative_int, positive_float, positive_int, table_names
from evaluation.records import write_text
from scopa_env.rules import PRESETS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="a short run (about 30 s)")
    parser.add_argument("--out", type=Path, default=Path("runs/bench"), help="output folder")
    parser.add_argument(
        "--repeats", type=positive_int, default=None, help="repeats (default 5; quick 2)"
    )
    parser.add_argument(
        "--seconds",
        type=positive_float,
        default=None,
        help="seconds per measurement (default 2; quick 0.3)",
    )
    parser.add_argument(
        "--batch-sizes", type=lambda s: tuple(positive_int(x) for x in s.split(",")), default=None,
        help=f"comma-separated batch sizes (default {','.join(map(str, BATCH_SIZES))}); the "
        f"vector env runs at the largest up to {VECTOR_ENV_MAX}, or at {VECTOR_ENV_MAX}",
    )  # fmt: skip
    parser.add_argument(
        "--rules", default="scopa", choices=sorted(PRESETS), help="rules preset for our engines"
    )
    parser.add_argument(
        "--tables", type=table_names, default=None,
        help="comma-separated tables measured beside two-player Scopa (default every table)",
    )  # fmt: skip
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU core")
    parser.add_argument("--seed", type=non_negative_int, default=0)


def run(args: argparse.Namespace) -> int:
    result = benchmark(
        rules=args.rules,
        seed=args.seed,
        repeats=args.repeats if args.repeats is not None else (2 if args.quick else 5),
        seconds=args.seconds if args.seconds is not None else (0.3 if args.quick else 2.0),
        sizes=args.batch_sizes or (QUICK_BATCH_SIZES if args.quick else BATCH_SIZES),
        pin=not args.no_pin,
        tables=args.tables,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(args.out / "bench.json", json.dumps(result, indent=2) + "\n")
    text = markdown(result)
    write_text(args.out / "bench.md", text)
    print(text)
    print(f"wrote {args.out / 'bench.json'} and {args.out / 'bench.md'}")
    return 0
