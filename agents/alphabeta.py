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

Moves are ordered by their greedy value so that the pruning cuts early. The work is a fixed
number of samples and plies, so the choice depends on the seed only, never on the machine.

Three plies is where the search stops gaining: below my second move the sampled deal shows me
the opponent's hand, and deeper searches (five plies) or an exact search from the fifth round
did no better. At the defaults (2.4 ms a move), over 2,000 duplicate deals: +0.935 ± 0.069
points per deal against greedy, +0.583 ± 0.063 against heuristic; against ismcts (300
iterations, about 36 ms a move) +0.026 ± 0.079 over the first 1,320 of 2,000 deals.
"""

from __future__ import annotations

import numpy as np

from agents.base import RuleAgent
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.inference import (
    CAPTURE_BONUS,
    TEMPERATURE,
    UNIFORM,
    OpponentModel,
    PlayTracker,
)
from agents.seats import SeatView
from agents.values import POINT, CardValues
from scopa_env.engine import Deal, MaskMove
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules
from scopa_env.scoring import score_piles

_INF = 1 << 30


class AlphaBeta:
    """Minimax with alpha-beta pruning on one full deal, in hundredths of a point for ``me``."""

    def __init__(self, rules: Rules, valuer: MoveValuer) -> None:
        self.rules = rules
        self.valuer = valuer
        #: Point difference of the piles (player 0 minus player 1, scope aside), per pair of
        #: piles: different orders of the same plays end in the same piles.
        self._final: dict[tuple[int, int], int] = {}

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
        maximize = deal.current_player == me
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

    def ordered(self, deal: Deal) -> list[MaskMove]:
        """The legal moves, best greedy value first (captures, sweeps, safe trails)."""
        moves = deal.legal_mask_moves()
        if len(moves) > 1:
            masks = deal.masks
            table = masks["table"]
            hands = masks["hands"]
            last_play = not deal.stock and (hands[0] | hands[1]).bit_count() == 1
            move_value = self.valuer.move_value
            moves.sort(key=lambda m: -move_value(table, m[0], m[1], last_play))
        return moves

    def final(self, deal: Deal, me: int) -> int:
        """The exact value of a finished deal: ``POINT`` times my points minus the opponent's."""
        piles = deal.masks["piles"]
        diff = self._final.get(piles)
        if diff is None:
            mine, theirs = score_piles(piles, (0, 0), self.rules)
            diff = self._final[piles] = POINT * (mine.total - theirs.total)
        scope = deal.scope
        diff += POINT * (scope[0] - scope[1])
        return diff if me == 0 else -diff

    def material(self, deal: Deal, me: int) -> int:
        """The material balance for ``me``: pile values and scope, mine minus the opponent's."""
        piles = deal.masks["piles"]
        scope = deal.scope
        value = self.valuer.value
        diff = value(piles[0]) - value(piles[1]) + self.valuer.sweep * (scope[0] - scope[1])
        return diff if me == 0 else -diff


class AlphaBetaAgent(RuleAgent):
    """Search player: alpha-beta on sampled deals, exact once the stock is empty.

    About 2 ms of CPU a move at the defaults (the harness's measure, on 2 shared cores).

    Args:
        rules: the rules (a ``Rules``, preset name or option dict).
        samples: deals sampled per decision while the stock holds cards (the root moves are
            all searched on the same samples).
        depth: plies searched before the material evaluation, the root move included.
        endgame_plies: search exactly to the end of the deal when at most this many plies
            follow the root move (five: from the last round on, where it costs one sample).
        seed: seed of the player's own randomness (the sampled deals).
        values: the card values of the material evaluation and the move ordering.
        infer: weigh the sampled deals by how likely the opponent's plays this round were
            with the hand each gives it (``agents.inference``): ``candidates`` deals are drawn
            uniformly and ``samples`` of them resampled in proportion to that likelihood. The
            player then follows the deal across ``act`` calls (``reset`` or a new deal starts
            it over); ``act_batch`` rows are taken one observation at a time, with no history.
        candidates: deals drawn per decision before resampling (``infer`` only; default four
            times ``samples``).
        temperature: the opponent model's softmax temperature over greedy move values, in
            hundredths of a point.
        uniform: the share of uniformly random play in the opponent model.
        capture_bonus: the opponent model's preference for capturing over trailing, in
            nats added to every capture (the search player at 300 iterations trails about one
            time in eight when it could capture).
    """

    name = "alphabeta"

    def __init__(
        self,
        rules: Rules | str | None = None,
        samples: int = 32,
        depth: int = 3,
        endgame_plies: int = 5,
        seed: int | None = None,
        values: CardValues | None = None,
        infer: bool = False,
        candidates: int | None = None,
        temperature: float = TEMPERATURE,
        uniform: float = UNIFORM,
        capture_bonus: float = CAPTURE_BONUS,
    ) -> None:
        super().__init__(rules, seed)
        if samples < 1 or depth < 1:
            raise ValueError(f"samples and depth must be at least 1, got {samples} and {depth}")
        if candidates is not None and candidates < samples:
            raise ValueError(f"candidates ({candidates}) must be at least samples ({samples})")
        self.samples = samples
        self.depth = depth
        self.endgame_plies = endgame_plies
        self.valuer = MoveValuer(self.rules, values)
        self.inference = infer  # not ``infer``: GuidedAgent keeps its own weight under that name
        self.candidates = 4 * samples if candidates is None else candidates
        self.model = OpponentModel(self.rules, self.valuer, temperature, uniform, capture_bonus)
        self.tracker = PlayTracker()

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tracker.reset()

    def observe(self, info: InfoState) -> None:
        if not self.inference:
            return
        if info.other_hands:
            raise PlayerError(
                f"{self.name} infers hidden cards at two-player Scopa only; this observation "
                f"is of a table of {len(info.other_hands) + 1} seats"
            )
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
        if view.table.players != 2:
            raise PlayerError(
                f"{self.name} plays two-player Scopa, whose last round it solves exactly; "
                f"this observation is of a table of {view.table.players} seats"
            )
        totals = self.move_values(view, moves)
        last_play = info.is_last_play
        move_value = self.valuer.move_value

        def key(i: int) -> tuple[int, int, int, int]:
            card, capture = moves[i]
            return totals[i], move_value(info.table, card, capture, last_play), capture, -card

        return moves[max(range(len(moves)), key=key)]

    def deals_searched(self, info: InfoState) -> int:
        """The sampled deals a decision searches: one once the stock is empty, when the unseen
        cards are the opponent's hand and one deal is all deals."""
        return self.samples if info.stock_size else 1

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
        depth = info.cards_to_play - 1 if self.solves_exactly(info) else self.depth - 1
        value = AlphaBeta(self.rules, self.valuer).value  # its memo lives for one decision
        totals = [0] * len(moves)
        for deal, count in self.sampled_deals(determinizer, info):
            for i, (card, capture) in enumerate(moves):
                child = deal.copy()
                child.play_unchecked(card, capture)
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
        hidden = [determinizer.hidden(self.rng) for _ in range(self.candidates)]
        size = info.opp_hand_size
        log_likelihood = self.model.log_likelihood
        logs = np.array([log_likelihood(_mask(cards[:size]), plays) for cards in hidden])
        weights = np.exp(logs - logs.max())
        edges = np.cumsum(weights) / weights.sum()
        points = (self.rng.random() + np.arange(samples)) / samples
        picks = np.minimum(np.searchsorted(edges, points), len(hidden) - 1)
        chosen, counts = np.unique(picks, return_counts=True)
        return [(determinizer.deal(hidden[i]), int(n)) for i, n in zip(chosen, counts, strict=True)]


def _mask(cards: list[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask
