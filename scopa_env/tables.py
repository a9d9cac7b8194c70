"""The tables Scopa is played at: seats, sides and how the cards are dealt (RULES.md section 8).

A ``Table`` is the one description of a game's seating that every layer reads: the engine deals
and scores by it, the environments name their agents and sides from it, the harness seats its
players by it and the command line and training configs choose it by name. The rules options
(``scopa_env.rules.Rules``) are the other half of a game and travel beside it.

=======================  =====  =====  ==========  =====  ======  ======================
Table                    Seats  Sides  Hand        Table  Rounds  Sides are
=======================  =====  =====  ==========  =====  ======  ======================
``scopa``                2      2      3 a round   4      6       the two players
``scopa_3``              3      3      3 a round   4      4       the three players
``scopa_4``              4      2      3 a round   4      3       seats 0+2 against 1+3
``scopa_6``              6      2      3 a round   4      2       seats 0+2+4 against 1+3+5
``scopone``              4      2      9           4      1       seats 0+2 against 1+3
``scopone_scientifico``  4      2      10          0      1       seats 0+2 against 1+3
=======================  =====  =====  ==========  =====  ======  ======================

Seat ``s`` belongs to side ``s % sides``, so partners sit alternately and a table where each
plays for themselves has as many sides as seats. Agents are named ``player_0``, ``player_1``...
by seat in every environment. ``scopa_table(players)`` names the Scopa table of a number of
players (2, 3, 4 or 6), as ``scopa_v0.env(players=...)`` takes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from scopa_env.errors import TableError


def agent_name(seat: int) -> str:
    """The agent name of a seat in every environment (``player_0``, ``player_1``...)."""
    return f"player_{seat}"


@dataclass(frozen=True)
class Table:
    """One table: ``players`` seats in ``sides`` sides; ``hand_size`` cards each per round, then
    ``table_size`` cards face up once; ``rounds`` rounds in all (the rest is the stock)."""

    name: str
    players: int
    sides: int
    hand_size: int
    table_size: int
    rounds: int

    @property
    def round_cards(self) -> int:
        """Cards dealt to the hands in one round."""
        return self.players * self.hand_size

    @cached_property
    def agents(self) -> tuple[str, ...]:
        """The agent names of the seats, as every environment names them."""
        return tuple(agent_name(seat) for seat in range(self.players))

    @property
    def partnerships(self) -> bool:
        """Whether sides hold more than one seat."""
        return self.sides < self.players

    def side_of(self, seat: int) -> int:
        """The side a seat plays for."""
        return seat % self.sides

    def seats_of(self, side: int) -> tuple[int, ...]:
        """The seats of one side, in seat order."""
        return tuple(range(side, self.players, self.sides))

    def table_of(self, deck: Sequence[int]) -> Sequence[int]:
        """The cards of a deck order that go face up to the table."""
        return deck[self.round_cards : self.round_cards + self.table_size]


TABLES: dict[str, Table] = {}


def register_table(table: Table) -> Table:
    """Add a table to ``TABLES`` under its name (a name is registered once)."""
    dealt = table.round_cards * table.rounds + table.table_size
    if dealt != 40 or table.players % table.sides or not 2 <= table.sides <= table.players:
        raise ValueError(
            f"table {table.name!r} must deal the 40 cards ({dealt} here) to seats that divide "
            f"evenly into at least two sides ({table.players} seats, {table.sides} sides)"
        )
    if table.name in TABLES and TABLES[table.name] != table:
        raise ValueError(f"a different table is already registered as {table.name!r}")
    TABLES[table.name] = table
    return table


SCOPA = register_table(Table("scopa", 2, 2, hand_size=3, table_size=4, rounds=6))
register_table(Table("scopa_3", 3, 3, hand_size=3, table_size=4, rounds=4))
register_table(Table("scopa_4", 4, 2, hand_size=3, table_size=4, rounds=3))
register_table(Table("scopa_6", 6, 2, hand_size=3, table_size=4, rounds=2))
register_table(Table("scopone", 4, 2, hand_size=9, table_size=4, rounds=1))
register_table(Table("scopone_scientifico", 4, 2, hand_size=10, table_size=0, rounds=1))


#: The Scopa table of each number of players (Scopone is the other four-player game).
SCOPA_TABLES: dict[int, str] = {2: "scopa", 3: "scopa_3", 4: "scopa_4", 6: "scopa_6"}


def scopa_table(players: int) -> Table:
    """The Scopa table for ``players`` players (``SCOPA_TABLES``)."""
    if isinstance(players, bool) or not isinstance(players, int) or players not in SCOPA_TABLES:
        raise TableError(
            f"Scopa is played by {', '.join(map(str, SCOPA_TABLES))} players, got {players!r}"
        )
    return TABLES[SCOPA_TABLES[players]]


def resolve_table(table: Table | str | None) -> Table:
    """Accept a registered ``Table``, a table name (``TABLES``) or ``None`` (two-player Scopa)."""
    if table is None:
        return SCOPA
    if isinstance(table, Table) and TABLES.get(table.name) == table:
        return table
    if isinstance(table, str) and table in TABLES:
        return TABLES[table]
    raise TableError(f"unknown table {table!r}; choose one of {sorted(TABLES)}")
