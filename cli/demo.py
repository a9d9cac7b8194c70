"""``scopa demo``: one match between two simple players, printed deal by deal."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from cli.rules_args import add_rules_arguments, rules_from_args
from scopa_env.engine import Deal, Match, Move

Player = Callable[[Deal, np.random.Generator], Move]

CATEGORIES = ("cards", "coins", "settebello", "primiera", "scope")


def random_player(deal: Deal, rng: np.random.Generator) -> Move:
    """A uniformly random legal move."""
    moves = deal.legal_moves()
    return moves[rng.integers(len(moves))]


def greedy_player(deal: Deal, rng: np.random.Generator) -> Move:
    """A legal move that captures the most cards; ties broken at random."""
    moves = deal.legal_moves()
    most = max(len(move.capture) for move in moves)
    best = [move for move in moves if len(move.capture) == most]
    return best[rng.integers(len(best))]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")
    add_rules_arguments(parser)
    parser.add_argument("--moves", action="store_true", help="also print every play")


def run(args: argparse.Namespace) -> int:
    seed = (
        args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
    )
    rng = np.random.default_rng(seed)
    try:
        rules = rules_from_args(args)
    except ValueError as error:
        raise SystemExit(f"scopa demo: {error}") from None
    players: tuple[tuple[str, Player], ...] = (("random", random_player), ("greedy", greedy_player))

    options = "".join(f" {k}={str(v).lower()}" for k, v in args.rule if k != "target")
    print(f"scopa demo: rules={args.rules}{options} target={rules.target} seed={seed}")
    print("  ".join(f"P{i} {name}" for i, (name, _) in enumerate(players)))
    shown = CATEGORIES + tuple(name for name in ("re_bello", "napola") if getattr(rules, name))
    match = Match(rules, first_dealer=int(rng.integers(2)))
    while not match.is_over:
        dealer = match.dealer
        deal = match.new_deal(rng)
        while not deal.is_over:
            player = deal.current_player
            move = players[player][1](deal, rng)
            if args.moves:
                print(f"    P{player} {move}")
            deal.play(move)
        a, b = deal.score()
        match.record_deal(deal)
        parts = " ".join(f"{name} {getattr(a, name)}-{getattr(b, name)}" for name in shown)
        print(
            f"deal {match.deals_played:2d}  dealer P{dealer}  points {a.total}-{b.total}"
            f"  ({parts})  match {match.scores[0]}-{match.scores[1]}"
        )
    winner = match.winner
    assert winner is not None
    won, lost = match.scores[winner], match.scores[1 - winner]
    print(f"P{winner} ({players[winner][0]}) wins {won}-{lost}")
    return 0
