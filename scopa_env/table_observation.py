"""The observation vector of ``scopa_v0`` at the tables of three or more seats (``scopa_3``,
``scopa_4``, ``scopa_6``), seen from one seat.

Seats are named by their offset from the observer in playing order: offset 0 is me, offset 1
the next seat (who plays right after me), offset 2 the one after, and so on round the table.
Every per-seat feature lists the seats in that order, so the same position seen from another
seat is the same vector with the seats rotated. Sides are listed the same way: my side first,
then the sides of the following seats in order of first appearance (with two sides: ours,
theirs). What each seat has captured and played is public; hands are not: the other hands
(a partner's too) and the stock appear only as the ``unseen`` plane and the hand sizes.

Each table has its own ``TableLayout`` (``LAYOUTS[name]``, or ``layout_for(table)``): its
slices name every feature (``layout.slices``; ``OBS_SLICES[name]`` is the same dict). For n
seats and s sides, the 40-wide card planes come first: ``obs[:layout.num_planes * 40]``
reshaped to (planes, 40) is a (plane, card) image, and ``layout.per_seat(obs, "captures")`` is
(seats, 40).

=========================  ========  ===========================================================
Name                       Size      Meaning (1.0 = yes unless stated)
=========================  ========  ===========================================================
``hand``                   40        the card is in my hand (not the pending card)
``table``                  40        the card is on the table
``captures_k``             40 each   the card is in the capture pile of the seat at offset k
                                     (k = 0 .. n-1; ``captures_0`` is mine)
``played_k``               40 each   the seat at offset k played the card this deal
``unseen``                 40        the card is in another seat's hand or in the stock
``pending``                40        the card I have played and am capturing with
``picked``                 40        the table cards I have picked so far for that capture
``phase``                  2         one-hot: [choose a card to play, pick table cards]
``stock_size``             1         cards left in the stock / the stock after the first round
``hand_sizes``             n-1       cards in hand / the hand size, seats at offsets 1 .. n-1
``scope``                  n         scope this deal / cards a seat plays in a deal, by offset
``partners``               n         the seat at that offset plays on my side (offset 0: 1)
``match_score``            s         match points before this deal / target, capped at 4, by
                                     side: mine first, then in seat order after me
``target``                 1         the match target / 100
``dealer``                 n         one-hot, who deals, by offset
``last_capturer``          n+1       one-hot: the seat at offset 0 .. n-1 that captured last,
                                     or nobody yet
=========================  ========  ===========================================================

The sizes: ``scopa_3`` 462, ``scopa_4`` 546, ``scopa_6`` 716 (``LAYOUTS[name].size``). All
values lie in [0, 1] except ``match_score`` (in [0, 4]). The vector is float32. Two-player Scopa
keeps ``scopa_env.observation`` and Scopone ``scopa_env.scopone_observation``; each layout
registers its decoder with ``scopa_env.info_state`` under its size, and the sizes differ.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from scopa_env.cards import NUM_CARDS
from scopa_env.info_state import InfoState, register_decoder
from scopa_env.observation import (
    MATCH_SCORE_CAP,
    PHASE_VALUES,
    TARGET_SCALE,
    DealView,
    ObservationWriter,
    layout_slices,
    live_cards,
    pack_floats,
    planes_to_masks,
    seat_blocks,
    split_pending,
    write_observation,
)
from scopa_env.tables import TABLES, Table

#: The tables that use this layout.
TABLE_NAMES = ("scopa_3", "scopa_4", "scopa_6")
#: The most ``scope`` tuples each seat's encoder keeps packed.
SCOPE_MEMO = 4096


class TableLayout:
    """The observation layout of one table: feature slices, bounds, encoder and decoder."""

    def __init__(self, table: Table) -> None:
        n = table.players
        self.table = table
        self.planes: tuple[str, ...] = (
            "hand",
            "table",
            *(f"captures_{k}" for k in range(n)),
            *(f"played_{k}" for k in range(n)),
            "unseen",
            "pending",
            "picked",
        )
        scalars = (
            ("phase", 2),
            ("stock_size", 1),
            ("hand_sizes", n - 1),
            ("scope", n),
            ("partners", n),
            ("match_score", table.sides),
            ("target", 1),
            ("dealer", n),
            ("last_capturer", n + 1),
        )
        #: Name -> slice of the observation vector.
        self.slices: dict[str, slice] = layout_slices(self.planes, scalars)
        # What ``encode`` reads per observer seat, worked out once.
        seats = range(n)
        self._seats = tuple(tuple((me + k) % n for k in seats) for me in seats)
        partners = tuple(
            tuple(float(table.side_of(s) == table.side_of(me)) for s in self._seats[me])
            for me in seats
        )

        def one_hot(k: int, size: int) -> bytes:
            return pack_floats(float(k == i) for i in range(size))

        self._no_scores = (0,) * table.sides
        self._players = n
        self._num_planes = len(self.planes)
        # The scalars as the encoder gives them: the groups of features that take few values
        # (``phase``, ``scope``, ``deal_block``'s, ``last_capturer``) come packed ahead as
        # float32 bytes, since each value handed to ``struct`` costs about as much as a whole
        # group (``scope`` memoised by the deal's tuple, which changes only on a scopa).
        block = n + table.sides + 1 + n
        self._scalars = struct.Struct(f"<{4 * 2}sf{n - 1}f{4 * n}s{4 * block}s{4 * (n + 1)}s")
        # ``deal_block``'s pieces that depend on the seat alone, packed ahead.
        self._packed_partners = tuple(pack_floats(seat) for seat in partners)
        self._packed_dealer = tuple(one_hot(k, n) for k in range(n))
        self._pack_scores = struct.Struct(f"<{table.sides + 1}f").pack
        self._phase = tuple(pack_floats(phase) for phase in PHASE_VALUES)
        #: ``last_capturer`` packed, by offset (then nobody yet).
        self._last = tuple(one_hot(k, n + 1) for k in range(n + 1))
        self._stock_scale = float(NUM_CARDS - table.round_cards - table.table_size)
        self._scope_scale = float(table.hand_size * table.rounds)
        # The ``hand_sizes`` and ``stock_size`` features of each count up to a whole deck,
        # looked up (a division costs twice as much).
        counts = range(NUM_CARDS + 1)
        self._hand_values = [k / float(table.hand_size) for k in counts]
        self._stock_values = [k / self._stock_scale for k in counts]
        self._seat_encoders = tuple(self._seat_encoder(me) for me in seats)
        #: Every seat's ``deal_block``, for the environment's new deals.
        self.deal_blocks = seat_blocks(self.deal_block, n)

    def __repr__(self) -> str:
        return f"TableLayout({self.table.name!r}, size={self.size})"

    def __reduce__(self) -> tuple[Any, ...]:
        return TableLayout, (self.table,)  # the seat encoders are made anew, not pickled

    @property
    def num_planes(self) -> int:
        return len(self.planes)

    @property
    def size(self) -> int:
        return self.slices["last_capturer"].stop

    @property
    def stock_scale(self) -> float:
        """The stock after the first round: its largest size."""
        return self._stock_scale

    @property
    def scope_scale(self) -> float:
        """The cards one seat plays in a deal: the most scope it can make."""
        return self._scope_scale

    @cached_property
    def high(self) -> np.ndarray:
        """Upper bound of each feature, for the observation space."""
        high = np.ones(self.size, dtype=np.float32)
        high[self.slices["match_score"]] = MATCH_SCORE_CAP
        return high

    @cached_property
    def side_order(self) -> tuple[tuple[int, ...], ...]:
        """Per observer seat: the sides in observation order (mine, then by seat after me)."""
        t = self.table
        orders = []
        for me in range(t.players):
            order: list[int] = []
            for k in range(t.players):
                side = t.side_of((me + k) % t.players)
                if side not in order:
                    order.append(side)
            orders.append(tuple(order))
        return tuple(orders)

    def plane(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The named feature of an observation of this layout (a view; batches too)."""
        return obs[..., self.slices[name]]

    def per_seat(self, obs: np.ndarray, name: str) -> np.ndarray:
        """``"captures"`` or ``"played"`` of every seat as ``(..., seats, 40)``, by offset."""
        n = self.table.players
        start = self.slices[f"{name}_0"].start
        return obs[..., start : start + n * NUM_CARDS].reshape(*obs.shape[:-1], n, NUM_CARDS)

    def deal_block(
        self, match_score: tuple[int, ...], target: int, dealer: int, player: int
    ) -> bytes:
        """The ``partners``, ``match_score``, ``target`` and ``dealer`` features of ``player``,
        together in the vector, packed as float32: they change only between deals, so the
        environment works them out once a deal."""
        scores, cap = match_score or self._no_scores, MATCH_SCORE_CAP
        # A plain loop, without min(): a comprehension or min() costs as much as the rest
        # (n seats, once a deal each).
        values = []
        for side in self.side_order[player]:
            ratio = scores[side] / target
            values.append(ratio if ratio < cap else cap)
        return (
            self._packed_partners[player]
            + self._pack_scores(*values, target / TARGET_SCALE)
            + self._packed_dealer[(dealer - player) % self._players]
        )

    def writer(self) -> ObservationWriter:
        """A writer of this layout's vectors, for the environment's hot path."""
        return ObservationWriter(self._num_planes, self._scalars)

    def view_features(
        self,
        view: DealView,
        player: int,
        pending_card: int | None,
        picked: int,
        block: tuple[float, ...],
    ) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The card planes (bit masks) and scalar values of seat ``player``'s observation,
        from a deal's ``view`` and the seat's ``deal_block``: what ``encode`` and the
        environment's hot path both run."""
        return self._seat_encoders[player](view, player, pending_card, picked, block)

    def seat_features(self, players: int) -> tuple[Callable[..., Any], ...]:
        """``view_features`` of each seat, for a table of ``players`` seats (this one's)."""
        if players != self._players:
            raise ValueError(f"{self.table.name} has {self._players} seats, not {players}")
        return self._seat_encoders

    def _seat_encoder(self, me: int) -> Callable[..., tuple[tuple[int, ...], tuple[float, ...]]]:
        """``view_features`` for observer seat ``me``, written out with the seats in offset order
        (one indexing per feature, where a loop over the seats costs several times more)."""
        n = self._players
        order = self._seats[me]
        piles = ", ".join(f"piles[{s}]" for s in order)
        played = ", ".join(f"played[{s}]" for s in order)
        sizes = ", ".join(f"HAND[hands[{s}].bit_count()]" for s in order[1:])
        memo: dict[tuple[int, ...], bytes] = {}
        scale = self._scope_scale

        def pack_scope(scope: tuple[int, ...]) -> bytes:
            """The ``scope`` feature packed, kept for a tuple (the deal's) while there is room."""
            packed = pack_floats(scope[s] / scale for s in order)
            if isinstance(scope, tuple) and len(memo) < SCOPE_MEMO:
                memo[scope] = packed
            return packed

        def scalars(stock: str) -> str:
            return f"""(
            phase,
            {stock},
            {sizes},
            scopes,
            block,
            LAST[{n} if last_capturer is None else (last_capturer - {me}) % {n}],
        )"""

        source = f"""
def encode_seat(view, _player, pending_card, picked, block):
    hands, table, piles, played, stock_size, scope, last_capturer, _dealer, live = view
    hand = hands[{me}]
    unseen = live ^ hand
    if pending_card is None:
        pending, phase = 0, PLAY
    else:
        hand, pending, _values = split_pending(hand, pending_card)
        phase = PICK
    try:
        scopes = SCOPES[scope]
    except (KeyError, TypeError):  # a new tuple, or a list
        scopes = pack_scope(scope)
    try:
        values = {scalars("STOCK[stock_size]")}
    except IndexError:  # more than a deck's count: no deal's, but divide as for any count
        values = {scalars("stock_size / STOCK_SCALE")}
    return (hand, table, {piles}, {played}, unseen, pending, picked), values
"""
        namespace: dict[str, Any] = {
            "HAND": self._hand_values,
            "SCOPES": memo,
            "pack_scope": pack_scope,
            "STOCK": self._stock_values,
            "STOCK_SCALE": self._stock_scale,
            "LAST": self._last,
            "split_pending": split_pending,
            "PLAY": self._phase[0],
            "PICK": self._phase[1],
        }
        exec(compile(source, f"<{self.table.name} seat {me} encoder>", "exec"), namespace)
        encoder: Callable[..., tuple[tuple[int, ...], tuple[float, ...]]]
        encoder = namespace["encode_seat"]
        return encoder

    def encode(
        self,
        hands: tuple[int, ...],
        table: int,
        piles: tuple[int, ...],
        played: tuple[int, ...],
        stock_size: int,
        scope: tuple[int, ...],
        last_capturer: int | None,
        dealer: int,
        player: int,
        *,
        pending_card: int | None = None,
        picked: int = 0,
        match_score: tuple[int, ...] = (),
        target: int = 11,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """The observation of seat ``player`` from a deal's masks (``Deal.masks``): the
        arguments of ``scopa_env.observation.encode``, per seat, ``match_score`` per side."""
        live = live_cards(table, piles)
        view = (hands, table, piles, played, stock_size, scope, last_capturer, dealer, live)
        block = self.deal_block(match_score, target, dealer, player)
        planes, values = self._seat_encoders[player](view, player, pending_card, picked, block)
        return write_observation(planes, self._num_planes, self._scalars, values, out)

    def decode(self, observation: np.ndarray) -> InfoState:
        """What the observer knows, as an ``InfoState``: pairs are (my side, every other side
        together), ``scope`` likewise, ``match_score`` (my side, the best other side),
        ``last_capturer`` 0 (my side) or 1 (another side), ``opp_hand_size`` the next seat's
        hand and ``other_hands`` every other seat's hand size from the next seat on."""
        obs = np.asarray(observation, dtype=np.float32)
        planes = planes_to_masks(obs, self.num_planes)
        masks = {name: int(m) for name, m in zip(self.planes, planes, strict=True)}
        n = self.table.players
        t = self.table

        def scalars(name: str, scale: float) -> tuple[int, ...]:
            return tuple(round(float(x) * scale) for x in obs[self.slices[name]])

        partners = [k for k, x in enumerate(obs[self.slices["partners"]]) if x > 0.5]
        target = scalars("target", TARGET_SCALE)[0]
        scope = scalars("scope", self.scope_scale)
        match = scalars("match_score", target)

        def pooled(name: str) -> tuple[int, int]:
            ours = theirs = 0
            for k in range(n):
                if k in partners:
                    ours |= masks[f"{name}_{k}"]
                else:
                    theirs |= masks[f"{name}_{k}"]
            return ours, theirs

        last = int(np.argmax(obs[self.slices["last_capturer"]]))
        sizes = scalars("hand_sizes", t.hand_size)
        pending = masks["pending"]
        return InfoState(
            hand=masks["hand"],
            table=masks["table"],
            piles=pooled("captures"),
            played=pooled("played"),
            unseen=masks["unseen"],
            pending=pending.bit_length() - 1 if pending else None,
            picked=masks["picked"],
            stock_size=scalars("stock_size", self.stock_scale)[0],
            opp_hand_size=sizes[0],
            scope=(
                sum(scope[k] for k in partners),
                sum(scope[k] for k in range(n) if k not in partners),
            ),
            match_score=(match[0], max(match[1:])),
            target=target,
            is_dealer=bool(obs[self.slices["dealer"]][0] > 0.5),
            last_capturer=None if last == n else int(last not in partners),
            other_hands=sizes,
        )


#: The layout of each table that uses this module, by table name.
LAYOUTS: dict[str, TableLayout] = {name: TableLayout(TABLES[name]) for name in TABLE_NAMES}
#: Name -> slice of the observation vector, per table name.
OBS_SLICES: dict[str, dict[str, slice]] = {name: lay.slices for name, lay in LAYOUTS.items()}


def layout_for(table: Table | str) -> TableLayout:
    """The layout of a table of three or more seats that plays Scopa (``TABLE_NAMES``)."""
    name = table if isinstance(table, str) else table.name
    if name not in LAYOUTS:
        raise ValueError(f"no table observation layout for {name!r}; tables: {TABLE_NAMES}")
    return LAYOUTS[name]


def _register(layouts: Any) -> None:
    from scopa_env import observation, scopone_observation

    taken = {observation.OBS_SIZE: "scopa", scopone_observation.OBS_SIZE: "scopone"}
    for layout in layouts:
        if layout.size in taken:  # the decoders tell layouts apart by size
            raise RuntimeError(f"{layout.table.name} and {taken[layout.size]} share a size")
        taken[layout.size] = layout.table.name
        register_decoder(layout.size, layout.decode)


_register(LAYOUTS.values())
