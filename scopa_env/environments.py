"""The AEC environment of every table, by table name: the harness and the command line build
their games here instead of choosing an environment module themselves.

    from scopa_env.environments import make_aec

    env = make_aec("scopone", episode="deal", reward="points")  # scopone_v0.raw_env
    env = make_aec("scopa_4")  # scopa_v0.raw_env(table="scopa_4")
"""

from __future__ import annotations

from typing import Any, cast

from scopa_env import scopa_v0, scopone_v0
from scopa_env.capture_env import CaptureGameEnv, classic_wrappers
from scopa_env.errors import TableError
from scopa_env.tables import Table, resolve_table


def make_aec(table: Table | str | None = None, wrapped: bool = False, **options: Any) -> Any:
    """The environment that plays ``table`` (``raw_env``, or ``env`` when ``wrapped``), with
    the environment's own ``options`` (``rules``, ``episode``, ``reward``, ``render_mode``...)."""
    table = resolve_table(table)
    raw: CaptureGameEnv
    if table.name in scopone_v0.DEALS:
        raw = scopone_v0.raw_env(deal=cast(scopone_v0.ScoponeDeal, table.name), **options)
    else:
        raw = scopa_v0.raw_env(table=table, **options)
    if raw.table != table:
        raise TableError(f"no environment plays the table {table.name!r} yet")
    return classic_wrappers(raw) if wrapped else raw
