"""Hidden-card inference: what the opponent's plays this round say about the cards it holds.

In Scopa a card that can capture must capture, and players nearly always capture when they
can, so an opponent that trails onto a table where a card of rank R would have captured most
likely holds no R; its choice of one capture over another says more. ``PlayTracker`` follows a
two-player deal decision by decision from one seat and reconstructs each of the opponent's
plays (the table it played on, its card and its capture) from the difference between two
consecutive observations; ``OpponentModel`` gives the likelihood of those plays for a guessed
hand of the opponent, modelling it as a soft greedy player (a softmax of the greedy player's
move values, ``MoveValuer.move_value``, mixed with a little uniform play).

Only this round's plays carry information: the opponent's hand at each of them is its current
hand plus the cards it has played since, while the hands of earlier rounds are now wholly
seen (their likelihoods are the same for every guess and cancel).

The tracker is a pure function of the sequence of observations: it checks that each one
continues the previous one (the played cards and piles only grow, by at most one play a
side, and the table the opponent played on is the table my move left), and starts over
without any history when one does not (a new deal, a new game, another seat or another table
of a batch). With no history it infers nothing, which is the uniform sampling of
``Determinizer``: inference can only be lost, never confused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.seats import SeatView
from scopa_env.captures import capture_table
from scopa_env.cards import CAPTURE_VALUE, cards_of, mask_of
from scopa_env.engine import Deal
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules
from scopa_env.tables import SCOPA

_VALUE = [int(v) for v in CAPTURE_VALUE]

#: ``OpponentModel``'s defaults, fitted to the search player at 300 iterations, which trails
#: about one time in eight when it could capture.
TEMPERATURE = 50.0
UNIFORM = 0.02
CAPTURE_BONUS = 2.5

#: Entries ``OpponentModel`` remembers before it starts over: a long evaluation would
#: otherwise keep every (hand, play) it ever weighed.
_MEMO_SIZE = 1 << 16


@dataclass(frozen=True, slots=True)
class OpponentPlay:
    """One play of the opponent: the table before it, its card and capture (a card mask,
    0 for a trail) and the size of its hand before it."""

    table: int
    card: int
    capture: int
    hand_size: int


def _one_bit(mask: int) -> int | None:
    return mask.bit_length() - 1 if mask and not mask & (mask - 1) else None


class PlayTracker:
    """The opponent's plays this deal, rebuilt from one seat's consecutive observations.

    Two-player Scopa only (``InfoState`` pairs are then exactly mine and the opponent's).
    ``observe`` each observation of the seat, in order, forced moves included; ``plays`` is the
    deal's history as far as it is known (``None`` when the tracker joined mid-deal or lost the
    thread: nothing is then inferred).
    """

    def __init__(self, hand_size: int = SCOPA.hand_size) -> None:
        self.hand_size = hand_size
        self.last: InfoState | None = None
        self.plays: list[OpponentPlay] | None = None

    def reset(self) -> None:
        self.last = None
        self.plays = None

    def observe(self, info: InfoState) -> list[OpponentPlay] | None:
        """Take the next observation of the deal; the opponent's plays known so far."""
        last = self.last
        if last is not None and info == last:
            return self.plays  # the same decision asked again
        play = _continuation(last, info, self.hand_size) if last is not None else None
        if play is None:
            self.plays = _deal_start(info)
        elif self.plays is not None and play is not _NO_PLAY:
            self.plays = [*self.plays, play]
        self.last = info
        return self.plays

    def this_round(self, info: InfoState) -> list[OpponentPlay]:
        """The known plays of the opponent's current hand: those since the last deal of cards,
        most recent first, when its hand now holds ``info.opp_hand_size`` cards."""
        plays: list[OpponentPlay] = []
        for play in reversed(self.plays or ()):
            if info.opp_hand_size + 1 + len(plays) != play.hand_size:
                break
            plays.append(play)
        return plays


#: A valid continuation in which the opponent did not play (my pick phase).
_NO_PLAY = OpponentPlay(0, -1, 0, 0)


def _deal_start(info: InfoState) -> list[OpponentPlay] | None:
    """The history of a deal seen from its start: empty, or the opponent's opening play when
    it led; ``None`` (unknown) when ``info`` is not my first decision of a deal."""
    mine, theirs = info.played
    if mine or info.piles[0] or info.pending is not None:
        return None
    if not theirs:
        return [] if not info.piles[1] else None
    card = _one_bit(theirs)
    if card is None:
        return None
    play = _opponent_play(info, 0, card, info.opp_hand_size + 1)
    return None if play is None else [play]


def _opponent_play(
    info: InfoState, pile_before: int, card: int, hand_size: int
) -> OpponentPlay | None:
    """The opponent's play of ``card`` that led to ``info``, its pile having been
    ``pile_before``; ``None`` if the observation does not fit such a play."""
    gained = info.piles[1] & ~pile_before
    if gained >> card & 1:
        capture = gained & ~(1 << card)
        if not capture or capture & info.table:
            return None
        return OpponentPlay(info.table | capture, card, capture, hand_size)
    if gained or not info.table >> card & 1:
        return None
    return OpponentPlay(info.table & ~(1 << card), card, 0, hand_size)


def follows(last: InfoState, info: InfoState, hand_size: int = SCOPA.hand_size) -> bool:
    """Whether ``info`` can be the next observation of ``last``'s seat in the same deal."""
    return _continuation(last, info, hand_size) is not None


def _continuation(last: InfoState, info: InfoState, hand_size: int) -> OpponentPlay | None:
    """The opponent's play between two consecutive observations of one deal from one seat,
    ``_NO_PLAY`` if there was none, ``None`` if ``info`` does not continue ``last``."""
    (mine0, theirs0), (mine1, theirs1) = last.played, info.played
    (pile0, opp0), (pile1, opp1) = last.piles, info.piles
    if mine0 & ~mine1 or theirs0 & ~theirs1 or pile0 & ~pile1 or opp0 & ~opp1:
        return None
    if info.unseen & ~last.unseen or info.cards_to_play > last.cards_to_play:
        return None
    new_theirs = theirs1 & ~theirs0
    if info.pending is not None:  # my capture goes on: nobody else has played
        same = not new_theirs and opp1 == opp0 and not info.table & ~last.table
        return _NO_PLAY if same and (last.pending in (None, info.pending)) else None
    card = _one_bit(new_theirs)
    if card is None:
        return None
    # The table my move left, which the opponent then played on.
    taken = pile1 & ~pile0
    if taken:
        left = last.table & ~taken
    else:
        mine_card = _one_bit(mine1 & ~mine0)
        if mine_card is None or last.pending is not None:
            return None
        left = last.table | 1 << mine_card
    before = last.opp_hand_size or hand_size
    play = _opponent_play(info, opp0, card, before)
    if play is None or play.table != left or last.full_hand & ~info.full_hand & ~mine1:
        return None
    return play


class OpponentModel:
    """The opponent as a soft greedy player: ``P(move) ∝ exp(value / temperature)`` over its
    legal moves, mixed with ``uniform`` of uniformly random play (so that no guess is ever
    ruled out by a play the greedy valuation would not make).

    ``temperature`` is in the values' unit, hundredths of a point (a trail of a low card
    is worth about -10, a capture of one card about +20).
    """

    def __init__(
        self,
        rules: Rules,
        valuer: MoveValuer,
        temperature: float = TEMPERATURE,
        uniform: float = UNIFORM,
        capture_bonus: float = CAPTURE_BONUS,
    ) -> None:
        if temperature <= 0 or not 0 <= uniform <= 1:
            raise ValueError(
                f"temperature must be positive and uniform in [0, 1], got {temperature} "
                f"and {uniform}"
            )
        self.rules = rules
        self.valuer = valuer
        self.temperature = float(temperature)
        self.uniform = float(uniform)
        self.capture_bonus = float(capture_bonus)
        self._captures = capture_table(rules)
        self._memo: dict[tuple[int, OpponentPlay], float] = {}

    def log_likelihood(self, hand: int, plays: list[OpponentPlay]) -> float:
        """Log-probability of ``plays`` (``PlayTracker.this_round``: most recent first) if the
        opponent's hand now is ``hand``."""
        total = 0.0
        for play in plays:
            hand |= 1 << play.card
            total += self.log_prob(hand, play)
        return total

    def log_prob(self, hand: int, play: OpponentPlay) -> float:
        """Log-probability that a player holding ``hand`` made ``play``."""
        key = (hand, play)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        moves, values = self._scores(hand, play.table)
        if (play.card, play.capture) not in moves:  # illegal for this hand: a hard constraint
            result = -math.inf
        else:
            chosen = values[moves.index((play.card, play.capture))]
            top = max(values)
            log_softmax = chosen - top - math.log(sum(math.exp(v - top) for v in values))
            result = math.log1p(-self.uniform) + log_softmax if self.uniform < 1 else -math.inf
            if self.uniform:
                result = float(np.logaddexp(result, math.log(self.uniform / len(values))))
        if len(self._memo) >= _MEMO_SIZE:  # plays differ from decision to decision
            self._memo.clear()
        self._memo[key] = result
        return result

    def probabilities(self, hand: int, table: int) -> np.ndarray:
        """The probability of each legal move of a player holding ``hand`` on ``table``, in
        the order of ``Deal.legal_mask_moves``."""
        return self._mix(self._scores(hand, table)[1])

    def card_probabilities(self, hand: int, table: int) -> dict[int, float]:
        """The probability of each card of ``hand`` on ``table``, summed over its captures."""
        cards = dict.fromkeys(cards_of(hand), 0.0)
        moves, scores = self._scores(hand, table)
        for (card, _), p in zip(moves, self._mix(scores), strict=True):
            cards[card] += float(p)
        return cards

    def _mix(self, scores: list[float]) -> np.ndarray:
        """The softmax of ``scores`` mixed with ``uniform`` of uniform play."""
        values = np.array(scores)
        weights = np.exp(values - values.max())
        return (1.0 - self.uniform) * weights / weights.sum() + self.uniform / len(values)

    def _scores(self, hand: int, table: int) -> tuple[list[tuple[int, int]], list[float]]:
        """The legal moves, ``(card, capture mask)`` in ``Deal.legal_mask_moves``' order, and
        their softmax scores."""
        moves: list[tuple[int, int]] = []
        scores: list[float] = []
        move_value = self.valuer.move_value
        for card in cards_of(hand):
            for capture in self._captures(table, _VALUE[card]) or (0,):
                moves.append((card, capture))
                score = move_value(table, card, capture, False) / self.temperature
                scores.append(score + self.capture_bonus * (capture != 0))
        return moves, scores


class InferredDeterminizer(Determinizer):
    """Deals drawn by how likely the opponent's plays this round make its hand.

    ``candidates`` hands for the opponent are dealt uniformly from the unseen cards, each
    weighed by ``model``'s likelihood of ``plays`` (``PlayTracker.this_round``); ``sample``
    draws one of them in proportion to its weight, with replacement, and deals the rest of
    the unseen cards to the stock afresh. The deals a search samples then follow the
    posterior over the opponent's hand (its importance-resampled estimate), not the prior.
    """

    def __init__(
        self,
        view: SeatView,
        rules: Rules,
        model: OpponentModel,
        plays: list[OpponentPlay],
        candidates: int,
        rng: np.random.Generator,
    ) -> None:
        super().__init__(view, rules)
        size = view.info.opp_hand_size
        self._hands = [self.hidden(rng)[:size] for _ in range(candidates)]
        logs = np.array([model.log_likelihood(mask_of(hand), plays) for hand in self._hands])
        weights = np.exp(logs - logs.max())
        self._edges = np.cumsum(weights) / weights.sum()

    def sample(self, rng: np.random.Generator) -> Deal:
        pick = int(np.searchsorted(self._edges, rng.random(), side="right"))
        hand = self._hands[min(pick, len(self._hands) - 1)]
        stock = self._unseen[~np.isin(self._unseen, hand)]
        return self.deal(hand + rng.permutation(stock).tolist())
