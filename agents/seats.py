"""Every seat of the table as one player sees it: the view that side-aware players read.

``InfoState`` pools what it decodes into pairs (my side, the others), which is all a one-move
player needs at two sides. A player that plays the deal forward (the search player) or weighs
three sides apart needs each seat: ``SeatView.from_observation`` reads it from any layout.

Seats are named by their offset from the observer in playing order (0 is me, 1 the next seat,
who replies to my move, and so on), and sides by the side of those offsets: offset ``k`` is on
relative side ``k % sides`` (0 is mine), the same relabelling of seats and sides for every
observer, since seat ``s`` is on side ``s % sides`` (``scopa_env.tables``). In a ``position``
the observer therefore sits in seat 0 and its side is side 0.

Per layout:

- two-player Scopa (``scopa_env.observation``) and Scopone (``scopone_observation``): what
  ``InfoState`` decodes; Scopone keeps captures and scope per partnership only, so the view
  gives a partnership's pile to its first seat from me (offset 0 for mine, 1 for theirs),
  which scores the same;
- the tables of more seats (``scopa_env.table_observation``): each seat's pile and scope.

The first player of the round follows from the hand sizes: the seats that played before me
this round hold one card fewer than my whole hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scopa_env import observation, scopone_observation
from scopa_env.cards import cards_of
from scopa_env.engine import Deal
from scopa_env.info_state import InfoState
from scopa_env.observation import planes_to_masks
from scopa_env.rules import Rules
from scopa_env.table_observation import LAYOUTS, TableLayout
from scopa_env.tables import SCOPA, TABLES, Table

_LAYOUTS = {layout.size: layout for layout in LAYOUTS.values()}
#: Both Scopone deals play one round with no stock; the larger hand bounds either position.
_SCOPONE = TABLES["scopone_scientifico"]


@dataclass(frozen=True, slots=True)
class SeatView:
    """What one player knows, seat by seat from its own (offset 0).

    ``hand_sizes[0]`` counts my whole hand (a pending card included); ``piles`` and ``scope``
    are per offset; ``last_capturer`` is an offset or ``None``.
    """

    info: InfoState
    table: Table
    hand_sizes: tuple[int, ...]
    piles: tuple[int, ...]
    scope: tuple[int, ...]
    last_capturer: int | None

    @classmethod
    def from_observation(cls, obs: np.ndarray) -> SeatView:
        """Read the view from an observation vector of any layout."""
        obs = np.asarray(obs, dtype=np.float32)
        return cls.from_info(InfoState.from_observation(obs), obs)

    @classmethod
    def from_info(cls, info: InfoState, obs: np.ndarray) -> SeatView:
        """The view of ``obs``, whose ``InfoState`` is already decoded as ``info``."""
        size = obs.shape[-1]
        if size in _LAYOUTS:
            return cls._from_table_layout(info, obs, _LAYOUTS[size])
        if size == observation.OBS_SIZE:
            return cls(
                info,
                SCOPA,
                (info.full_hand.bit_count(), info.opp_hand_size),
                info.piles,
                info.scope,
                info.last_capturer,
            )
        if size != scopone_observation.OBS_SIZE:
            raise ValueError(f"no seat view of observations of size {size}")
        return cls(
            info,
            _SCOPONE,
            (info.full_hand.bit_count(), *info.other_hands),
            (*info.piles, 0, 0),
            (*info.scope, 0, 0),
            info.last_capturer,
        )

    @classmethod
    def _from_table_layout(cls, info: InfoState, obs: np.ndarray, layout: TableLayout) -> SeatView:
        table = layout.table
        n = table.players
        masks = dict(zip(layout.planes, planes_to_masks(obs, layout.num_planes), strict=True))
        last = int(np.argmax(layout.plane(obs, "last_capturer")))
        scope = layout.plane(obs, "scope") * layout.scope_scale
        return cls(
            info,
            table,
            (info.full_hand.bit_count(), *info.other_hands),
            tuple(int(masks[f"captures_{k}"]) for k in range(n)),
            tuple(int(round(float(x))) for x in scope),
            None if last == n else last,
        )

    @property
    def sides(self) -> int:
        return self.table.sides

    def side_piles(self) -> tuple[int, ...]:
        """Each relative side's captures (mine first), as card masks."""
        pooled = [0] * self.sides
        for offset, pile in enumerate(self.piles):
            pooled[offset % self.sides] |= pile
        return tuple(pooled)

    @property
    def first_offset(self) -> int:
        """The offset of the seat that led this round (inferred from the hand sizes)."""
        mine = self.hand_sizes[0]
        first = len(self.hand_sizes)
        while first > 1 and self.hand_sizes[first - 1] == mine - 1:
            first -= 1
        return first % len(self.hand_sizes)

    def position(self, rules: Rules) -> Deal:
        """A deal consistent with the view, the observer in seat 0 and to move.

        The hidden cards (other hands, then the stock) are placed in card order: redeal them
        with ``Deal.with_hidden_cards(0, ...)`` to sample a determinization.
        """
        info = self.info
        unseen = cards_of(info.unseen)
        others = sum(self.hand_sizes[1:])
        if len(unseen) != others + info.stock_size:
            raise ValueError(
                f"observation is inconsistent: {len(unseen)} unseen cards but the other hands "
                f"hold {others} and the stock {info.stock_size}"
            )
        hands, start = [cards_of(info.full_hand)], 0
        for size in self.hand_sizes[1:]:
            hands.append(unseen[start : start + size])
            start += size
        return Deal.from_position(
            hands=hands,
            table=cards_of(info.table),
            stock=unseen[start:],
            captures=[cards_of(p) for p in self.piles],
            current_player=0,
            first_player=self.first_offset,
            last_capturer=self.last_capturer,
            scope=self.scope,
            rules=rules,
            kind=self.table,
        )
