"""The progress bar every long command draws on stderr (tqdm): evaluations, training and the
collections and fits behind them, each hidden by its command's ``--no-progress``."""

from __future__ import annotations

from typing import Any


def progress_bar(
    total: int,
    unit: str,
    show: bool,
    desc: str | None = None,
    done: int = 0,
    unit_scale: bool = False,
) -> Any:
    """A bar of ``total`` ``unit``s, ``done`` of them at the start (a resumed run's); drawn
    only with ``show``."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=done,
        unit=unit,
        unit_scale=unit_scale,
        desc=desc,
        disable=not show,
        dynamic_ncols=True,
    )
