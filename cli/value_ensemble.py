"""``scopa value-ensemble``: one file that averages deal-value networks fitted apart
(``agents.deal_value.DealValue.ensemble``), which the ``*_value`` searches read as one network;
with ``--held-deals``, each network's R^2 and the mean's on fresh self-play none of them saw.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.deal_value import DealValue
from cli.arguments import non_negative_int, positive_int
from training.deal_value import WEIGHTS, DealValueConfig, r_squared, save_network, self_play


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "networks",
        type=Path,
        nargs="+",
        help=f"deal-value networks (.npz) or the folders scopa value wrote ({WEIGHTS} inside)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the ensemble's file (.npz)")
    parser.add_argument(
        "--held-deals",
        type=positive_int,
        help="report R^2 on this many deals of the shipped network's self-play",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=99,
        help="the seed of those deals: one no network was fitted with",
    )
    parser.add_argument("--workers", type=positive_int, default=2, help="self-play processes")


def network_file(path: Path) -> Path:
    """A network's file: ``path`` itself, or the weights in a folder ``scopa value`` wrote."""
    return path / WEIGHTS if path.is_dir() else path


def run(args: argparse.Namespace) -> int:
    files = [network_file(path) for path in args.networks]
    if args.out.resolve() in {file.resolve() for file in files}:
        raise SystemExit(f"--out {args.out} is one of the networks; write the ensemble elsewhere")
    nets = [DealValue.load(file) for file in files]
    try:
        ensemble = DealValue.ensemble(nets)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    if args.held_deals is not None:
        config = DealValueConfig(deals=args.held_deals, seed=args.seed, workers=args.workers)
        held = self_play(config)
        print(f"R^2 on {len(held.rows):,} positions of {args.held_deals:,} fresh deals:")
        for name, net in [*zip(files, nets, strict=True), ("their mean", ensemble)]:
            print(f"  {name}: {r_squared(net, held.rows, held.targets):.4f}")
    save_network(ensemble, args.out)
    print(f"wrote {args.out}: the mean of {len(nets)} deal-value networks")
    return 0
