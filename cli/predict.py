"""``scopa predict``: how well the opponent models predict a player's cards.

``evaluation.prediction`` documents what is measured; the network's power is fitted on the
first half of the choices and every figure is of the second half.
"""

from __future__ import annotations

import argparse

from agents.policy import SHIPPED_POLICY
from cli.arguments import non_negative_int, positive_int
from evaluation.prediction import (
    ask_again,
    card_choices,
    fit_power,
    mean_log_likelihood,
    own_log_likelihood,
    own_top_one,
    top_one,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "player",
        nargs="?",
        default="ismcts",
        metavar="PLAYER",
        help="the player whose cards are predicted, in self-play at two-player Scopa "
        "(default: ismcts), optionally name:key=value,...",
    )
    parser.add_argument(
        "--deals", type=positive_int, default=100, help="deals of self-play (default: 100)"
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the deals and the players"
    )
    parser.add_argument(
        "--network",
        default=SHIPPED_POLICY,
        help=f"the policy network that predicts: {SHIPPED_POLICY} (default), pretrained_v4 or "
        "a checkpoint path",
    )
    parser.add_argument(
        "--repeats",
        type=non_negative_int,
        default=0,
        help="put each held-out choice to the player again this many times, with fresh "
        "randomness, and add a row for its own spread: what no model of it can beat (default: "
        "0, no row)",
    )


def run(args: argparse.Namespace) -> int:
    choices = card_choices(args.player, args.deals, args.seed, args.network)
    half = len(choices) // 2
    fit, held_out = choices[:half], choices[half:]
    if args.repeats:
        held_out = ask_again(args.player, held_out, args.repeats, args.seed)
    power = fit_power(fit)
    print(f"{len(choices)} card choices of {args.player}; figures on the last {len(held_out)}")
    print("| model | mean log-likelihood of the card played | top-1 |")
    print("|---|---:|---:|")
    print(
        f"| soft greedy (`infer`) | {mean_log_likelihood(held_out):.3f} | "
        f"{top_one(held_out, network=False):.3f} |"
    )
    fitted = f"network, power {power:.2f} (fitted on the first half)"
    for label, p in ((fitted, power), ("network, power 1", 1.0)):
        print(
            f"| {label} | {mean_log_likelihood(held_out, p):.3f} | {top_one(held_out, True):.3f} |"
        )
    if args.repeats:
        print(
            f"| the player itself, asked {args.repeats} times more | "
            f"{own_log_likelihood(held_out):.3f} | {own_top_one(held_out):.3f} |"
        )
    return 0
