"""``scopa demo``: one match between the random and the greedy player, printed deal by deal."""

from __future__ import annotations

import argparse

import numpy as np

from agents import make_agent
from cli.arguments import non_negative_int
from cli.rules_args import add_rules_arguments, rules_from_args
from scopa_env import render, scopa_v0

CATEGORIES = ("cards", "coins", "settebello", "primiera", "scope")
PLAYERS = ("random", "greedy")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed", type=non_negative_int, default=None, help="random seed (default: fresh)"
    )
    add_rules_arguments(parser)
    parser.add_argument("--moves", action="store_true", help="also print every play")


def run(args: argparse.Namespace) -> int:
    seed = (
        args.seed if args.seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
    )
    rules = rules_from_args(args)
    env = scopa_v0.raw_env(rules=rules)
    players = dict(
        zip(
            env.possible_agents,
            (make_agent(n, rules=rules, seed=seed) for n in PLAYERS),
            strict=True,
        )
    )
    options = "".join(f" {k}={str(v).lower()}" for k, v in args.rule if k != "target")
    print(f"scopa demo: rules={args.rules}{options} target={rules.target} seed={seed}")
    print("  ".join(f"P{i} {name}" for i, name in enumerate(PLAYERS)))
    shown = CATEGORIES + tuple(name for name in ("re_bello", "napola") if getattr(rules, name))

    env.reset(seed=seed)
    dealer = env.deal.dealer
    while not all(env.terminations.values()):
        agent = env.agent_selection
        deals = env.match.deals_played
        env.step(players[agent].act(env.observe(agent)))
        if args.moves and env.last_play is not None and env.phase == "play":
            print(f"    {render.describe_play(env.last_play)}")
        if env.match.deals_played > deals:  # that play ended a deal
            a, b = env.infos[agent]["deal_score"]
            parts = " ".join(f"{name} {a[name]}-{b[name]}" for name in shown)
            scores = env.match.scores
            print(
                f"deal {env.match.deals_played:2d}  dealer P{dealer}  points "
                f"{a['total']}-{b['total']}  ({parts})  match {scores[0]}-{scores[1]}"
            )
            dealer = env.deal.dealer
    winner = env.match.winner
    assert winner is not None
    won, lost = env.match.scores[winner], env.match.scores[1 - winner]
    print(f"P{winner} ({PLAYERS[winner]}) wins {won}-{lost}")
    return 0
