"""A fast search player: determinized alpha-beta with an exact endgame.

Each decision samples ``samples`` deals consistent with what the player has seen
(``Determinizer``: the unseen cards dealt at random to the opponent's hand and the stock) and,
in each, scores every root move by a minimax search with alpha-beta pruning of the position it
leads to. The root moves share the samples (common random numbers), so the comparison between
them is not swamped by the luck of the hidden cards; the move with the best total wins, ties
going to the greedy player's choice.

- Endgame: once the stock is empty, the unseen cards are exactly the opponent's hand, so the
  rest of the deal (at most six plies) is a game of perfect information. It is solved exactly:
  minimax to the end of the deal on its final point difference (``Deal.score``, memoised on the
  piles). With ``endgame_plies`` above five the exact search starts earlier, on each sample.
- Before that, the search stops ``depth`` plies below the root and values the position by
  material: the greedy player's values of both capture piles (``MoveValuer.value``: cards,
  coins, primiera cards, the settebello) plus a point per scopa, in hundredths of a point. As
  every play uses one card, all leaves are at the same ply, so the search never mixes exact
  scores with material.

- With ``infer=True`` the samples are not uniform: the opponent's plays this round say what it
  is likely to hold (a trail where a card of some rank would have captured), and the searched
  deals are resampled from more candidates by how likely a soft greedy opponent with that hand
  would have made those plays (``agents.inference``). The player then follows each deal
  across its ``act`` calls.

At every table (RULES.md section 8) the search is by sides: a leaf is worth my side's points
(or material) minus the mean of the other sides', the seats of my side maximise it and every
other seat minimises it (``AlphaBeta``): minimax on the point difference with two sides. With
three each other player plays for its own side's reward (max-n, ``AlphaBeta.totals``), which
did better against ISMCTS-300 than the paranoid search (``search="paranoid"``, both against me:
``docs/strength.md``). Every hidden hand is sampled (``Determinizer``), so the
search never stops sampling at tables of more seats, where the unseen cards of the last round
are still split between several hands. The default depth reaches my next move, one ply more
than the seats: at ``scopa_4`` five plies did better than three against greedy
(``docs/strength.md``).

Moves are ordered by their greedy value so that the pruning cuts early. The work is a fixed
number of samples and plies, so the choice depends on the seed only, never on the machine.

Three plies is where the search stops gaining: below my second move the sampled deal shows me
the opponent's hand, and deeper searches (five plies) or an exact search from the fifth round
did no better. At the defaults (2.4 ms a move), over 2,000 duplicate deals: +0.935 ± 0.069
points per deal against greedy, +0.583 ± 0.063 against heuristic; against ismcts (300
iterations, about 36 ms a move) +0.026 ± 0.079 over the first 1,320 of 2,000 deals.
"""

from __future__ import annotations

import copy
from typing import Self

import numpy as np

from agents.base import RuleAgent
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.inference import (
    CAPTURE_BONUS,
    TEMPERATURE,
    UNIFORM,
    OpponentModel,
    OpponentPlay,
    PlayTracker,
)
from agents.seats import SeatView
from agents.values import POINT, CardValues
from scopa_env.engine import Deal, MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules
from scopa_env.scoring import score_piles

_INF = 1 << 30
#: Deals sampled per decision by default, and while hands hold more than three cards.
SAMPLES = 32
WIDE_SAMPLES = 8
#: How the other players play in the search at a table of three sides (``scopa_3``).
SEARCHES = ("maxn", "paranoid")


class AlphaBeta:
    """Minimax with alpha-beta pruning on one full deal, in hundredths of a point for ``me``.

    At every table: a side's value is its points minus the mean of the other sides' (the
    environments' reward), the seats of ``me``'s side maximise it and every other seat
    minimises it. With two sides (two players and the partnerships) that is minimax on the
    point difference; with three (``scopa_3``) it is the paranoid search, the other two
    players taken as allies against ``me``.
    """

    def __init__(self, rules: Rules, valuer: MoveValuer) -> None:
        self.rules = rules
        self.valuer = valuer
        #: Each side's points from the piles alone (scope aside), per tuple of piles:
        #: different orders of the same plays end in the same piles.
        self._final: dict[tuple[int, ...], tuple[int, ...]] = {}

    def value(self, deal: Deal, depth: int, me: int, alpha: int = -_INF, beta: int = _INF) -> int:
        """The minimax value for player ``me`` of ``deal`` searched ``depth`` plies deep.

        At the end of the deal the value is exact (``POINT`` times the point difference);
        at depth zero before it, the material balance.
        """
        if deal.is_over:
            return self.final(deal, me)
        if depth == 0:
            return self.material(deal, me)
        moves = self.ordered(deal)
        sides = deal.kind.sides
        maximize = deal.current_player % sides == me % sides
        best = -_INF if maximize else _INF
        for card, capture in moves:
            child = deal.copy()
            child.play_unchecked(card, capture)
            v = self.value(child, depth - 1, me, alpha, beta)
            if maximize:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    def totals(self, deal: Deal, depth: int) -> tuple[int, ...]:
        """The max-n search: every side's total (points or material, scope included, in
        hundredths) where the deal goes when each seat plays for its own side's reward, its
        total minus the mean of the others' (ties to the first move in greedy order).

        With two sides this picks the moves minimax does; with three each other player plays
        for itself rather than against ``me``. Nothing is pruned: the sides' rewards sum to
        zero, but their totals, which the leaves give, are not bounded tightly enough to cut.
        """
        if deal.is_over:
            return self.final_totals(deal)
        if depth == 0:
            return self.material_totals(deal)
        sides = deal.kind.sides
        side = deal.current_player % sides
        best: tuple[int, ...] = ()
        best_reward = -_INF
        for card, capture in self.ordered(deal):
            child = deal.copy()
            child.play_unchecked(card, capture)
            totals = self.totals(child, depth - 1)
            reward = sides * totals[side] - sum(totals)
            if reward > best_reward:
                best, best_reward = totals, reward
        return best

    def ordered(self, deal: Deal) -> list[MaskMove]:
        """The legal moves, best greedy value first (captures, sweeps, safe trails)."""
        moves = deal.legal_mask_moves()
        if len(moves) > 1:
            masks = deal.masks
            table = masks["table"]
            last_play = not deal.stock and sum(h.bit_count() for h in masks["hands"]) == 1
            move_value = self.valuer.move_value
            moves.sort(key=lambda m: -move_value(table, m[0], m[1], last_play))
        return moves

    def final(self, deal: Deal, me: int) -> int:
        """The exact value of a finished deal: ``POINT`` times my side's points minus the mean
        of the other sides'."""
        piles = seat_piles = deal.masks["piles"]
        if len(seat_piles) != 2:
            piles = deal.team_piles
        points = self._points(piles)
        if len(seat_piles) == 2:  # two players, the hot path
            scope = deal.scope
            diff = POINT * (points[0] - points[1] + scope[0] - scope[1])
            return diff if me == 0 else -diff
        scope = deal.team_scope
        return _for_side(
            tuple(POINT * p for p in points), tuple(POINT * n for n in scope), me % len(points)
        )

    def final_totals(self, deal: Deal) -> tuple[int, ...]:
        """Each side's points, scope included, of a finished deal, in hundredths."""
        points = self._points(deal.team_piles)
        return tuple(POINT * (p + n) for p, n in zip(points, deal.team_scope, strict=True))

    def _points(self, piles: tuple[int, ...]) -> tuple[int, ...]:
        points = self._final.get(piles)
        if points is None:
            scored = score_piles(piles, (0,) * len(piles), self.rules)
            points = self._final[piles] = tuple(side.total for side in scored)
        return points

    def material(self, deal: Deal, me: int) -> int:
        """The material balance for ``me``'s side: pile values and scope, against the mean of
        the other sides' (hundredths of a point, rounded down at three sides)."""
        piles = deal.masks["piles"]
        value = self.valuer.value
        sweep = self.valuer.sweep
        if len(piles) == 2:  # two players, the hot path
            scope = deal.scope
            diff = value(piles[0]) - value(piles[1]) + sweep * (scope[0] - scope[1])
            return diff if me == 0 else -diff
        worth = tuple(value(pile) for pile in deal.team_piles)
        return _for_side(worth, tuple(sweep * n for n in deal.team_scope), me % len(worth))

    def material_totals(self, deal: Deal) -> tuple[int, ...]:
        """Each side's material, pile values and scope, in hundredths."""
        value, sweep = self.valuer.value, self.valuer.sweep
        return tuple(
            value(pile) + sweep * n
            for pile, n in zip(deal.team_piles, deal.team_scope, strict=True)
        )


def _for_side(values: tuple[int, ...], extra: tuple[int, ...], side: int) -> int:
    """Side ``side``'s total (value plus extra) minus the mean of the other sides' totals,
    rounded down: the environments' reward (``agents.ismcts.side_rewards`` on a finished deal)
    in whole hundredths, for any values, memoised piles or material alike."""
    totals = [v + e for v, e in zip(values, extra, strict=True)]
    others = len(totals) - 1
    rest = sum(totals) - totals[side]
    return (others * totals[side] - rest) // others


class AlphaBetaAgent(RuleAgent):
    """Search player: alpha-beta on sampled deals, exact once the stock is empty.

    About 2 ms of CPU a move at the defaults in two-player Scopa (the harness's measure, on 2
    shared cores); 4 ms at ``scopa_3``, 7 at ``scopa_4``, 24 at ``scopa_6`` and 62 at
    ``scopone``, where the hands of nine cards make every ply wide.

    Args:
        rules: the rules (a ``Rules``, preset name or option dict).
        samples: deals sampled per decision while the stock holds cards, or at any time at
            tables of more seats (the root moves are all searched on the same samples); by
            default ``SAMPLES`` (32), ``WIDE_SAMPLES`` (8) while the hand holds more than three
            cards (``settings``).
        depth: plies searched before the material evaluation, the root move included; by
            default one more than the seats (3 at two players).
        endgame_plies: search exactly to the end of the deal when at most this many plies
            follow the root move (five: from the last round on, where at two players it
            costs one sample; at more seats every sample is searched to the end).
        seed: seed of the player's own randomness (the sampled deals).
        values: the card values of the material evaluation and the move ordering.
        infer: weigh the sampled deals by how likely the opponent's plays this round were
            with the hand each gives it (``agents.inference``): ``candidates`` deals are drawn
            uniformly and ``samples`` of them resampled in proportion to that likelihood. The
            player then follows the deal across ``act`` calls (``reset`` or a new deal starts
            it over); ``act_batch`` rows are taken one observation at a time, with no history,
            and a batch of games that should each be followed takes a ``fork`` per game.
        candidates: deals drawn per decision before resampling (``infer`` only; default four
            times ``samples``).
        temperature: the opponent model's softmax temperature over greedy move values, in
            hundredths of a point.
        uniform: the share of uniformly random play in the opponent model.
        capture_bonus: the opponent model's preference for capturing over trailing, in
            nats added to every capture (the search player at 300 iterations trails about one
            time in eight when it could capture).
        search: how the other players play in the search at a table of three sides
            (``scopa_3``): ``"maxn"``, each for itself (``AlphaBeta.totals``), or
            ``"paranoid"``, both against me (``AlphaBeta.value``). With two sides both are
            minimax.
    """

    name = "alphabeta"

    def __init__(
        self,
        rules: Rules | str | None = None,
        samples: int | None = None,
        depth: int | None = None,
        endgame_plies: int = 5,
        seed: int | None = None,
        values: CardValues | None = None,
        infer: bool = False,
        candidates: int | None = None,
        temperature: float = TEMPERATURE,
        uniform: float = UNIFORM,
        capture_bonus: float = CAPTURE_BONUS,
        search: str = "maxn",
    ) -> None:
        super().__init__(rules, seed)
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
        self.search = search
        if (samples is not None and samples < 1) or (depth is not None and depth < 1):
            raise ValueError(f"samples and depth must be at least 1, got {samples} and {depth}")
        if candidates is not None and candidates < (samples or SAMPLES):
            raise ValueError(
                f"candidates ({candidates}) must be at least samples ({samples or SAMPLES})"
            )
        self.samples = samples
        self.depth = depth
        self.endgame_plies = endgame_plies
        self.valuer = MoveValuer(self.rules, values)
        self.inference = infer  # not ``infer``: GuidedAgent keeps its own weight under that name
        if infer and self.two_player_only is None:
            self.two_player_only = "it reads the opponent's hand from its plays"
        self.candidates = candidates
        self.model = OpponentModel(self.rules, self.valuer, temperature, uniform, capture_bonus)
        self.new_deal_state()

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tracker.reset()

    @property
    def follows_deal(self) -> bool:
        """Whether a choice depends on the earlier observations of the deal (``infer``), so
        that a batch of games needs one ``fork`` of the player per game."""
        return bool(self.inference)

    def fork(self, seed: int | None = None) -> Self:
        """A copy that shares this player's settings and models but follows a deal of its own,
        with randomness of its own: one per game of a batch, since ``act_batch`` follows none."""
        twin = copy.copy(self)
        twin.rng = np.random.default_rng(seed)
        twin.new_deal_state()
        return twin

    def new_deal_state(self) -> None:
        """Fresh objects for what the player remembers of the deal it follows."""
        self.tracker = PlayTracker()

    def observe(self, info: InfoState) -> None:
        if self.inference:
            self.tracker.observe(info)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = []
        for obs, mask in zip(observations, masks, strict=True):
            self.tracker.reset()  # rows may come from different games
            actions.append(self.act({"observation": obs, "action_mask": mask}))
        self.tracker.reset()
        return np.array(actions, dtype=np.int64)

    def choose_seen(self, vector: np.ndarray, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        view = SeatView.from_info(info, np.asarray(vector, np.float32))
        totals = self.move_values(view, moves)
        last_play = info.is_last_play
        move_value = self.valuer.move_value

        def key(i: int) -> tuple[int, int, int, int]:
            card, capture = moves[i]
            return totals[i], move_value(info.table, card, capture, last_play), capture, -card

        return moves[max(range(len(moves)), key=key)]

    def settings(self, info: InfoState) -> tuple[int, int]:
        """A decision's ``(samples, depth)``: as given, else by the table and the hand.

        The depth reaches my next move: one ply more than the seats (3 at two players, 5 at
        four, 7 at six). The samples are ``SAMPLES``, or ``WIDE_SAMPLES`` while my hand holds
        more than three cards (Scopone's first plays, where every ply branches up to three
        times wider).
        """
        seats = len(info.other_hands) + 1 if info.other_hands else 2
        samples = self.samples
        if samples is None:
            samples = SAMPLES if info.full_hand.bit_count() <= 3 else WIDE_SAMPLES
        return samples, seats + 1 if self.depth is None else self.depth

    def deals_searched(self, info: InfoState) -> int:
        """The sampled deals a decision searches: one once the stock of a two-player deal is
        empty, when the unseen cards are the opponent's hand and one deal is all deals."""
        return self.settings(info)[0] if info.stock_size or info.other_hands else 1

    def solves_exactly(self, info: InfoState) -> bool:
        """Whether a decision is searched to the end of the deal (its last ``endgame_plies``
        plies after this one)."""
        return info.cards_to_play - 1 <= self.endgame_plies

    def points_per_total(self, info: InfoState) -> float:
        """Points per deal of one unit of ``move_values``' totals: a total is hundredths of a
        point summed over the deals searched."""
        return 1.0 / (POINT * self.deals_searched(info))

    def move_values(self, view: SeatView, moves: list[MaskMove]) -> list[int]:
        """Each move's searched value summed over the sampled deals (hundredths of a point)."""
        info = view.info
        determinizer = Determinizer(view, self.rules)
        depth = info.cards_to_play - 1 if self.solves_exactly(info) else self.settings(info)[1] - 1
        search = AlphaBeta(self.rules, self.valuer)  # its memo lives for one decision
        value = search.value
        sides = view.table.sides
        maxn = sides > 2 and self.search == "maxn"  # with two sides max-n is minimax
        totals = [0] * len(moves)
        for deal, count in self.sampled_deals(determinizer, info):
            for i, (card, capture) in enumerate(moves):
                child = deal.copy()
                child.play_unchecked(card, capture)
                if maxn:
                    ends = search.totals(child, depth)
                    totals[i] += count * _for_side(ends, (0,) * sides, 0)
                else:
                    totals[i] += count * value(child, depth, 0)
        return totals

    def sampled_deals(self, determinizer: Determinizer, info: InfoState) -> list[tuple[Deal, int]]:
        """The deals to search, each with how many of the ``samples`` it stands for.

        Uniform draws; with ``infer``, drawn by systematic resampling of ``candidates``
        uniform draws weighted by the opponent model's likelihood of this round's plays.
        """
        samples = self.deals_searched(info)
        plays = self.tracker.this_round(info) if self.inference and samples > 1 else []
        if not plays:
            return [(determinizer.sample(self.rng), 1) for _ in range(samples)]
        candidates = 4 * samples if self.candidates is None else self.candidates
        hidden = [determinizer.hidden(self.rng) for _ in range(candidates)]
        size = info.opp_hand_size
        logs = self.hand_log_likelihoods([_mask(cards[:size]) for cards in hidden], plays)
        weights = np.exp(logs - logs.max())
        edges = np.cumsum(weights) / weights.sum()
        points = (self.rng.random() + np.arange(samples)) / samples
        picks = np.minimum(np.searchsorted(edges, points), len(hidden) - 1)
        chosen, counts = np.unique(picks, return_counts=True)
        return [(determinizer.deal(hidden[i]), int(n)) for i, n in zip(chosen, counts, strict=True)]

    def hand_log_likelihoods(self, hands: list[int], plays: list[OpponentPlay]) -> np.ndarray:
        """Each hand's log-likelihood, were it the opponent's now, of its plays this round
        (``plays``, most recent first): the soft greedy model's."""
        log_likelihood = self.model.log_likelihood
        return np.array([log_likelihood(hand, plays) for hand in hands])


def _mask(cards: list[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask
