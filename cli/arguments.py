"""Argument types the subcommands share: counts and seeds checked by argparse, never coerced.

A bad value stops the command before anything runs, with argparse's message naming the option
and the value, and exit status 2::

    scopa eval greedy random --chunk -1
    scopa eval: error: argument --chunk: must be a positive integer, got '-1'
"""

from __future__ import annotations

import argparse


def _integer(text: str, least: int, what: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A count of at least 1: workers, repeats, deal pairs per task."""
    return _integer(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """A count that may be 0, or a seed (numpy seeds are non-negative)."""
    return _integer(text, 0, "a non-negative integer")


def positive_float(text: str) -> float:
    """A duration in seconds, more than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def table_names(text: str) -> tuple[str, ...]:
    """Comma-separated names of registered tables, refused as ``resolve_table`` refuses one."""
    from scopa_env.errors import TableError
    from scopa_env.tables import resolve_table

    try:
        return tuple(resolve_table(name).name for name in text.split(","))
    except TableError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
