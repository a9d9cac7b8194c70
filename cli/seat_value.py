"""``scopa seat-value``: fit the network ``seat_value`` plays the decisions before the last round
by, from a search's saved decisions (``training.seat_value``); the command's options and its
stopped fits are ``scopa last-round``'s.
"""

from __future__ import annotations

import argparse

from agents.seat_value import SeatValue
from cli import last_round
from training.seat_value import seat_afterstates


def add_arguments(parser: argparse.ArgumentParser) -> None:
    last_round.add_arguments(parser, width=128)
    parser.add_argument(
        "--plays",
        action="store_true",
        help="the network reads the opponent's plays this round too (agents.seat_value)",
    )


def run(args: argparse.Namespace) -> int:
    return last_round.fit_command(
        args,
        SeatValue,
        seat_afterstates,
        "decisions before the last round",
        {"plays": True} if args.plays else {},
    )
