"""The heuristic player: greedy value, card counting and the opponent's best reply.

On top of the greedy valuation it
- counts cards: categories already decided (someone holds 21 cards or 6 coins) stop counting, and
  the opponent's possible hands are exactly the unseen cards;
- looks one reply ahead: for each move, the expected value of the opponent's best capture on the
  table it leaves, over the opponent's hands drawn from the unseen cards (hypergeometric), so it
  avoids leaving a sweep or the settebello within reach and keeps sevens and coins away from them;
- at the last play, counts the cards left on the table, which go to the last capturer.
"""

from __future__ import annotations

from math import comb

from agents.base import RuleAgent
from agents.determinize import InfoState, Move
from agents.greedy import CardValues, MoveValuer
from scopa_env.captures import capture_table
from scopa_env.cards import CAPTURE_VALUE, COINS_MASK, cards_of
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

    def card_values(self, info: InfoState) -> list[int]:
        """Per-card values with the categories that are already decided left out."""
        base = self.valuer.card_value
        mine, theirs = info.piles
        cards_open = max(mine.bit_count(), theirs.bit_count()) < 21
        coins_open = max((mine & COINS_MASK).bit_count(), (theirs & COINS_MASK).bit_count()) < 6
        values = list(base)
        for card in range(40):
            if not cards_open:
                values[card] -= self.values.card
            if card < 10 and not coins_open:
                values[card] -= self.values.coin
        return values

    def choose(self, info: InfoState, moves: list[Move]) -> Move:
        values = self.card_values(info)
        best, best_key = moves[0], None
        for move in moves:
            score = self.move_score(info, move, values)
            card, capture = move
            key = (score, capture, -card)
            if best_key is None or key > best_key:
                best, best_key = move, key
        return best

    def move_score(self, info: InfoState, move: Move, values: list[int]) -> float:
        """Immediate value of ``move`` minus the opponent's expected best reply to it."""
        card, capture = move
        table = info.table
        last_play = info.is_last_play
        if capture:
            gain = float(sum(values[c] for c in cards_of(capture | 1 << card)))
            if self.valuer.scores_sweep(table, card, capture, last_play):
                gain += self.values.sweep
            after = table ^ capture
        else:
            after = table | 1 << card
            gain = 0.0
        if last_play:
            # The table goes to the last capturer: me if I just captured.
            me_last = capture != 0 or info.last_capturer == 0
            leftover = float(sum(values[c] for c in cards_of(after)))
            return gain + (leftover if me_last else -leftover)
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
        reply_is_last = (
            info.stock_size == 0 and info.opp_hand_size == 1 and info.full_hand.bit_count() == 1
        )
        best_by_value: dict[int, float | None] = {}
        replies = []
        for card in unseen:
            value = _VALUE[card]
            if value not in best_by_value:
                best_by_value[value] = self._best_capture(table, card, values, reply_is_last)
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
        self, table: int, card: int, values: list[int], last_play: bool
    ) -> float | None:
        """Value of the best capture of ``card`` on ``table`` (without the card), if any."""
        best = None
        for capture in self._capture_sets(table, _VALUE[card]):
            value = float(sum(values[c] for c in cards_of(capture)))
            if self.valuer.scores_sweep(table, card, capture, last_play):
                value += self.values.sweep
            if best is None or value > best:
                best = value
        return best
