"""``scopa seat-ensemble``: one file that averages seat networks fitted apart
(``agents.seat_value.SeatEnsemble``), played as one network by ``seat_value:network=FILE``;
with ``--held``, the held-out regret of each network and of their mean.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.seat_value import SeatEnsemble, SeatValue
from training.imitation import read_tasks
from training.last_round import Judge, regret, save
from training.seat_value import seat_afterstates


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "networks", type=Path, nargs="+", help="seat networks (scopa seat-value writes them)"
    )
    parser.add_argument("--out", type=Path, required=True, help="the ensemble's file (.pt)")
    parser.add_argument(
        "--held", type=Path, help="a search's saved decisions to report the regrets on"
    )


def run(args: argparse.Namespace) -> int:
    nets = [SeatValue.load(path) for path in args.networks]
    try:
        ensemble = SeatEnsemble(nets)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    if args.held is not None:
        held = seat_afterstates(read_tasks(args.held, choices_only=False), ensemble.rules)
        print(f"held-out regret on {held.decisions:,} decisions, points/decision:")
        judges: list[tuple[object, Judge]] = [*zip(args.networks, nets, strict=True)]
        for name, judge in [*judges, ("their mean", ensemble)]:
            mean, half = regret(judge, held)
            print(f"  {name}: {mean:.4f} ± {half:.4f}")
    save(ensemble.to_dict(), args.out)
    print(f"wrote {args.out}: the mean of {len(nets)} seat networks")
    return 0
