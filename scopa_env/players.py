"""The player protocol, and players by name for the environments that take an opponent.

A player maps an environment's observation dict (``"observation"``, ``"action_mask"``) to a
legal action; players that oppose a whole batch also have ``act_batch(observations, masks)``.
A player that can play two-player Scopa only says why in ``two_player_only`` (``check_seats``).
The game knows no player itself: ``make_player`` asks the packages that declare players under
the ``scopa_env.players`` entry-point group (this project's ``agents`` package does, in
``pyproject.toml``), so ``ScopaSingleAgentEnv(opponent="greedy")`` works without the game
importing the players.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from scopa_env.errors import PlayerError, UnknownPlayerError

Observation = Mapping[str, np.ndarray]
__all__ = [
    "ENTRY_POINT_GROUP",
    "Player",
    "PlayerError",
    "UnknownPlayerError",
    "check_seats",
    "make_player",
]

#: The entry-point group of player factories: ``factory(name, **options) -> Player``.
ENTRY_POINT_GROUP = "scopa_env.players"


@runtime_checkable
class Player(Protocol):
    """Anything that plays Scopa from observations."""

    def act(self, observation: Observation) -> int:
        """A legal action for this observation dict."""
        ...


def check_seats(player: object, seats: int, label: str | None = None) -> None:
    """Refuse a player that plays two-player Scopa only at a table of ``seats`` seats.

    Such a player (or the owner of a bound ``act``) says why in ``two_player_only``, a string
    (its network reads two-player positions, say); a player without it plays every table. The
    players check each decision with it, and the commands and environments that seat a player
    check it before they write or play anything.
    """
    owner = getattr(player, "__self__", player)
    why = getattr(owner, "two_player_only", None)
    if why is not None and seats != 2:
        name = label or getattr(owner, "name", type(owner).__name__)
        raise PlayerError(
            f"{name} plays two-player Scopa only ({why}); this table has {seats} seats"
        )


@cache
def _factories() -> tuple[Callable[..., Player], ...]:
    return tuple(point.load() for point in entry_points(group=ENTRY_POINT_GROUP))


def make_player(name: str, **options: Any) -> Player:
    """The player called ``name``, built with ``options`` (``rules``, ``seed``, its own)."""
    factories = _factories()
    if not factories:
        raise UnknownPlayerError(
            f"no package provides players (entry points {ENTRY_POINT_GROUP!r}), so {name!r} "
            "cannot be built; install scopa-env, or pass a player object instead of a name"
        )
    errors = []
    for factory in factories:
        try:
            return factory(name, **options)
        except UnknownPlayerError as error:
            errors.append(str(error))
    raise UnknownPlayerError("; ".join(errors))
