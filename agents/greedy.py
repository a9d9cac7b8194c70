"""The greedy player: the best immediate value, one move at a time.

Captures are valued by what they put in the pile (cards, coins, the settebello, sevens and the
other primiera cards, the variants' re bello, and napola coins by the coins in both piles; see
``agents.values``) plus a scopa when the rules score one; a player that cannot capture trails
the card that gives away least, avoiding tables an opponent could sweep with one card.

At the tables of more seats (``scopa_3``, ``scopa_4``, ``scopa_6``, Scopone) piles are the
side's (a partner's captures count as mine; ``InfoState`` pools them) and a capture that leaves
the next seat, always an opponent, a table it could sweep with one card costs the same sweep
risk as such a trail (``MoveValuer(leave_risk=True)``). Two-player Scopa keeps the valuation
the shipped figures were measured with, which charges that risk to trails only.
Values are integers (hundredths of a point) and ties are broken by a total order on moves, so the
scalar ``act``, the numpy ``act_batch`` and the rollouts of the search player all make the same
choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np

from agents.base import RuleAgent
from agents.layouts import layout_of
from agents.values import CardValues
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET
from scopa_env.captures import is_ace_sweep
from scopa_env.cards import ACES_MASK, CAPTURE_VALUE, NUM_CARDS
from scopa_env.engine import MaskMove
from scopa_env.info_state import InfoState
from scopa_env.observation import planes_to_masks
from scopa_env.rules import Rules

_VALUE = [int(v) for v in CAPTURE_VALUE]

#: Bits of a DP key (see ``GreedyAgent.act_batch``): capture mask, then value, then count.
_MASK_BITS = 40
_VALUE_BITS = 12
#: Bits of a move key: the card tie-break, then the capture mask, then the value (signed).
_CARD_BITS = 6
_MOVE_VALUE_SHIFT = _CARD_BITS + _MASK_BITS
_ACES = np.int64(ACES_MASK)
_LOW_MASK = np.int64((1 << _MASK_BITS) - 1)
_BITS = np.int64(1) << np.arange(NUM_CARDS, dtype=np.int64)


@dataclass(frozen=True)
class _BatchLayout:
    """What ``GreedyAgent.act_batch`` reads from one observation layout, by plane index.

    ``own_piles``/``other_piles``: the capture planes of my side and of the other sides;
    ``stock`` and ``next_hand``: (index, scale) of the stock size (``None``: no stock) and of the
    next seat's hand size, which with my cards say whether this is the deal's last play;
    ``leave_risk``: the valuation of the tables of more seats (``MoveValuer(leave_risk=True)``).
    """

    num_planes: int
    hand: int
    table: int
    pending: int
    picked: int
    own_piles: tuple[int, ...]
    other_piles: tuple[int, ...]
    stock: tuple[int, float] | None
    next_hand: tuple[int, float]
    leave_risk: bool


@cache
def _batch_layout(width: int) -> _BatchLayout:
    layout = layout_of(width)
    return _BatchLayout(
        len(layout.planes),
        layout.index("hand"),
        layout.index("table"),
        layout.index("pending"),
        layout.index("picked"),
        tuple(map(layout.index, layout.own_piles)),
        tuple(map(layout.index, layout.other_piles)),
        None
        if layout.stock_scale is None
        else (layout.slices["stock_size"].start, layout.stock_scale),
        (layout.next_hand, layout.hand_scale),
        leave_risk=layout.players > 2,
    )


def _union(planes: np.ndarray, indices: tuple[int, ...]) -> np.ndarray:
    return np.bitwise_or.reduce(planes[:, list(indices)], axis=1)


class MoveValuer:
    """Fast integer valuation of ``(card, capture mask)`` moves on bit masks.

    ``value`` sums per-card values with four 10-bit lookups, plus, under napola, each coin's
    napola value given the capture piles (``piles``: the mover's, then the opponent's);
    ``sweepable`` says whether one card could take the whole table under the rules (the risk a
    trail leaves behind). ``leave_risk``: charge that risk to captures that leave such a table
    too (the valuation of the tables of more seats).
    """

    def __init__(
        self, rules: Rules, values: CardValues | None = None, leave_risk: bool = False
    ) -> None:
        self.rules = rules
        self.leave_risk = leave_risk
        self.values = values or CardValues()
        #: Each card's value at the start of a deal (empty piles).
        self.card_value = self.values.per_card(rules)
        self._napola = rules.napola
        #: Without the napola values, which depend on the piles.
        self.base_value = self.values.base(rules)
        self._chunks = [
            [
                sum(self.base_value[10 * s + i] for i in range(10) if bits >> i & 1)
                for bits in range(1024)
            ]
            for s in range(4)
        ]
        self._rank_sum = [
            sum(_VALUE[i] for i in range(10) if bits >> i & 1) for bits in range(1024)
        ]
        self.sweep = self.values.sweep
        self.sweep_risk = self.values.sweep_risk
        self._scopa_on_last = rules.last_play_scopa
        self._no_ace_scopa = rules.ace_takes_all and not rules.ace_sweep_scopa
        self._ace_sweeps = rules.ace_takes_all and rules.ace_sweep_scopa

    def value(self, mask: int, piles: tuple[int, int] = (0, 0)) -> int:
        """The value of taking the cards of ``mask`` for a player with these capture piles."""
        c = self._chunks
        value = (
            c[0][mask & 1023] + c[1][mask >> 10 & 1023] + c[2][mask >> 20 & 1023] + c[3][mask >> 30]
        )
        if self._napola and mask & 1023:
            napola = self.values.napola_values(self.rules, piles[0], piles[1])
            value += sum(napola[rank] for rank in range(10) if mask >> rank & 1)
        return value

    def table_sum(self, mask: int) -> int:
        r = self._rank_sum
        return r[mask & 1023] + r[mask >> 10 & 1023] + r[mask >> 20 & 1023] + r[mask >> 30]

    def sweepable(self, table: int) -> bool:
        """Whether some single card would sweep ``table`` for a scopa."""
        if not table:
            return False
        total = self.table_sum(table)
        if self.rules.capture_sum is not None:
            return 5 <= total <= 14
        return total <= 10 or (self._ace_sweeps and not table & ACES_MASK)

    def scores_sweep(self, table: int, card: int, capture: int, last_play: bool) -> bool:
        """Whether ``capture`` is a scopa that scores."""
        if capture != table or (last_play and not self._scopa_on_last):
            return False
        return not (self._no_ace_scopa and is_ace_sweep(table, card, capture, self.rules))

    def move_value(
        self, table: int, card: int, capture: int, last_play: bool, piles: tuple[int, int] = (0, 0)
    ) -> int:
        """Greedy value of a move: what it captures, or minus what a trail gives away."""
        if capture:
            value = self.value(capture | 1 << card, piles)
            if self.scores_sweep(table, card, capture, last_play):
                value += self.sweep
            elif self.leave_risk and not last_play and self.sweepable(table ^ capture):
                value -= self.sweep_risk
            return value
        value = -(self.value(1 << card, piles) if self._napola else self.card_value[card])
        if self.sweepable(table | 1 << card):
            value -= self.sweep_risk
        return value

    def best_move(
        self, table: int, moves: list[MaskMove], last_play: bool, piles: tuple[int, int] = (0, 0)
    ) -> MaskMove:
        """The greedy move: highest value, then highest capture mask, then lowest card.

        ``piles`` (the mover's capture pile, then the opponent's) matter only under napola.
        """
        best = moves[0]
        best_key = None
        for card, capture in moves:
            key = (
                (self.move_value(table, card, capture, last_play, piles) << _MOVE_VALUE_SHIFT)
                + (capture << _CARD_BITS)
                + 63
                - card
            )
            if best_key is None or key > best_key:
                best_key, best = key, (card, capture)
        return best


class GreedyAgent(RuleAgent):
    """Plays the move of best immediate value; deterministic."""

    name = "greedy"

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        values: CardValues | None = None,
    ) -> None:
        super().__init__(rules, seed)
        self.valuer = MoveValuer(self.rules, values)
        #: The valuation at tables of more seats (``InfoState.other_hands`` not empty).
        self.table_valuer = MoveValuer(self.rules, values, leave_risk=True)

    def choose(self, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        valuer = self.table_valuer if info.other_hands else self.valuer
        return valuer.best_move(info.table, moves, info.is_last_play, info.piles)

    # Batched form -------------------------------------------------------------------------

    @cached_property
    def _batch_tables(self) -> dict[str, np.ndarray]:
        valuer = self.valuer
        card_value = np.array(valuer.card_value, dtype=np.int64)
        return {
            "card_value": card_value,
            "base_value": np.array(valuer.base_value, dtype=np.int64),
            "capture_value": np.array(_VALUE, dtype=np.int64),
            "dp_key": (card_value << _MASK_BITS) + (np.int64(1) << np.arange(NUM_CARDS)),
        }

    def act_batch(self, observations: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """Greedy actions for a batch of observation vectors ``(n, obs_size)``, with numpy.

        Reads the layout of every table (by the vector's width) and makes exactly the choice
        of ``act`` on each row (a test checks it at every table). ``masks``, if given, are only
        checked against the actions.
        """
        obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
        layout = _batch_layout(obs.shape[1])
        if layout.leave_risk and self.rules.ace_takes_all and self.rules.ace_sweep_scopa:
            # A table left without aces is at risk, so the risk depends on which capture is
            # taken, not on the card alone as below: play ``act`` on each row.
            every = np.ones((obs.shape[0], NUM_ACTIONS), np.int8) if masks is None else masks
            return RuleAgent.act_batch(self, obs, every)
        n = obs.shape[0]
        capture_value = self._batch_tables["capture_value"]
        planes = planes_to_masks(obs, layout.num_planes).astype(np.int64)
        card_value, dp_key = self._row_values(planes, layout)
        hand, table = planes[:, layout.hand], planes[:, layout.table]
        pending, picked = planes[:, layout.pending], planes[:, layout.picked]
        # The candidate cards: the pending card in the pick phase, else the hand.
        candidate = (np.where(pending != 0, pending, hand)[:, None] & _BITS) != 0
        cards_held = np.bitwise_count(hand.astype(np.uint64) | pending.astype(np.uint64))
        last_play = (cards_held == 1) & (
            np.rint(obs[:, layout.next_hand[0]] * layout.next_hand[1]) == 0
        )
        if layout.stock is not None:
            last_play &= np.rint(obs[:, layout.stock[0]] * layout.stock[1]) == 0
        sweep_counts = ~last_play | self.rules.last_play_scopa
        best = self._best_capture_keys(table, picked, sweep_counts, card_value, dp_key)

        # Per card: its best capture, or minus what trailing it gives away.
        by_card = best[:, capture_value]
        captures = by_card >= 0
        table_total = ((table[:, None] & _BITS) != 0) @ capture_value
        risky = self._sweepable_totals(table_total[:, None] + capture_value)
        if self.rules.ace_takes_all and self.rules.ace_sweep_scopa:
            risky |= ((table[:, None] | _BITS) & _ACES) == 0
        trail_value = -card_value - np.where(risky, self.valuer.sweep_risk, 0)
        value = np.where(captures, (by_card >> _MASK_BITS) + card_value, trail_value)
        mask = np.where(captures, by_card & _LOW_MASK, 0)
        if layout.leave_risk:
            # Every capture of a card takes the same total, so what it leaves is at risk or
            # not whichever capture it is; a capture of the whole table leaves nothing.
            sum_ = self.rules.capture_sum
            taken = capture_value if sum_ is None else sum_ - capture_value
            leaves_risk = self._sweepable_totals(table_total[:, None] - taken) & (
                mask != table[:, None]
            )
            leaves_risk &= captures & ~last_play[:, None]
            value = value - np.where(leaves_risk, self.valuer.sweep_risk, 0)
        # The move key of ``MoveValuer.best_move``: value, then capture mask, then lowest card.
        key = (value << _MOVE_VALUE_SHIFT) + (mask << _CARD_BITS) + (63 - np.arange(NUM_CARDS))
        card = np.where(candidate, key, np.iinfo(np.int64).min).argmax(axis=1)
        remaining = mask[np.arange(n), card] & ~picked
        lowest = np.log2(np.maximum(remaining & -remaining, 1).astype(np.float64))
        actions = np.where(pending != 0, PICK_OFFSET + lowest.astype(np.int64), card)
        if masks is not None and not np.asarray(masks)[np.arange(n), actions].all():
            raise ValueError("act_batch chose an action the mask forbids: do the rules match?")
        return actions

    def _sweepable_totals(self, total: np.ndarray) -> np.ndarray:
        """``MoveValuer.sweepable`` of non-empty tables by their totals (the totals' part)."""
        if self.rules.capture_sum is not None:
            return (total >= 5) & (total <= 14)
        return (total >= 1) & (total <= 10)

    def _row_values(
        self, planes: np.ndarray, layout: _BatchLayout
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per row, each card's value and DP key; one shared row ``(1, 40)`` without napola.

        Under napola the coins' values follow each row's capture piles, as in ``act``.
        """
        tables = self._batch_tables
        if not self.rules.napola:
            return tables["card_value"][None, :], tables["dp_key"][None, :]
        coins = np.stack(
            [_union(planes, layout.own_piles) & 1023, _union(planes, layout.other_piles) & 1023],
            axis=1,
        )
        pairs, index = np.unique(coins, axis=0, return_inverse=True)
        values, rules = self.valuer.values, self.rules
        napola = np.array(
            [values.napola_values(rules, int(mine), int(theirs)) for mine, theirs in pairs],
            dtype=np.int64,
        )
        card_value = np.repeat(tables["base_value"][None, :], planes.shape[0], axis=0)
        card_value[:, :10] += napola[index.ravel()]
        return card_value, (card_value << _MASK_BITS) + _BITS

    def _best_capture_keys(
        self,
        table: np.ndarray,
        picked: np.ndarray,
        sweep_counts: np.ndarray,
        card_value: np.ndarray,
        card_key: np.ndarray,
    ) -> np.ndarray:
        """Per row and played value 1..10, the key ``value << 40 | mask`` of the greedy capture.

        -1 where that value captures nothing. Sum captures come from a dynamic program over the
        table cards per capture total (picked cards forced in), keyed so that its maximum is the
        greedy set, with fewer cards first when the rules demand the fewest. ``card_value`` and
        ``card_key`` (each card's value, and ``value << 40 | bit``) are ``(n, 40)`` or ``(1, 40)``.
        """
        rules = self.rules
        capture_value = self._batch_tables["capture_value"]
        n = table.shape[0]
        on_table = (table[:, None] & _BITS) != 0
        is_picked = (picked[:, None] & _BITS) != 0
        top = 14 if rules.capture_sum is not None else 10
        neg = np.int64(-(1 << 62))
        count_key = -(1 << (_MASK_BITS + _VALUE_BITS)) if rules.fewest_cards_capture else 0
        dp = np.full((n, top + 1), neg, dtype=np.int64)
        dp[:, 0] = 0
        for card in np.flatnonzero(on_table.any(axis=0)):
            v = _VALUE[card]
            taken = np.full_like(dp, neg)
            taken[:, v:] = dp[:, : top + 1 - v] + (card_key[:, card, None] + count_key)
            taken[taken < neg // 2] = neg
            new = np.where(is_picked[:, card, None], taken, np.maximum(dp, taken))
            dp = np.where(on_table[:, card, None], new, dp)
        found_dp = dp > neg // 2
        dp_key = np.where(found_dp, dp & ((1 << (_MASK_BITS + _VALUE_BITS)) - 1), -1)

        table_total = on_table @ capture_value
        whole_key = ((on_table * card_value).sum(axis=1) << _MASK_BITS) + table
        sweep_key = whole_key + (self.valuer.sweep << _MASK_BITS)
        best = np.full((n, 11), -1, dtype=np.int64)
        for x in range(1, 11):
            if rules.capture_sum is not None:
                total = rules.capture_sum - x
                key = dp_key[:, total]
                sweep = table_total == total
            else:
                equal = on_table & (capture_value == x)
                has_equal = equal.any(axis=1)
                allowed = equal & (is_picked | (picked == 0)[:, None])
                single = np.where(allowed, card_key, -1).max(axis=1)
                key = np.where(has_equal, single, dp_key[:, x])
                sweep = np.where(has_equal, on_table.sum(axis=1) == 1, table_total == x)
                if rules.ace_takes_all and x == 1:
                    whole = ((table & _ACES) == 0) & (table != 0)
                    key = np.where(whole, whole_key, key)
                    sweep = np.where(whole, rules.ace_sweep_scopa, sweep)
            sweep &= sweep_counts & (key >= 0)
            best[:, x] = np.where(sweep, np.maximum(key, sweep_key), key)
        return best
