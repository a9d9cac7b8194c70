"""The ``scopa`` command: one subcommand per task.

Each subcommand lives in its own module, listed in :data:`COMMANDS` with its one-line help. The
module provides::

    def add_arguments(parser: argparse.ArgumentParser) -> None: ...
    def run(args: argparse.Namespace) -> int: ...

A module is imported only when its subcommand is chosen, so ``scopa --help`` stays fast and never
imports heavy dependencies such as torch. A listed module that does not exist (yet) is left out.
To add a subcommand, write its module and add one line to :data:`COMMANDS`.

The first Ctrl-C or SIGTERM stops any command within seconds: the command keeps what it
finished (a journal, the checkpoints, the warm start's task files), ends its worker processes,
prints one line saying how to continue and exits with 130 (SIGINT) or 143 (SIGTERM). A second
one while it cleans up ends the worker processes and the command at once.

A mistake in what was asked (``scopa_env.errors.ScopaError``: a bad player, rules, table,
checkpoint or config) is caught here, once for every subcommand: its message is printed on
stderr, without a traceback, and the command exits with status 2, as argparse does for a bad
option.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, cast

from scopa_env.errors import ScopaError


class Command(NamedTuple):
    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "demo": Command("cli.demo", "play one match between two baseline players"),
    "play": Command("cli.play", "play a match against an agent in the terminal"),
    "eval": Command("cli.eval", "evaluate agents against each other"),
    "ladder": Command("cli.ladder", "rank players by Elo in a round-robin from a config"),
    "compare": Command(
        "cli.compare", "two players against the same opponents, paired deck by deck"
    ),
    "predict": Command("cli.predict", "how well the opponent models predict a player's cards"),
    "train": Command("cli.train", "train an agent from a config"),
    "value": Command("cli.value", "train the deal-value network the *_value searches use"),
    "value-ensemble": Command(
        "cli.value_ensemble", "average deal-value networks into one file the searches read"
    ),
    "imitation": Command("cli.imitation", "networks' picks against a teacher's saved decisions"),
    "last-round": Command(
        "cli.last_round", "fit the network the last_round player plays the last round by"
    ),
    "seat-value": Command("cli.seat_value", "fit the network the seat_value player plays by"),
    "seat-ensemble": Command(
        "cli.seat_ensemble", "average seat networks into one file seat_value plays"
    ),
    "recipe": Command("cli.recipe", "make an agent by a recipe: scopa commands run in order"),
    "bench": Command("cli.bench", "benchmark the engine against OpenSpiel"),
}


class CommandModule(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def available_commands() -> dict[str, Command]:
    """The entries of :data:`COMMANDS` whose module exists."""
    return {name: cmd for name, cmd in COMMANDS.items() if _module_exists(cmd.module)}


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _version() -> str:
    """The installed package's version (``scopa_env.__version__``), read without importing it."""
    try:
        return importlib.metadata.version("scopa-env")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for ``argv``; only the chosen subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="scopa", description="Scopa environments: play, train, evaluate and benchmark."
    )
    parser.add_argument("--version", action="version", version=f"scopa-env {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = next((arg for arg in argv if not arg.startswith("-")), None)
    for name, cmd in available_commands().items():
        subparser = subparsers.add_parser(name, help=cmd.help, description=cmd.help)
        if name == chosen:
            module = cast(CommandModule, importlib.import_module(cmd.module))
            module.add_arguments(subparser)
            subparser.set_defaults(run=module.run)
    return parser


class _Stop:
    """The signal handler of a running command: the first signal interrupts, a second ends."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __call__(self, signum: int, frame: object) -> None:
        if self.signal is None:
            self.signal = signum
            raise KeyboardInterrupt
        print(f"\nscopa: {signal.Signals(signum).name} again: stopping now", file=sys.stderr)
        for child in multiprocessing.active_children():
            child.kill()
        os._exit(128 + signum)

    def install(self) -> dict[int, Any]:
        """Handle SIGINT and SIGTERM; returns the handlers it replaced."""
        return {signum: signal.signal(signum, self) for signum in (signal.SIGINT, signal.SIGTERM)}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv).parse_args(argv)
    run = cast(Callable[[argparse.Namespace], int], args.run)
    stop = _Stop()
    replaced = stop.install() if threading.current_thread() is threading.main_thread() else {}
    try:
        return run(args)
    except KeyboardInterrupt as interrupt:
        signum = stop.signal or signal.SIGINT
        how = f"; {interrupt.args[0]}" if interrupt.args else ""
        print(
            f"\nscopa {args.command}: stopped by {signal.Signals(signum).name}{how}",
            file=sys.stderr,
        )
        return 128 + signum
    except ScopaError as error:  # a mistake in what was asked: its message, not a traceback
        print(f"scopa {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped early, e.g. `| head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        if stop.signal is None:  # once stopped, a second signal still ends the process at once
            for signum, handler in replaced.items():
                signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
