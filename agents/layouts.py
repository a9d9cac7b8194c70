"""The observation layout a player reads, told by the vector's width.

Every table's observation starts with 40-wide card planes and names each feature
(``scopa_env.observation``, ``scopone_observation``, ``table_observation``); the widths differ
between layouts, so a player given only a vector knows which layout it reads (Scopone's two
tables share one). Players that read the vector by name (``GreedyAgent.act_batch``,
``agents.card_policy.CardNet``) look the layout up here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from scopa_env.tables import TABLES, Table, resolve_table


@dataclass(frozen=True)
class ObservationLayout:
    """One layout: the tables that use it, its card planes and feature slices, and the capture
    planes of the observer's side and of the other sides (``InfoState.piles``)."""

    tables: tuple[Table, ...]
    planes: tuple[str, ...]
    slices: dict[str, slice]
    own_piles: tuple[str, ...]
    other_piles: tuple[str, ...]
    #: The stock's scale (``None``: the layout has no stock) and the next seat's hand's.
    stock_scale: float | None
    hand_scale: float

    @property
    def players(self) -> int:
        return self.tables[0].players

    @property
    def width(self) -> int:
        return max(s.stop for s in self.slices.values())

    @property
    def next_hand(self) -> int:
        """Index of the next seat's hand size (the first of ``hand_sizes``)."""
        return self.slices["hand_sizes" if "hand_sizes" in self.slices else "opp_hand_size"].start

    def index(self, plane: str) -> int:
        return self.planes.index(plane)


@cache
def layouts() -> dict[int, ObservationLayout]:
    """Every layout by width."""
    from scopa_env import observation, scopone_observation
    from scopa_env.table_observation import LAYOUTS

    found = [
        ObservationLayout(
            (TABLES["scopa"],),
            observation.PLANES,
            observation.OBS_SLICES,
            ("my_captures",),
            ("opp_captures",),
            observation.STOCK_SCALE,
            observation.HAND_SCALE,
        ),
        ObservationLayout(
            (TABLES["scopone"], TABLES["scopone_scientifico"]),
            scopone_observation.PLANES,
            scopone_observation.OBS_SLICES,
            ("our_captures",),
            ("their_captures",),
            None,
            scopone_observation.HAND_SCALE,
        ),
    ]
    for layout in LAYOUTS.values():
        t = layout.table
        mine = [k % t.sides == 0 for k in range(t.players)]  # offset k is seat me + k
        found.append(
            ObservationLayout(
                (t,),
                layout.planes,
                layout.slices,
                tuple(f"captures_{k}" for k in range(t.players) if mine[k]),
                tuple(f"captures_{k}" for k in range(t.players) if not mine[k]),
                layout.stock_scale,
                float(t.hand_size),
            )
        )
    return {layout.width: layout for layout in found}


def layout_of(width: int) -> ObservationLayout:
    """The layout of observations ``width`` floats wide; ``ValueError`` naming the widths."""
    found = layouts().get(int(width))
    if found is None:
        known = ", ".join(
            f"{w} ({'/'.join(t.name for t in lay.tables)})" for w, lay in sorted(layouts().items())
        )
        raise ValueError(f"no table's observation is {width} floats wide; the widths: {known}")
    return found


def layout_for_table(table: Table | str | None) -> ObservationLayout:
    """The layout a table's observations have."""
    t = resolve_table(table)
    return next(lay for lay in layouts().values() if t in lay.tables)
