"""Batched Scopa: ``N`` independent games advanced together by a fixed number of array operations.

``BatchedScopa`` is the AEC environment of a table (``scopa_v0.raw_env(table=...)``, or
``scopone_v0.raw_env(deal=...)`` for the Scopone tables; ``environments.make_aec``) for a whole
batch at once: the same action space (``0..39`` play a card, ``40..79`` pick table card
``a - 40``), the same capture-choice phase, the same observation vector (the table's own layout:
``observation``, ``table_observation`` or ``scopone_observation``) and mask, rewards per side,
episodes and infos, with no Python loop over games. Every table of ``scopa_env.tables`` plays
(``table="scopa_3"``...; two-player Scopa by default). It is what vectorized training
environments (``scopa_env.vector_env``) and ``scopa bench`` run on.

State (``BatchState``, about 130 bytes a game for two players; card sets are ``uint64`` bit
masks by card id; ``P`` seats, ``S`` sides)

=============  ===========  ==================================================================
Field          Shape/dtype  Meaning
=============  ===========  ==================================================================
``hand``       (P, N) u64   each seat's hand; a pending card stays here until resolved
``pile``       (P, N) u64   each seat's capture pile
``played``     (P, N) u64   the cards each seat has played this deal (resolved plays)
``scope``      (P, N) u8    each seat's scope this deal
``score``      (S, N) i16   each side's match points before this deal
``table``      (N,) u64     the table
``table_vm``   (N,) u64     the table in value-major bit order (see ``batched_tables``)
``picked``     (N,) u64     table cards picked so far in a capture choice (and value-major)
``deck``       (N, 40) u8   this deal's card order (``RULES.md`` deal convention)
``pos``        (N,) u8      next stock index into ``deck`` (after the first round and table)
``cur``        (N,) i8      the seat to act
``first``      (N,) i8      the first player (the seat after the dealer) of this deal
``last``       (N,) i8      the last capturer, ``P`` = nobody yet
``pending``    (N,) i8      the card whose capture is being chosen, 40 = none
=============  ===========  ==================================================================

Legal captures come from precomputed *patterns* (``batched_tables.pattern_rows``): for each
played value, the multisets of values that make a sum capture. A pattern is feasible when the
table holds enough cards of each value (one packed comparison for all ten values), it counts as
one capture when the table holds exactly the cards it needs, and the picks of a capture choice
narrow the patterns the same way. So the capture choice of ``scopa_v0`` (resolve at once when
at most one set is legal; otherwise pick table cards until exactly one legal set contains the
picks) is reproduced exactly, for every rule option, from array operations.

Episodes end as in the AEC environment and finished games reset at once (Gymnasium's
``SAME_STEP`` autoreset): the returned observation is the new episode's; the final observation
of every seat is in ``infos["final_obs"]`` (``(N, P, size)``) where ``infos["_final_obs"]`` is
set. Rewards are per seat (``(N, P)``), each seat receiving its side's: the side's value (deal
points, or 1 to the winner) minus the mean of the other sides' (``capture_env.side_rewards``).
Deal results are in ``infos["deal_score"]`` (``(N, S, 8)``: the ``DEAL_SCORE_FIELDS`` of each
side), ``infos["match_score"]`` (``(N, S)``, after the deal) and ``infos["winner"]`` (the
winning side, -1 for a tied single deal), each with its ``_key`` mask.

Output arrays are buffers that the next ``step`` or ``reset`` overwrites: copy what you keep.

    engine = BatchedScopa(4096, seed=0)           # two-player Scopa, default rules
    obs, mask, _ = engine.reset()
    while training:
        step = engine.step(policy(obs, mask))     # or engine.sample_actions()
        obs, mask = step.obs, step.mask           # step.player: who acts next in each game

    four = BatchedScopa(4096, "scopa_d_assi", table="scopa_4", episode="deal", reward="points")
    four.obs_size                                 # 546: table_observation.LAYOUTS["scopa_4"]

``step_games(games, actions)`` advances only some games (e.g. the opponent's turns in a
learner-centric environment). Observations are built by packing the card planes and the mask
end to end into 64-bit words and unpacking them once, so each game's plane values are one
contiguous cast to float32. A seat's own arrays (its hand, pile, ...) are read with seat masks
(all ones in the games where that seat acts) or, at the tables of more seats, by gathering
rows ``(seat + offset) % P``, so no step loops over games.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal, NamedTuple

import numpy as np

from scopa_env import scopone_observation
from scopa_env.actions import NUM_ACTIONS
from scopa_env.batched_tables import (
    BEST_PRIMIERA_LUT,
    BIT,
    CARD_NIBBLE,
    CARD_TO_VM,
    NAPOLA_LUT,
    NIB_HIGH,
    NO_CARD,
    NOBODY,
    SUMMABLE,
    U64,
    VALUE,
    VM_BIT,
    VM_TO_CARD,
    PatternRow,
    convert,
    counts_of,
    pattern_rows,
    spread,
)
from scopa_env.cards import ALL_CARDS_MASK, COINS_MASK, KINGS_MASK, NUM_CARDS
from scopa_env.engine import IllegalMoveError
from scopa_env.errors import EnvironmentArgumentError, TableError
from scopa_env.observation import (
    HAND_SCALE,
    MATCH_SCORE_CAP,
    NUM_PLANES,
    OBS_HIGH,
    OBS_SIZE,
    OBS_SLICES,
    SCOPE_SCALE,
    STOCK_SCALE,
    TARGET_SCALE,
)
from scopa_env.privileged import hidden_planes
from scopa_env.rules import Rules, resolve_rules
from scopa_env.scopone_v0 import DEALS as SCOPONE_DEALS
from scopa_env.seeds import check_seed
from scopa_env.table_observation import TABLE_NAMES, layout_for
from scopa_env.tables import SCOPA, Table, resolve_table

__all__ = [
    "DEAL_SCORE_FIELDS",
    "NUM_ACTIONS",
    "BatchState",
    "BatchStep",
    "BatchedScopa",
    "DealSource",
    "random_legal_actions",
]

DEAL_SCORE_FIELDS = (
    "cards",
    "coins",
    "settebello",
    "primiera",
    "scope",
    "re_bello",
    "napola",
    "total",
)
#: ``(games, new_episode) -> (decks (k, 40), first_players (k,))``; first players are used only
#: where ``new_episode`` is set (within a match the deal passes to the next seat).
DealSource = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

_ALL = U64(ALL_CARDS_MASK)
_COINS = U64(COINS_MASK)
_ZERO = U64(0)
_PLAY_SLOTS = NUM_PLANES + 2  # the planes, then the play and pick halves of the mask
# The scalar features in the order ``scalars`` rows are written by ``_encode_obs``.
_SCALAR_ROWS = {
    "phase": 0, "stock_size": 2, "opp_hand_size": 3, "scope": 4, "match_score": 6, "target": 8,
    "dealer": 9, "last_capturer": 10,
}  # fmt: skip
assert all(
    OBS_SLICES[name].start == NUM_PLANES * NUM_CARDS + row for name, row in _SCALAR_ROWS.items()
)
# Scalar features by lookup, computed exactly as ``observation.encode`` does (float64, rounded).
_STOCK_LUT = np.array([(NUM_CARDS - p) / STOCK_SCALE for p in range(NUM_CARDS + 1)], np.float32)
_HAND_LUT = np.array([n / HAND_SCALE for n in range(65)], np.float32)
_SCOPE_LUT = np.array([n / SCOPE_SCALE for n in range(256)], np.float32)
_NUM_SCALARS = OBS_SIZE - NUM_PLANES * NUM_CARDS
#: Games per chunk of the observation's bit unpacking (the unpacked bits stay in cache).
_CHUNK = 1024


@dataclass
class BatchState:
    """The state of ``N`` games as arrays (see the module docstring for the fields)."""

    hand: np.ndarray
    pile: np.ndarray
    played: np.ndarray
    scope: np.ndarray
    score: np.ndarray
    table: np.ndarray
    table_vm: np.ndarray
    picked: np.ndarray
    picked_vm: np.ndarray
    deck: np.ndarray
    pos: np.ndarray
    cur: np.ndarray
    first: np.ndarray
    last: np.ndarray
    pending: np.ndarray

    @classmethod
    def zeros(cls, n: int, players: int = 2, sides: int = 2) -> BatchState:
        return cls(
            hand=np.zeros((players, n), U64),
            pile=np.zeros((players, n), U64),
            played=np.zeros((players, n), U64),
            scope=np.zeros((players, n), np.uint8),
            score=np.zeros((sides, n), np.int16),
            table=np.zeros(n, U64),
            table_vm=np.zeros(n, U64),
            picked=np.zeros(n, U64),
            picked_vm=np.zeros(n, U64),
            deck=np.zeros((n, NUM_CARDS), np.uint8),
            pos=np.full(n, NUM_CARDS, np.uint8),
            cur=np.zeros(n, np.int8),
            first=np.zeros(n, np.int8),
            last=np.full(n, players, np.int8),
            pending=np.full(n, NO_CARD, np.int8),
        )

    def __len__(self) -> int:
        return self.table.shape[0]

    @property
    def nbytes_per_game(self) -> int:
        return sum(getattr(self, f.name).nbytes for f in fields(self)) // max(1, len(self))

    def take(self, games: np.ndarray) -> BatchState:
        """The sub-batch of ``games`` (a copy)."""
        values = {}
        for f in fields(self):
            array = getattr(self, f.name)
            sub = array[:, games] if array.ndim == 2 and f.name != "deck" else array[games]
            values[f.name] = np.ascontiguousarray(sub)  # the step writes through flat views
        return BatchState(**values)

    def put(self, games: np.ndarray, other: BatchState) -> None:
        """Write the sub-batch ``other`` back at ``games``."""
        for f in fields(self):
            array = getattr(self, f.name)
            if array.ndim == 2 and f.name != "deck":
                array[:, games] = getattr(other, f.name)
            else:
                array[games] = getattr(other, f.name)


class BatchStep(NamedTuple):
    """What ``step`` returns; every array has the batch as its first axis."""

    obs: np.ndarray  # (N, size) float32: the seat to act next (373 for two players)
    mask: np.ndarray  # (N, 80) int8
    rewards: np.ndarray  # (N, P) float32: for each seat (its side's reward)
    terminated: np.ndarray  # (N,) bool
    truncated: np.ndarray  # (N,) bool
    player: np.ndarray  # (N,) int8: the seat to act next
    infos: dict[str, Any]


class _Out:
    """Output buffers for a batch or a sub-batch."""

    def __init__(self, n: int, table: Table, size: int) -> None:
        self.obs = np.zeros((n, size), np.float32)
        self.mask = np.zeros((n, NUM_ACTIONS), np.int8)
        self.legal = np.zeros(n, U64)
        self.rewards = np.zeros((n, table.players), np.float32)
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.deal_end = np.zeros(n, bool)
        self.deal_score = np.zeros((n, table.sides, len(DEAL_SCORE_FIELDS)), np.int16)
        self.match_score = np.zeros((n, table.sides), np.int16)
        self.winner = np.full(n, -1, np.int8)
        self._final_obs: np.ndarray | None = None
        self._players = table.players
        self.any_deal_end = False

    @property
    def final_obs(self) -> np.ndarray:
        if self._final_obs is None:
            shape = (self.obs.shape[0], self._players, self.obs.shape[1])
            self._final_obs = np.zeros(shape, np.float32)
        return self._final_obs

    def clear(self) -> None:
        if self.any_deal_end:
            self.rewards.fill(0.0)
            self.terminated.fill(False)
            self.deal_end.fill(False)
            self.any_deal_end = False

    def infos(self) -> dict[str, Any]:
        if not self.any_deal_end:
            return {}
        infos: dict[str, Any] = {
            "deal_score": self.deal_score,
            "_deal_score": self.deal_end,
            "match_score": self.match_score,
            "_match_score": self.deal_end,
        }
        if self.terminated.any():
            infos["winner"] = self.winner
            infos["_winner"] = self.terminated
            infos["final_obs"] = self.final_obs
            infos["_final_obs"] = self.terminated
        return infos


class BatchedScopa:
    """``N`` games at one table (two-player Scopa by default) in the AEC action space, stepped
    together.

    ``reset`` starts every game; ``step(actions)`` takes one action per game, for the seat
    to act in it, and returns a ``BatchStep``. ``table`` is a ``scopa_env.tables`` name or
    ``Table``; ``episode`` and ``reward`` are the AEC environment's. Random deals and first
    players come from ``seed``'s generator, or from ``deal_source`` (e.g. to replay the decks
    of other environments exactly). ``check_actions`` verifies every action against the mask
    (``IllegalMoveError``); ``tune_allocator`` calls ``tune_malloc`` for batches of 1024 games
    or more.
    """

    def __init__(
        self,
        num_games: int,
        rules: Rules | str | dict[str, Any] | None = None,
        *,
        table: Table | str | None = None,
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        seed: int | None = None,
        deal_source: DealSource | None = None,
        check_actions: bool = True,
        tune_allocator: bool = True,
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < 1:
            raise EnvironmentArgumentError(
                f"num_games must be a positive integer, got {num_games!r}"
            )
        if episode not in ("match", "deal"):
            raise EnvironmentArgumentError(f"episode must be 'match' or 'deal', got {episode!r}")
        if reward not in ("match", "points"):
            raise EnvironmentArgumentError(f"reward must be 'match' or 'points', got {reward!r}")
        check_seed(seed)
        self.table = resolve_table(table)
        self.rules = resolve_rules(rules)
        if tune_allocator and num_games >= 1024:
            tune_malloc()
        self.num_games = num_games
        t = self.table
        self._players, self._sides = t.players, t.sides
        self._dealt = t.round_cards + t.table_size  # the stock index after the first deal
        #: The layout of the observation: "scopa", "seats" (``table_observation``) or "scopone".
        self._kind = "scopa" if t == SCOPA else "seats" if t.name in TABLE_NAMES else "scopone"
        if self._kind == "scopone" and t.name not in SCOPONE_DEALS:
            raise TableError(f"no observation layout for the table {t.name!r}")
        self.episode = episode
        self.reward = reward
        self.rng = np.random.default_rng(seed)
        self.deal_source = deal_source
        self.check_actions = check_actions
        self.state = BatchState.zeros(num_games, t.players, t.sides)
        self._next_seat = np.array([(p + 1) % t.players for p in range(t.players)], np.int8)
        #: ``[seats][offset][seat]``: ``(seat + offset) % seats``, for seats and for sides.
        self._rotation = {
            m: np.array([[(p + o) % m for p in range(t.players)] for o in range(m)], np.intp)
            for m in (t.players, t.sides)
        }
        self._patterns: tuple[PatternRow, ...] = pattern_rows(self.rules.capture_sum)
        self._padded = _padded_patterns(self._patterns)
        self._columns = [
            tuple(getattr(row, name)[:, None] for name in _PATTERN_FIELDS)
            if row.need.shape[0]
            else None
            for row in self._patterns
        ]
        target = self.rules.target
        self._match_lut = np.array(
            [min(s / target, MATCH_SCORE_CAP) for s in range(int(MATCH_SCORE_CAP) * target + 1)],
            np.float32,
        )
        self._target = target / TARGET_SCALE
        self._init_layout()
        self._out = _Out(num_games, t, self.obs_size)
        self._games = np.arange(num_games)
        self._started = False

    # Public API ------------------------------------------------------------------------------

    def _init_layout(self) -> None:
        """The observation size, bounds and scalar lookups of the table's layout."""
        t = self.table
        if self._kind == "scopa":
            self.obs_size, self.obs_high = OBS_SIZE, OBS_HIGH
            self._num_planes = NUM_PLANES
            return
        if self._kind == "seats":
            layout = layout_for(t)
            self.obs_size, self.obs_high = layout.size, layout.high
            self._num_planes = layout.num_planes
            stock_scale, hand_scale, scope_scale = (
                layout.stock_scale, float(t.hand_size), layout.scope_scale
            )  # fmt: skip
        else:
            self.obs_size, self.obs_high = (
                scopone_observation.OBS_SIZE,
                scopone_observation.OBS_HIGH,
            )
            self._num_planes = scopone_observation.NUM_PLANES
            stock_scale = 1.0
            hand_scale = scopone_observation.HAND_SCALE
            scope_scale = scopone_observation.SCOPE_SCALE
        self._seat_stock_lut = np.array(
            [(NUM_CARDS - p) / stock_scale for p in range(NUM_CARDS + 1)], np.float32
        )
        self._seat_hand_lut = np.array([n / hand_scale for n in range(65)], np.float32)
        self._seat_scope_lut = np.array([n / scope_scale for n in range(256)], np.float32)

    @property
    def obs(self) -> np.ndarray:
        """The observation of the seat to act in each game, ``(N, obs_size)`` float32."""
        return self._out.obs

    @property
    def mask(self) -> np.ndarray:
        """The legal actions of the player to act in each game, ``(N, 80)`` int8."""
        return self._out.mask

    @property
    def player(self) -> np.ndarray:
        """The player to act in each game."""
        return self.state.cur

    def hidden(self) -> np.ndarray:
        """``scopa_env.privileged``'s block of the cards the seat to act cannot see, in each
        game: for an oracle critic in training, never for a player."""
        state = self.state
        cards = np.where(np.arange(NUM_CARDS) >= state.pos[:, None], state.deck, NUM_CARDS)
        stock = np.bitwise_or.reduce(BIT[cards], axis=1)
        return hidden_planes(state.hand, stock, state.cur)

    def reset(
        self,
        seed: int | None = None,
        decks: np.ndarray | None = None,
        first_players: np.ndarray | int | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """Start a new episode in every game; returns ``(obs, mask, infos)``.

        ``decks`` (``(N, 40)`` card orders) deal each game's first deal by the deal convention,
        with no redeal, as the AEC ``options["deck"]``; ``first_players`` (default 0
        with decks, else drawn) says who leads it.
        """
        check_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = self.num_games
        games = self._games
        if decks is None:
            decks, firsts = self._draw(games, np.ones(n, bool))
        else:
            decks = self._check_decks(decks)
            firsts = np.zeros(n, np.int8)
        if first_players is not None:
            firsts = np.broadcast_to(np.asarray(first_players), (n,))
            if not np.isin(firsts, np.arange(self._players)).all():
                raise EnvironmentArgumentError(
                    f"first_players must be seats 0..{self._players - 1}"
                )
        self.state.score.fill(0)
        self._new_deals(self.state, games, decks, firsts)
        out = self._out
        out.any_deal_end = True
        out.clear()
        self._encode(self.state, self.state.cur, np.zeros(n, U64), out)
        self._started = True
        return out.obs, out.mask, {}

    def step(self, actions: np.ndarray) -> BatchStep:
        """Apply one action per game for its player to act; finished episodes restart."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = self._check_actions(actions, self._out.mask, self._games)
        out = self._out
        out.clear()
        self._advance(self.state, actions, out, self._games)
        return BatchStep(
            out.obs, out.mask, out.rewards, out.terminated, out.truncated, self.state.cur,
            out.infos(),
        )  # fmt: skip

    def step_games(self, games: np.ndarray, actions: np.ndarray) -> BatchStep:
        """Step only ``games`` (indices); the arrays returned cover those games, in order.

        The batch's ``obs``/``mask`` rows of those games are updated too.
        """
        games = np.asarray(games, dtype=np.intp)
        if games.shape[0] == self.num_games:
            return self.step(actions)
        actions = self._check_actions(actions, self._out.mask[games], games)
        sub = self.state.take(games)
        out = _Out(games.shape[0], self.table, self.obs_size)
        self._advance(sub, actions, out, games)
        self.state.put(games, sub)
        self._out.obs[games] = out.obs
        self._out.mask[games] = out.mask
        self._out.legal[games] = out.legal
        return BatchStep(
            out.obs, out.mask, out.rewards, out.terminated, out.truncated, sub.cur, out.infos()
        )

    def set_state(self, state: BatchState) -> None:
        """Continue from ``state`` (e.g. built by hand for analysis): every game must be in the
        play phase (no pending capture). The value-major copies, observations and masks are
        rebuilt from it."""
        if len(state) != self.num_games:
            raise ValueError(f"state holds {len(state)} games, the batch {self.num_games}")
        if state.hand.shape[0] != self._players or state.score.shape[0] != self._sides:
            raise ValueError(
                f"state has {state.hand.shape[0]} seats and {state.score.shape[0]} sides, the "
                f"table {self.table.name} {self._players} and {self._sides} "
                "(BatchState.zeros(n, players, sides))"
            )
        if (state.pending != NO_CARD).any() or state.picked.any():
            raise ValueError("set_state needs every game in the play phase (no pending capture)")
        self.state = state.take(self._games)
        self.state.table_vm = convert(self.state.table, CARD_TO_VM)
        self.state.picked_vm = np.zeros_like(self.state.picked)
        self._out.any_deal_end = True
        self._out.clear()
        self._encode(self.state, self.state.cur, np.zeros(self.num_games, U64), self._out)
        self._started = True

    def legal_actions_bits(self) -> tuple[np.ndarray, np.ndarray]:
        """``(cards, offset)``: legal actions as a card mask and 0 (play) or 40 (pick)."""
        offset = np.where(self.state.pending == NO_CARD, 0, NUM_CARDS)
        return self._out.legal, offset

    def sample_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action in every game."""
        cards, offset = self.legal_actions_bits()
        return random_legal_actions(cards, rng or self.rng) + offset

    @property
    def state_bytes_per_game(self) -> int:
        return self.state.nbytes_per_game

    # Checks ------------------------------------------------------------------------------------

    def _check_decks(self, decks: np.ndarray) -> np.ndarray:
        decks = np.asarray(decks)
        if decks.shape != (self.num_games, NUM_CARDS) or decks.dtype.kind not in "iu":
            raise ValueError(f"decks must be integers of shape ({self.num_games}, {NUM_CARDS})")
        if not (np.sort(decks, axis=1) == np.arange(NUM_CARDS)).all():
            raise ValueError("every deck must hold each of the 40 card ids once")
        return decks.astype(np.uint8)

    def _check_actions(self, actions: Any, mask: np.ndarray, games: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (mask.shape[0],) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be {mask.shape[0]} integers, got {actions!r}")
        actions = actions.astype(np.intp, copy=False)
        if self.check_actions:
            if ((actions < 0) | (actions >= NUM_ACTIONS)).any():
                raise IllegalMoveError(f"actions out of range 0..79: {actions}")
            ok = mask[np.arange(mask.shape[0]), actions] != 0
            if not ok.all():
                bad = int(np.flatnonzero(~ok)[0])
                raise IllegalMoveError(
                    f"game {int(games[bad])}: action {int(actions[bad])} is not legal; legal "
                    f"actions are {np.flatnonzero(mask[bad]).tolist()}"
                )
        return actions

    # Deals --------------------------------------------------------------------------------------

    def _draw(self, games: np.ndarray, new_episode: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Decks and first players for new deals (redealing void tables, as ``Deal.new``)."""
        if self.deal_source is not None:
            decks, firsts = self.deal_source(games, new_episode)
            return np.asarray(decks, dtype=np.uint8), np.asarray(firsts, dtype=np.int8)
        k = games.shape[0]
        firsts = np.asarray(self.rng.integers(self._players, size=k, dtype=np.int8))
        decks = self.rng.permuted(np.tile(np.arange(NUM_CARDS, dtype=np.uint8), (k, 1)), axis=1)
        if self.rules.redeal_three_kings and self.table.table_size:
            faces = slice(self.table.round_cards, self._dealt)
            while True:
                void = np.bitwise_count(BIT[decks[:, faces]] & U64(KINGS_MASK)).sum(axis=1) >= 3
                if not void.any():
                    break
                decks[void] = self.rng.permuted(decks[void], axis=1)
        return decks, firsts

    def _new_deals(
        self, s: BatchState, games: np.ndarray, decks: np.ndarray, firsts: np.ndarray
    ) -> None:
        firsts = np.asarray(firsts, dtype=np.int8)
        s.deck[games] = decks
        s.first[games] = firsts
        self._deal_hands(s, games, decks[:, : self.table.round_cards], firsts)
        faces = decks[:, self.table.round_cards : self._dealt]
        s.table[games] = np.bitwise_or.reduce(BIT[faces], axis=1)
        s.table_vm[games] = np.bitwise_or.reduce(VM_BIT[faces], axis=1)
        s.pile[:, games] = 0
        s.played[:, games] = 0
        s.scope[:, games] = 0
        s.picked[games] = 0
        s.picked_vm[games] = 0
        s.pos[games] = self._dealt
        s.last[games] = self._players
        s.pending[games] = NO_CARD

    def _deal_hands(
        self, s: BatchState, games: np.ndarray, cards: np.ndarray, first: np.ndarray
    ) -> None:
        """Deal a round's ``cards`` (``(k, seats x hand)``) one at a time from the first player."""
        bits = BIT[cards]
        n = self._players
        for offset in range(n):
            seat = first if offset == 0 else (first + offset) % n
            s.hand[seat, games] = np.bitwise_or.reduce(bits[:, offset::n], axis=1)
        s.cur[games] = first

    def _deal_rounds(self, s: BatchState, games: np.ndarray) -> None:
        pos = s.pos[games].astype(np.intp)
        dealt = self.table.round_cards
        cards = s.deck[games[:, None], pos[:, None] + np.arange(dealt)]
        self._deal_hands(s, games, cards, s.first[games])
        s.pos[games] += dealt

    def _end_deals(self, s: BatchState, games: np.ndarray, out: _Out, ids: np.ndarray) -> None:
        """Leftovers, scoring, rewards, infos; then the next deal or a new episode.

        ``games`` index ``s``; ``ids`` maps them to the batch's game numbers (for the source).
        """
        n, sides = self._players, self._sides
        last = s.last[games]
        took = last != n
        g = games[took]
        s.pile[last[took], g] |= s.table[g]
        s.table[g] = 0
        s.table_vm[g] = 0
        piles, scope = s.pile[:, games], s.scope[:, games]
        if n > sides:  # a side's pile and scope are its seats' together
            piles = np.bitwise_or.reduce(piles.reshape(n // sides, sides, -1), axis=0)
            scope = scope.reshape(n // sides, sides, -1).sum(axis=0, dtype=np.uint8)
        breakdown = self._score(piles.T, scope)
        totals = breakdown[:, :, -1]
        after = s.score[:, games].T + totals
        if self.episode == "deal":
            done = np.ones(games.shape[0], bool)
            winner = _sole_leader(totals)
        else:
            winner = _sole_leader(after)
            winner[after.max(axis=1) < self.rules.target] = -1
            done = winner >= 0
        values: np.ndarray | None = None
        won = winner >= 0
        if self.reward == "points":
            values, rewarded = totals.astype(np.float64), np.ones(games.shape[0], bool)
        else:
            values, rewarded = (winner[:, None] == np.arange(sides)).astype(np.float64), won
        # Each side: its value minus the mean of the others' (``capture_env.side_rewards``).
        by_side = values - (values.sum(axis=1, keepdims=True) - values) / (sides - 1)
        by_seat = by_side[:, np.arange(n) % sides].astype(np.float32)
        out.rewards[games[rewarded]] = by_seat[rewarded]
        out.any_deal_end = True
        out.deal_end[games] = True
        out.deal_score[games] = breakdown
        out.match_score[games] = after
        out.winner[games] = winner
        out.terminated[games] = done
        ended = games[done]
        if ended.shape[0]:
            final = s.take(ended)
            final_obs = out.final_obs
            for player in range(n):
                view = np.empty((ended.shape[0], self.obs_size), np.float32)
                self._encode_obs(final, np.full(ended.shape[0], player, np.int8), view)
                final_obs[ended, player] = view
        going = games[~done]
        s.score[:, going] = after[~done].T
        s.score[:, ended] = 0
        order = np.concatenate([going, ended])
        new_episode = np.concatenate(
            [np.zeros(going.shape[0], bool), np.ones(ended.shape[0], bool)]
        )
        decks, firsts = self._draw(ids[order], new_episode)
        firsts = np.where(new_episode, firsts, self._next_seat.take(s.first[order]))
        self._new_deals(s, order, decks, firsts.astype(np.int8))

    def _score(self, piles: np.ndarray, scope: np.ndarray) -> np.ndarray:
        """``(k, S, 8)`` breakdowns of finished deals from the sides' piles ``(k, S)`` and scope
        ``(S, k)`` (``DEAL_SCORE_FIELDS``)."""
        k, sides = piles.shape
        result = np.zeros((k, sides, len(DEAL_SCORE_FIELDS)), np.int16)
        cards = np.bitwise_count(piles)
        coins = np.bitwise_count(piles & _COINS)
        result[:, :, 0] = _leader(cards)
        result[:, :, 1] = _leader(coins)
        result[:, :, 2] = (piles >> U64(6)) & U64(1)
        suits = ((piles[:, :, None] >> (U64(10) * np.arange(4, dtype=U64))) & U64(1023)).astype(
            np.intp
        )
        best = BEST_PRIMIERA_LUT[suits]  # (k, S, 4)
        primiera = np.where((best > 0).all(axis=2), best.sum(axis=2), -1)
        result[:, :, 3] = _leader(primiera)
        result[:, :, 4] = scope.T
        if self.rules.re_bello:
            result[:, :, 5] = (piles >> U64(9)) & U64(1)
        if self.rules.napola:
            result[:, :, 6] = NAPOLA_LUT[(piles & U64(1023)).astype(np.intp)]
        result[:, :, 7] = result[:, :, :7].sum(axis=2)
        return result

    # The step --------------------------------------------------------------------------------

    def _advance(self, s: BatchState, actions: np.ndarray, out: _Out, ids: np.ndarray) -> None:
        """One action in every game of ``s`` (already checked): resolve, deal, score, encode."""
        rules = self.rules
        cur = s.cur
        seats = _seat_masks(cur, self._players)  # all ones in the games where each seat acts
        choosing = s.pending != NO_CARD  # these games' actions pick table cards
        picks = np.flatnonzero(choosing)
        card = actions.copy()
        card[picks] = s.pending[picks]
        table, table_vm = s.table, s.table_vm

        # cls: 0 trail, 1 exactly one capture (res_vm is it), 2 a choice (res_vm: pickable).
        if rules.capture_sum is None:
            same = table_vm & CARD_NIBBLE.take(card)  # table cards of the played card's value
            cls = np.minimum(np.bitwise_count(same), 2)  # single-card priority
            res_vm = same
            sums = (cls == 0) & SUMMABLE.take(card)  # values 2..10 may take sums
            sweep = None
            if rules.ace_takes_all:  # an ace with no ace on the table takes it all
                sweep = (cls == 0) & (card % 10 == 0) & (table != 0)
                cls = np.where(sweep, np.uint8(1), cls)
                res_vm = np.where(sweep, table_vm, res_vm)
        else:
            cls = np.zeros(actions.shape[0], np.uint8)
            res_vm = np.zeros(actions.shape[0], U64)
            sums = np.ones(actions.shape[0], bool)
            sweep = None
        picked = picked_vm = None
        if picks.shape[0]:
            sums[picks] = False
            picked = s.picked.copy()
            picked_vm = s.picked_vm.copy()
            taken = actions[picks] - NUM_CARDS
            picked[picks] |= BIT.take(taken)
            picked_vm[picks] |= VM_BIT.take(taken)
            by_value = cls[picks] > 0  # a choice among equal cards: one pick decides it
            cls[picks[by_value]] = 1
            res_vm[picks[by_value]] = picked_vm[picks[by_value]]
            self._resolve_sums(picks[~by_value], card, table_vm, picked_vm, cls, res_vm)
        self._resolve_sums(np.flatnonzero(sums), card, table_vm, None, cls, res_vm)
        res = convert(res_vm, VM_TO_CARD)

        # Resolve the plays with at most one capture left; the others wait for picks.
        captured = cls == 1
        resolved = cls != 2
        trailed = cls == 0
        bit = BIT.take(card)
        moved = np.where(resolved, bit, _ZERO)
        gain = np.where(captured, res | bit, _ZERO)
        for seat, acts in enumerate(seats):
            s.hand[seat] ^= moved & acts
            s.played[seat] |= moved & acts
            s.pile[seat] |= gain & acts
        table ^= np.where(trailed, bit, gain & ~bit)
        table_vm ^= np.where(trailed, VM_BIT.take(card), np.where(captured, res_vm, _ZERO))
        s.last = np.where(captured, cur, s.last)
        two = self._players == 2  # two seats: cheaper forms of the same updates
        hands = s.hand[0] | s.hand[1] if two else np.bitwise_or.reduce(s.hand, axis=0)
        hands_empty = hands == 0
        swept = captured & (table == 0)
        if not rules.last_play_scopa:  # the deal's last play
            swept &= ~(hands_empty & (s.pos >= NUM_CARDS))
        if sweep is not None and not rules.ace_sweep_scopa:
            swept &= ~sweep
        if two:
            p1 = cur.view(bool)
            s.scope[0] += swept & ~p1
            s.scope[1] += swept & p1
        else:
            for seat in range(self._players):
                s.scope[seat] += swept & (cur == seat)
        # The capture choices: few games, so updated by index.
        pickable = np.zeros_like(res)
        if picks.shape[0]:
            s.pending[picks] = NO_CARD
            s.picked[picks] = 0
            s.picked_vm[picks] = 0
        waiting = np.flatnonzero(cls == 2)
        if waiting.shape[0]:
            s.pending[waiting] = card[waiting]
            pickable[waiting] = res[waiting]
            if picked is not None and picked_vm is not None:
                s.picked[waiting] = picked[waiting]
                s.picked_vm[waiting] = picked_vm[waiting]
        passes = resolved & ~hands_empty
        if two:
            s.cur = cur ^ passes.view(np.int8)
        else:
            s.cur = np.where(passes, self._next_seat.take(cur), cur)
        over = resolved & hands_empty
        if over.any():
            stock_empty = s.pos >= NUM_CARDS
            round_ = over & ~stock_empty
            if round_.any():
                self._deal_rounds(s, np.flatnonzero(round_))
            end = over & stock_empty
            if end.any():
                self._end_deals(s, np.flatnonzero(end), out, ids)
        self._encode(s, s.cur, pickable, out)

    def _resolve_sums(
        self,
        games: np.ndarray,
        card: np.ndarray,
        table_vm: np.ndarray,
        picked_vm: np.ndarray | None,
        cls: np.ndarray,
        res_vm: np.ndarray,
    ) -> None:
        """Sum captures of ``games`` into ``cls``/``res_vm`` (picks from ``picked_vm``)."""
        if not games.shape[0]:
            return
        table = table_vm[games]
        if picked_vm is None:
            c, fields_ = self._sum_captures(counts_of(table), None, VALUE.take(card[games]) - 1)
            res_vm[games] = table & spread(fields_)
        else:
            p_vm = picked_vm[games]
            c, fields_ = self._sum_captures(
                counts_of(table), counts_of(p_vm), VALUE.take(card[games]) - 1
            )
            rest = table & ~p_vm & spread(fields_)
            res_vm[games] = np.where(c == 1, rest | p_vm, rest)
        cls[games] = c

    def _sum_captures(
        self, counts: np.ndarray, picks: np.ndarray | None, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sum captures from the patterns of each game's row: ``(cls, fields)``.

        ``cls`` is 0 (none), 1 (exactly one capture holds the picks) or 2 (several);
        ``fields`` has the guard bit of each value that some such capture needs beyond the
        picks. Many games are grouped by row, so each group meets only its own patterns; a
        few games meet every row's patterns at once (fewer, larger operations).
        """
        k = rows.shape[0]
        if k <= _FEW_GAMES:
            padded = self._padded
            cols = rows.astype(np.intp)
            return _match_patterns(
                self.rules.fewest_cards_capture,
                counts,
                picks,
                *(table.take(cols, axis=1) for table in padded),
            )
        rows = rows.astype(np.uint8)
        order = np.argsort(rows, kind="stable")
        counts = counts[order]
        if picks is not None:
            picks = picks[order]
        parts_cls, parts_fields = [], []
        start = 0
        for r, stop in enumerate(np.cumsum(np.bincount(rows, minlength=10)).tolist()):
            if stop == start:
                continue
            tables = self._columns[r]
            if tables is None:  # no sum capture for this value
                parts_cls.append(np.zeros(stop - start, np.int8))
                parts_fields.append(np.zeros(stop - start, U64))
            else:
                c, f = _match_patterns(
                    self.rules.fewest_cards_capture,
                    counts[start:stop],
                    None if picks is None else picks[start:stop],
                    *tables,
                )
                parts_cls.append(c)
                parts_fields.append(f)
            start = stop
        cls = np.empty(k, np.int8)
        fields_ = np.empty(k, U64)
        cls[order] = np.concatenate(parts_cls)
        fields_[order] = np.concatenate(parts_fields)
        return cls, fields_

    # Observations ----------------------------------------------------------------------------

    def _encode(self, s: BatchState, player: np.ndarray, pickable: np.ndarray, out: _Out) -> None:
        """Observation and mask of ``player`` in every game, written into ``out``."""
        if self._kind == "scopa":
            swap = _swap_mask(player)
            h0, h1 = s.hand
            mine = h0 ^ ((h0 ^ h1) & swap)
        else:
            swap = None
            mine = s.hand.reshape(-1).take(self._seat_rows(player, 0, self._players))
        play = np.where(s.pending == NO_CARD, mine, _ZERO)
        np.bitwise_or(play, pickable, out=out.legal)
        self._encode_obs(s, player, out.obs, swap, mine, (play, pickable), out.mask)

    def _encode_obs(
        self,
        s: BatchState,
        player: np.ndarray,
        obs: np.ndarray,
        swap: np.ndarray | None = None,
        mine: np.ndarray | None = None,
        legal: tuple[np.ndarray, np.ndarray] | None = None,
        mask: np.ndarray | None = None,
    ) -> None:
        """The AEC observation of ``player`` (and optionally its mask) in every game.

        The card planes (and the mask's two halves) are packed end to end into 64-bit words,
        so one bit unpacking yields each game's plane values contiguously.
        """
        if self._kind != "scopa":
            self._encode_seats(s, player, obs, mine, legal, mask)
            return
        n = player.shape[0]
        if swap is None:
            swap = _swap_mask(player)
        h0, h1 = s.hand
        hand_swap = (h0 ^ h1) & swap
        theirs = h1 ^ hand_swap
        if mine is None:
            mine = h0 ^ hand_swap
        a, b = s.pile
        pile_swap = (a ^ b) & swap
        q0, q1 = s.played
        played_swap = (q0 ^ q1) & swap
        pend = BIT.take(s.pending)
        planes = [
            mine & ~pend,
            s.table,
            a ^ pile_swap,
            b ^ pile_swap,
            q0 ^ played_swap,
            q1 ^ played_swap,
            _ALL & ~(mine | s.table | a | b),
            pend,
            s.picked,
        ]
        if legal is not None:
            planes += legal
        scalars = _scalar_rows(_NUM_SCALARS, n)
        choosing = s.pending != NO_CARD
        scalars[0] = ~choosing
        scalars[1] = choosing
        scalars[2] = _STOCK_LUT.take(s.pos)
        scalars[3] = _HAND_LUT.take(np.bitwise_count(theirs))
        p1 = player == 1
        sc0, sc1 = s.scope
        scalars[4] = _SCOPE_LUT.take(np.where(p1, sc1, sc0))
        scalars[5] = _SCOPE_LUT.take(np.where(p1, sc0, sc1))
        m0, m1 = np.minimum(s.score, self._match_lut.shape[0] - 1)
        scalars[6] = self._match_lut.take(np.where(p1, m1, m0))
        scalars[7] = self._match_lut.take(np.where(p1, m0, m1))
        scalars[8] = self._target
        scalars[9] = s.first != player
        relative = s.last ^ player  # 0: me, 1: the opponent, 2 or 3: nobody yet
        scalars[10] = relative == 0
        scalars[11] = relative == 1
        scalars[12] = relative >= NOBODY
        _write_obs(_pack_planes(planes), scalars, NUM_PLANES * NUM_CARDS, obs, mask)

    def _seat_rows(self, player: np.ndarray, offset: int, seats: int) -> np.ndarray:
        """Flat indices into a ``(seats, k)`` array (seats or sides) of the row
        ``(player + offset) % seats`` of each game (column)."""
        k = player.shape[0]
        columns = self._games if k == self.num_games else np.arange(k)
        return self._rotation[seats][offset].take(player) * k + columns

    def _encode_seats(
        self,
        s: BatchState,
        player: np.ndarray,
        obs: np.ndarray,
        mine: np.ndarray | None,
        legal: tuple[np.ndarray, np.ndarray] | None,
        mask: np.ndarray | None,
    ) -> None:
        """``_encode_obs`` at the tables of four or more seats: ``table_observation``'s layout,
        or ``scopone_observation``'s at the Scopone tables. Seat arrays are gathered by offset
        from ``player`` (row ``(player + offset) % P`` of each ``(P, N)`` array)."""
        n, sides = self._players, self._sides
        k = player.shape[0]
        rows = [self._seat_rows(player, offset, n) for offset in range(n)]
        hands, piles_, played_ = (a.reshape(-1) for a in (s.hand, s.pile, s.played))
        scope_ = s.scope.reshape(-1)
        if mine is None:
            mine = hands.take(rows[0])
        pend = BIT.take(s.pending)
        piles = [piles_.take(r) for r in rows]
        played = [played_.take(r) for r in rows]
        unseen = _ALL & ~(mine | s.table | np.bitwise_or.reduce(s.pile, axis=0))
        scopone = self._kind == "scopone"
        captures = [piles[0] | piles[2], piles[1] | piles[3]] if scopone else piles
        planes = [mine & ~pend, s.table, *captures, *played, unseen, pend, s.picked]
        if legal is not None:
            planes += legal
        width = self._num_planes * NUM_CARDS
        scalars = _scalar_rows(self.obs_size - width, k)
        choosing = s.pending != NO_CARD
        scalars[0] = ~choosing
        scalars[1] = choosing
        row = 2
        if not scopone:
            scalars[row] = self._seat_stock_lut.take(s.pos)
            row += 1
        for offset in range(1, n):
            scalars[row] = self._seat_hand_lut.take(np.bitwise_count(hands.take(rows[offset])))
            row += 1
        scope = [scope_.take(r) for r in rows]
        if scopone:
            scope = [scope[0] + scope[2], scope[1] + scope[3]]
        for count in scope:
            scalars[row] = self._seat_scope_lut.take(count)
            row += 1
        if not scopone:
            for offset in range(n):
                scalars[row] = offset % sides == 0  # the seat is my partner (or me)
                row += 1
        score = np.minimum(s.score, self._match_lut.shape[0] - 1).reshape(-1)
        for offset in range(sides):  # my side, then the sides after me in seat order
            scalars[row] = self._match_lut.take(score.take(self._seat_rows(player, offset, sides)))
            row += 1
        scalars[row] = self._target
        row += 1
        dealer = (s.first.astype(np.intp) - 1 - player) % n
        for offset in range(n):
            scalars[row] = dealer == offset
            row += 1
        nobody = s.last == n
        if scopone:  # my partnership, the other, nobody yet
            theirs = (s.last ^ player) & 1
            last = [~nobody & (theirs == 0), ~nobody & (theirs == 1), nobody]
        else:  # by offset from me, or nobody yet
            relative = (s.last.astype(np.intp) - player) % n
            last = [~nobody & (relative == offset) for offset in range(n)] + [nobody]
        for value in last:
            scalars[row] = value
            row += 1
        _write_obs(_pack_planes(planes), scalars, width, obs, mask)


def _scalar_rows(rows: int, n: int) -> np.ndarray:
    """``(rows, n)`` float32 for the scalar features, each row padded off a power-of-two
    stride: the transposed copy into the observations then reads rows that do not share
    cache sets."""
    return np.empty((rows, n + 16), np.float32)[:, :n]


def _write_obs(
    words: np.ndarray, scalars: np.ndarray, width: int, obs: np.ndarray, mask: np.ndarray | None
) -> None:
    """Unpack the packed planes (``width`` bits, then the mask's 80) and the scalar rows into
    ``obs`` and ``mask``, in chunks that keep the unpacked bits in cache."""
    n = obs.shape[0]
    bits_per_game = words.shape[1] * 64
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        flat = np.unpackbits(words[start:stop].view(np.uint8), bitorder="little")
        bits = flat.reshape(stop - start, bits_per_game)
        rows = obs[start:stop]
        rows[:, :width] = bits[:, :width]
        rows[:, width:] = scalars[:, start:stop].T
        if mask is not None:
            mask[start:stop] = bits[:, width : width + NUM_ACTIONS]


_MALLOC_TUNED = False


def tune_malloc() -> bool:
    """Let glibc keep freed memory in the heap: returns whether it was tuned (once a process).

    A large batch's step frees and reallocates many temporaries above glibc's default mmap and
    trim thresholds (128 KiB), and returning them to the OS and faulting them back in costs
    up to a fifth of the step. Raising both thresholds keeps the pages (a process then holds
    on to at most the batch's peak working set). Linux with glibc only; elsewhere a no-op.
    """
    global _MALLOC_TUNED
    if _MALLOC_TUNED or not sys.platform.startswith("linux"):
        return _MALLOC_TUNED
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        tuned = libc.mallopt(m_mmap_threshold, 32 << 20) and libc.mallopt(
            m_trim_threshold, 256 << 20
        )
    except (OSError, AttributeError):
        return False
    _MALLOC_TUNED = bool(tuned)
    return _MALLOC_TUNED


def _swap_mask(player: np.ndarray) -> np.ndarray:
    """All ones where ``player`` is 1: ``x0 ^ ((x0 ^ x1) & swap)`` is player's own of a pair."""
    return np.negative(player.astype(U64))


def _seat_masks(player: np.ndarray, players: int) -> list[np.ndarray]:
    """Per seat, all ones in the games where ``player`` is that seat."""
    if players == 2:
        swap = _swap_mask(player)
        return [~swap, swap]
    return [np.negative((player == seat).astype(U64)) for seat in range(players)]


def _pack_planes(planes: list[np.ndarray]) -> np.ndarray:
    """``(N, words)`` uint64: the 40-bit planes laid end to end, plane ``j`` at bit ``40 j``."""
    n = planes[0].shape[0]
    count = -(-len(planes) * NUM_CARDS // 64)
    words: list[np.ndarray] = [np.zeros(n, U64) for _ in range(count)]
    for j, plane in enumerate(planes):
        word, offset = divmod(NUM_CARDS * j, 64)
        words[word] |= plane << U64(offset) if offset else plane
        if offset + NUM_CARDS > 64:
            words[word + 1] |= plane >> U64(64 - offset)
    packed = np.empty((n, count), U64)
    for w, value in enumerate(words):
        packed[:, w] = value
    return packed


_PATTERN_FIELDS = ("need", "low", "guard", "beyond", "size")
#: Up to this many games, the sum captures meet all rows' patterns in one padded block.
_FEW_GAMES = 256


def _padded_patterns(rows: tuple[PatternRow, ...]) -> tuple[np.ndarray, ...]:
    """``(width, 10)`` tables of every row's patterns, padded with an infeasible one."""
    width = max(1, max(row.need.shape[0] for row in rows))
    fill = {"need": 8, "low": 0, "guard": 0, "beyond": 0, "size": 99}
    tables = []
    for name in _PATTERN_FIELDS:
        dtype = np.int8 if name == "size" else U64
        table = np.full((width, 10), fill[name], dtype)
        for r, row in enumerate(rows):
            values = getattr(row, name)
            table[: values.shape[0], r] = values
        tables.append(table)
    return tuple(tables)


def _match_patterns(
    fewest: bool,
    counts: np.ndarray,
    picks: np.ndarray | None,
    need: np.ndarray,
    low: np.ndarray,
    guard: np.ndarray,
    beyond: np.ndarray,
    size: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(cls, fields)`` of games (axis 1) against patterns (axis 0; broadcast or per game)."""
    # Patterns along axis 0, games along axis 1: reductions run across whole rows.
    d = (counts | NIB_HIGH) - need  # each field: 8 + t - m
    ok = (d & NIB_HIGH) == NIB_HIGH  # t >= m in every field
    if fewest:  # only the feasible patterns with the fewest cards (sorted first)
        least = np.take_along_axis(np.broadcast_to(size, ok.shape), ok.argmax(axis=0)[None], 0)
        ok &= size == least
    if picks is None:
        more = guard
        spare = d & low  # some value with t > m: a choice of cards
    else:
        ok &= (((need | NIB_HIGH) - picks) & NIB_HIGH) == NIB_HIGH  # m >= p
        more = (beyond - picks) & NIB_HIGH  # m > p
        spare = d & ((more >> U64(3)) * U64(7))  # p < m < t somewhere
    # Captures counted up to 2: each consistent pattern, 2 if it leaves a choice.
    weight = np.left_shift(ok.view(np.uint8), (spare != 0).view(np.uint8))
    cls = np.minimum(weight.sum(axis=0, dtype=np.uint8), 2).astype(np.int8)
    return cls, np.bitwise_or.reduce(ok * more, axis=0)


def _leader(values: np.ndarray) -> np.ndarray:
    """``(k, S)`` one point to the side strictly ahead of every other (``scoring``'s rule)."""
    best = values == values.max(axis=1, keepdims=True)
    return best & (best.sum(axis=1, keepdims=True) == 1)


def _sole_leader(values: np.ndarray) -> np.ndarray:
    """``(k,)`` the side strictly ahead of every other, -1 where the lead is shared."""
    lead = _leader(values)
    return np.where(lead.any(axis=1), lead.argmax(axis=1), -1).astype(np.int8)


def random_legal_actions(cards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The index of a uniformly chosen set bit of each ``uint64`` mask (none may be empty)."""
    count = np.bitwise_count(cards)
    k = (rng.random(cards.shape[0]) * count).astype(np.uint8)
    x = cards
    for i in range(int(k.max(initial=0))):
        x = np.where(k > i, x & (x - U64(1)), x)
    low = x & (~x + U64(1))
    return np.bitwise_count(low - U64(1)).astype(np.intp)
