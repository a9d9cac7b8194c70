"""``scopa last-round``: fit the network ``last_round`` plays the last round by, from a search's
saved decisions (``training.last_round`` documents the fit). ``scopa seat-value`` runs the same
fit for the network ``seat_value`` plays the earlier decisions by (``fit_command``).

The fit saves itself after each epoch beside ``--out`` (``NAME.fit.pt``); the same command run
again after a stop carries on from there, and the file goes once the network is written.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from agents.last_round import LastRoundValue
from cli.rules_args import add_rules_arguments, rules_from_args
from scopa_env.rules import Rules
from training.imitation import read_tasks
from training.last_round import (
    LEVEL_WEIGHT,
    PICK_TEMPERATURE,
    Afterstates,
    afterstates_of,
    fit,
    regret,
    save,
)
from training.warm_start import Decisions


def saved_fit(out: Path) -> Path:
    """Where the fit writing ``out`` saves itself after each epoch, until it ends."""
    return out.with_suffix(".fit.pt")


def add_arguments(parser: argparse.ArgumentParser, width: int = 64) -> None:
    parser.add_argument(
        "--tasks",
        type=Path,
        nargs="+",
        required=True,
        help="warm starts' saved decisions with a search's values (RUN/warm_start)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the network's file (.pt)")
    parser.add_argument(
        "--held", type=Path, help="other tasks to report the regret on after each epoch"
    )
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=512, help="decisions a step")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="the one-cycle peak")
    parser.add_argument("--width", type=int, default=width)
    parser.add_argument(
        "--layers",
        type=int,
        default=2,
        help="transformer layers over the cards; 0: none, each card read alone (far cheaper)",
    )
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--level-weight",
        type=float,
        default=LEVEL_WEIGHT,
        help="the weight of the plain squared error beside the one centred on each decision: "
        "more ties values of different positions to one scale (a search compares them)",
    )
    parser.add_argument(
        "--pick-weight",
        type=float,
        default=0.0,
        help="the weight of the expected regret of a softmax pick by the network's values, "
        "beside the squared errors: a loss on the choice rather than on every value",
    )
    parser.add_argument(
        "--pick-temperature",
        type=float,
        default=PICK_TEMPERATURE,
        help="that softmax's temperature, in points",
    )
    parser.add_argument(
        "--init",
        type=Path,
        help="a saved network of the same shape and rules whose weights the fit starts from",
    )
    add_rules_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return fit_command(args, LastRoundValue, afterstates_of, "last-round decisions")


def fit_command(
    args: argparse.Namespace,
    network: type[LastRoundValue],
    extract: Callable[[Decisions, Rules], Afterstates],
    what: str,
    options: dict[str, Any] | None = None,
) -> int:
    """Fit a ``network`` to the decisions ``extract`` keeps (``what`` they are) as the
    arguments of ``add_arguments`` say, and write it to ``--out``; ``options`` are the
    network's other constructor arguments."""
    options = dict(options or {})
    if args.epochs < 1 or args.batch_size < 1 or not args.learning_rate > 0:
        raise SystemExit("--epochs and --batch-size must be positive, --learning-rate above 0")
    if not args.level_weight >= 0:
        raise SystemExit(f"--level-weight must be 0 or more, got {args.level_weight}")
    if not args.pick_weight >= 0 or not args.pick_temperature > 0:
        raise SystemExit(
            f"--pick-weight must be 0 or more and --pick-temperature above 0, got "
            f"{args.pick_weight} and {args.pick_temperature}"
        )
    rules = rules_from_args(args)
    start = time.perf_counter()
    data = extract(read_tasks(*args.tasks, choices_only=False), rules)
    held = extract(read_tasks(args.held, choices_only=False), rules) if args.held else None
    print(
        f"{data.decisions:,} {what} ({len(data.rows):,} moves) read in "
        f"{time.perf_counter() - start:.0f} s" + (f"; {held.decisions:,} held out" if held else "")
    )
    torch.manual_seed(args.seed)
    net = network(args.width, args.layers, args.heads, rules, **options)
    if args.init is not None:
        init = network.load(args.init)
        shape = (init.width, init.layers, init.heads, init.rules, init.options())
        if shape != (net.width, net.layers, net.heads, rules, net.options()):
            raise SystemExit(
                f"--init {args.init} is a network of width {init.width}, {init.layers} layers, "
                f"{init.heads} heads, {init.rules} and {init.options()}; this fit makes width "
                f"{net.width}, {net.layers} layers, {net.heads} heads, {rules} and "
                f"{net.options()}"
            )
        net.load_state_dict(init.state_dict())
    progress = saved_fit(args.out)
    identity = {
        "tasks": [str(folder.resolve()) for folder in args.tasks],
        "decisions": data.decisions,  # a folder whose tasks changed since is another fit
        "init": None if args.init is None else str(args.init.resolve()),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "width": args.width,
        "layers": args.layers,
        "heads": args.heads,
        "seed": args.seed,
        "level_weight": args.level_weight,
        **(
            {"pick_weight": args.pick_weight, "pick_temperature": args.pick_temperature}
            if args.pick_weight
            else {}
        ),
        "rules": rules.to_dict(),
        **options,
    }

    def report(epoch: int, loss: float) -> None:
        line = f"epoch {epoch + 1}: loss {loss:.4f}"
        if held is not None:
            mean, half = regret(net, held)
            line += f", held-out regret {mean:.4f} ± {half:.4f} points/decision"
        print(f"{line} ({time.perf_counter() - start:.0f} s)", flush=True)

    if progress.is_file():
        print(f"carrying on the fit saved in {progress}")
    elif args.init is not None and held is not None:
        mean, half = regret(net, held)
        print(f"held-out regret of {args.init}: {mean:.4f} ± {half:.4f} points/decision")
    fit(
        data, net, args.epochs, args.batch_size, args.learning_rate, args.seed, report,
        progress, identity, args.level_weight, args.pick_weight, args.pick_temperature,
    )  # fmt: skip
    save(net, args.out)
    progress.unlink()
    mean, half = regret(net, data)
    print(f"regret on the decisions fitted: {mean:.4f} ± {half:.4f}; saved {args.out}")
    return 0
