"""The heuristic player: greedy value, card counting and the opponent's best reply.

On top of the greedy valuation it
- counts cards: categories already decided (someone holds 21 cards or 6 coins) stop counting,
  napola coins are valued from the coins in both piles (``CardValues.in_position``), and the
  opponent's possible hands are exactly the unseen cards;
- looks one reply ahead: for each move, the expected value of the opponent's best capture on the
  table it leaves, over the opponent's hands drawn from the unseen cards (hypergeometric), so it
  avoids leaving a sweep or the settebello within reach and keeps sevens and coins away from them;
- at the last play, counts the cards left on the table, which go to the last capturer.

At every table of more seats (Scopone, ``scopa_4``, ``scopa_6``, ``scopa_3``) the piles and
the last capturer are the side's, so a partner's captures count as mine (categories my side has
won, napola coins, the cards left to a partner who captured last), and the reply is the next
seat's, always an opponent, whose hand is drawn from the cards unseen in every other hand and
the stock. With three sides each rival's pile decides the categories apart
(``CardValues.in_position``'s ``rivals``).
"""

from __future__ import annotations

from math import comb

import numpy as np

from agents.base import RuleAgent
from agents.greedy import MoveValuer
from agents.seats import SeatView
from agents.values import CardValues
from scopa_env.captures import capture_table
from scopa_env.cards import CAPTURE_VALUE, cards_of
from scopa_env.engine import MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules

_VALUE = [int(v) for v in CAPTURE_VALUE]


class HeuristicAgent(RuleAgent):
    """Greedy with card counting and a one-reply lookahead; deterministic.

    Args:
        reply_weight: how much of the opponent's expected best reply counts against a move.
    """

    name = "heuristic"

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        values: CardValues | None = None,
        reply_weight: float = 1.0,
    ) -> None:
        super().__init__(rules, seed)
        self.values = values or CardValues()
        self.valuer = MoveValuer(self.rules, self.values)
        self.reply_weight = reply_weight
        self._capture_sets = capture_table(self.rules)

    def card_values(self, info: InfoState, rivals: tuple[int, ...] | None = None) -> list[int]:
        """Per-card values in this position: decided categories left out, napola from the piles
        (``rivals``: each other side's captures, where there are more than one)."""
        mine, theirs = info.piles
        return self.values.in_position(self.rules, mine, theirs, rivals)

    def taken_value(
        self, info: InfoState, taken: int, values: list[int], mine: bool = True
    ) -> float:
        """Value of the cards of ``taken`` going to my pile (or, valued for them, the opponent's).

        The sum of the cards' values, plus what that sum misses of several napola coins taken
        at once.
        """
        value = float(sum(values[c] for c in cards_of(taken)))
        if self.rules.napola:
            own, other = info.piles if mine else info.piles[::-1]
            value += self.values.napola_correction(self.rules, own, other, taken)
        return value

    def choose_seen(self, vector: np.ndarray, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        rivals = None
        if info.other_hands:
            view = SeatView.from_info(info, np.asarray(vector, np.float32))
            if view.sides > 2:
                rivals = view.side_piles()[1:]
        return self.choose(info, moves, rivals)

    def choose(
        self, info: InfoState, moves: list[MaskMove], rivals: tuple[int, ...] | None = None
    ) -> MaskMove:
        values = self.card_values(info, rivals)
        best, best_key = moves[0], None
        for move in moves:
            score = self.move_score(info, move, values)
            card, capture = move
            key = (score, capture, -card)
            if best_key is None or key > best_key:
                best, best_key = move, key
        return best

    def move_score(self, info: InfoState, move: MaskMove, values: list[int]) -> float:
        """Immediate value of ``move`` minus the opponent's expected best reply to it."""
        card, capture = move
        table = info.table
        last_play = info.is_last_play
        sweep = 0.0
        if capture:
            if self.valuer.scores_sweep(table, card, capture, last_play):
                sweep = self.values.sweep
            after = table ^ capture
        else:
            after = table | 1 << card
        if last_play:
            # The table goes to the last capturer: me if I just captured.
            if capture or info.last_capturer == 0:
                return sweep + self.taken_value(info, capture | 1 << card | after, values)
            return -self.taken_value(info, after, values, mine=False)
        gain = sweep + (self.taken_value(info, capture | 1 << card, values) if capture else 0.0)
        if not capture:
            # A trail gives the card up for now: what we keep matters beyond the next reply.
            gain -= 0.5 * values[card]
        return gain - self.reply_weight * self.expected_reply(info, after, values)

    def expected_reply(self, info: InfoState, table: int, values: list[int]) -> float:
        """The opponent's expected best capture value on ``table`` over its possible hands."""
        hand_size = info.opp_hand_size
        if hand_size == 0:
            # I play the last card of the round: the opponent leads the next one.
            hand_size = min(3, info.stock_size)
        unseen = cards_of(info.unseen)
        if hand_size == 0 or not unseen:
            return 0.0
        # The opponent's reply is the last play of the deal when it holds the last card.
        reply_is_last = info.opp_hand_size == 1 and info.cards_to_play == 2
        best_by_value: dict[int, float | None] = {}
        replies = []
        for card in unseen:
            value = _VALUE[card]
            if value not in best_by_value:
                best_by_value[value] = self._best_capture(info, table, card, values, reply_is_last)
            best = best_by_value[value]
            if best is not None:
                replies.append(best + values[card])
        if not replies:
            return 0.0
        replies.sort(reverse=True)
        u = len(unseen)
        total = comb(u, hand_size)
        expected, none_before = 0.0, 1.0
        for i, reply in enumerate(replies, start=1):
            none_now = comb(u - i, hand_size) / total
            expected += reply * (none_before - none_now)
            none_before = none_now
        return expected

    def _best_capture(
        self, info: InfoState, table: int, card: int, values: list[int], last_play: bool
    ) -> float | None:
        """Value of the opponent's best capture of ``card`` on ``table`` (without the card)."""
        best = None
        for capture in self._capture_sets(table, _VALUE[card]):
            value = self.taken_value(info, capture, values, mine=False)
            if self.valuer.scores_sweep(table, card, capture, last_play):
                value += self.values.sweep
            if best is None or value > best:
                best = value
        return best
