"""The player protocol, and players by name for the environments that take an opponent.

A player maps an environment's observation dict (``"observation"``, ``"action_mask"``) to a
legal action; players that oppose a whole batch also have ``act_batch(observations, masks)``.
What a player can play it says in optional attributes, which ``check_table`` reads before a
command or an environment seats it (a player with none plays every table):

======================  ==================================================================
``two_player_only``     why it plays two-player Scopa only (its network reads two-player
                        positions, say); ``check_seats`` also refuses its moves elsewhere
``trained_table``       the table its network was trained for
``observation_shape``   the shape of the observation vector its network reads
``base``                a player it plays through, checked with it
======================  ==================================================================

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

from scopa_env.errors import PlayerError, TableError, UnknownPlayerError
from scopa_env.tables import Table, resolve_table

Observation = Mapping[str, np.ndarray]
__all__ = [
    "ENTRY_POINT_GROUP",
    "Player",
    "PlayerError",
    "UnknownPlayerError",
    "check_seats",
    "check_table",
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


def _owner(player: object) -> Any:
    """The player itself, or the owner of a bound ``act``."""
    return getattr(player, "__self__", player)


def _label(player: object, label: str | None) -> str:
    if label is not None:
        return label
    owner = _owner(player)
    return str(getattr(owner, "name", type(owner).__name__))


def check_seats(player: object, seats: int, label: str | None = None) -> None:
    """Refuse a player whose ``two_player_only`` says why at a table of ``seats`` seats: at
    each of its decisions, and through ``check_table`` before it is seated."""
    why = getattr(_owner(player), "two_player_only", None)
    if why is not None and seats != 2:
        raise PlayerError(
            f"{_label(player, label)} plays two-player Scopa only ({why}); this table has "
            f"{seats} seats"
        )


def check_table(player: object, table: Table | str, label: str | None = None) -> None:
    """Refuse a player that cannot play at ``table``, naming it by ``label`` (its command-line
    spec, say) or its ``name``, before a command writes or plays anything or an environment
    takes it as an opponent: by the attributes of the module doc. A network for two-player
    Scopa reads another vector than Scopone's, and a shape error deep in torch in the middle
    of a run would name neither.
    """
    from scopa_env.environments import make_aec  # the environments build players by name

    kind = resolve_table(table)
    owner, name = _owner(player), _label(player, label)
    check_seats(owner, kind.players, name)
    base = getattr(owner, "base", None)
    if base is not None:
        check_table(base, kind, f"{name}'s base player")
    trained = getattr(owner, "trained_table", None)
    if trained is not None and trained != kind.name:
        raise TableError(
            f"{name} was trained for the {trained!r} table, not {kind.name!r}: play it at the "
            "table it was trained for"
        )
    wanted = getattr(owner, "observation_shape", None)
    if wanted is not None:
        env = make_aec(kind.name)
        given = env.observation_space(env.possible_agents[0])["observation"].shape
        if tuple(wanted) != given:
            raise TableError(
                f"{name} reads observations of shape {tuple(wanted)}, but the {kind.name!r} "
                f"table gives {given}: play it at the table it was trained for"
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
