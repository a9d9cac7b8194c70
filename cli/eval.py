"""``scopa eval``: head-to-head and round-robin evaluation of players on duplicate deals.

The harness (``evaluation.harness``) documents what is played and reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from cli.arguments import non_negative_int, positive_int
from cli.rules_args import add_rules_arguments, rules_from_args
from evaluation.harness import (
    JOURNAL,
    RUN_FILE,
    Journal,
    evaluate,
    field_report,
    is_free_for_all,
    run_identity,
    summarise_pairings,
)
from evaluation.records import folder_lock, write_text
from evaluation.report import write_outputs
from scopa_env.rules import Rules, describe_rules
from scopa_env.tables import TABLES, resolve_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "players",
        nargs="+",
        metavar="PLAYER",
        help="two players (head-to-head) or more (round-robin; at the free-for-all table "
        "scopa_3 exactly three, one per seat): random, greedy, heuristic, ismcts, pretrained "
        "or a checkpoint path, optionally with options as name:key=value,... "
        "(e.g. ismcts:iterations=400)",
    )
    parser.add_argument(
        "--deals",
        type=non_negative_int,
        default=200,
        help="duplicate deal pairs per pairing; each deck is played twice (default: 200)",
    )
    parser.add_argument(
        "--matches",
        type=non_negative_int,
        default=0,
        help="duplicate match pairs per pairing (default: 0)",
    )
    add_rules_arguments(parser)
    parser.add_argument(
        "--table",
        "--game",
        dest="table",
        default="scopa",
        choices=sorted(TABLES),
        help="scopa (two players, default); scopa_4, scopa_6, scopone, scopone_scientifico: "
        "two sides, each of copies of one player; scopa_3: three players for themselves, "
        "every deck played in each rotation of the seats",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of decks and players"
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help=f"worker processes (default: 1; this machine has {os.cpu_count()})",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="run the tasks on Ray: alone, start Ray on this machine (with --workers CPUs); "
        "with an address (auto, HOST:PORT, ray://HOST:10001) join that cluster; the results "
        "are the same as without (needs the distributed extra)",
    )
    parser.add_argument(
        "--chunk",
        type=positive_int,
        default=20,
        help="duplicate deal pairs per task handed to a worker (default: 20)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("runs/eval"), help="output folder (default: runs/eval)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    start = time.perf_counter()
    journal = args.out / JOURNAL
    if journal.is_file():
        print(f"scopa eval: continuing from {journal}", file=sys.stderr)
    with folder_lock(args.out):  # a second command writing the same folder is refused
        try:
            records, summaries, elo_rows = evaluate(
                args.players,
                deals=args.deals,
                matches=args.matches,
                rules=rules,
                seed=args.seed,
                workers=args.workers,
                progress=not args.no_progress,
                chunk=args.chunk,
                table=args.table,
                journal=journal,
                ray=args.ray,
            )
        except KeyboardInterrupt:
            if not journal.is_file():
                raise
            kept = Journal.existing(journal)
            done = kept.records()
            summaries, _ = summarise_pairings(kept.identity["players"], done)
            status = f"PARTIAL: stopped after {len(done)} games; the same command continues"
            write_outputs(args.out, done, summaries, [], _header(args, rules, start, status))
            _write_identity(args, rules)
            raise KeyboardInterrupt(
                f"a partial report of the {len(done)} finished games is in {args.out}, and the "
                f"games in {journal}: run the same command again to continue from them"
            ) from None
        fields = (
            field_report(records, args.players)
            if is_free_for_all(resolve_table(args.table))
            else []
        )
        header = _header(args, rules, start)
        report = write_outputs(args.out, records, summaries, elo_rows, header, fields)
        _write_identity(args, rules)
        journal.unlink()
    print(report, end="")
    print(
        f"wrote {args.out}/games.csv, summary.csv, report.md, report.png, {RUN_FILE}"
        + (", elo.csv" if elo_rows else "")
        + (", field.csv" if fields else "")
    )
    return 0


def _write_identity(args: argparse.Namespace, rules: Rules) -> None:
    """The run's ``run.json``: what ``scopa compare`` checks before pairing two runs' decks."""
    identity = run_identity(
        args.players, args.deals, args.matches, args.seed, rules, args.chunk, args.table
    )
    write_text(args.out / RUN_FILE, json.dumps(identity, indent=2) + "\n")


def _header(
    args: argparse.Namespace, rules: Rules, start: float, status: str | None = None
) -> dict[str, Any]:
    header: dict[str, Any] = {"status": status} if status else {}
    return header | {
        "command": "scopa eval " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        if len(sys.argv) > 1 and sys.argv[1] == "eval"
        else "scopa eval",
        "table": args.table,
        "rules": describe_rules(rules),
        "seed": args.seed,
        "duplicate deal pairs per pairing": args.deals,
        "duplicate match pairs per pairing": args.matches,
        "wall time": f"{time.perf_counter() - start:.0f} s with "
        + (f"Ray ({args.ray})" if args.ray else f"{args.workers} worker(s)"),
    }
