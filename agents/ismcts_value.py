"""ISMCTS whose leaves a learnt value helps judge: half the rollout, half the network.

``ISMCTSAgent`` values the position each iteration's tree ends in by playing the sampled deal
to its end greedily: one noisy result of a weak policy. This player mixes that result with
``DealValue``'s estimate of the same position, the point difference the deal ends with when
both seats play on as the shipped network does, learnt from that network's self-play
(``training.deal_value``). The mix is AlphaGo's (Silver et al. 2016): ``mix`` times the value
plus ``1 - mix`` times the rollout's result; the rollout keeps the search honest where the
value is wrong, the value cuts the rollout's noise and its greedy bias. The value was not trained
on the last round, once the stock is empty: there the rollout alone judges or, with
``exact_last_round``, the exact solver (``agents.alphabeta``), since in the last round of a
two-player deal each seat knows the other's hand and the sampled deal is the whole truth; the
solver then also makes the last round's decisions itself. With ``infer`` the deals it searches
are drawn by how likely the opponent's plays this round make its hand (``agents.inference``),
not uniformly. Neither option measurably strengthens it (``docs/strength.md``). Two-player Scopa
only, as the value.

The network is a numpy forward pass of some 16 µs, so the default budget, 700 iterations,
keeps the whole move within the 50 ms budget on the day it was measured: 46 ms a move, and
52 ms on a day the machine was 11% slower (ISMCTS-300 at 16.2 ms a move, not 14.6).
"""

from __future__ import annotations

from pathlib import Path

from agents.alphabeta import AlphaBeta
from agents.deal_value import SHIPPED, DealValue
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.inference import InferredDeterminizer, OpponentModel, PlayTracker
from agents.ismcts import ISMCTSAgent, side_rewards
from agents.seats import SeatView
from agents.values import POINT, CardValues
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import Deal, MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


class ValueISMCTSAgent(ISMCTSAgent):
    """Search player: ISMCTS with leaves judged by a rollout and ``DealValue`` (module doc).

    About 46 ms of CPU a move at the defaults (the harness's measure, 2 cores). Against
    ``ismcts`` (300 iterations), ``scopa eval ismcts_value ismcts --deals 2000 --seed 0``:
    +0.181 +- 0.062 points per deal.

    Args: as ``ISMCTSAgent`` (``iterations``, ``exploration``, ``halving``, ...), and
        mix: the weight of the learnt value at a leaf, from 0 (plain ISMCTS) to 1 (the value
            alone, no rollout while the stock lasts).
        value: the path of a ``DealValue`` network (``.npz``); the shipped one by default.
        infer: draw the searched deals by how likely the opponent's plays this round make
            its hand (``agents.inference``: a soft greedy opponent), not uniformly. The
            player then follows the deal across its ``act`` calls (``reset`` or a new deal
            starts it over).
        candidates: hands for the opponent weighed per decision (``infer`` only).
        exact_last_round: solve the last round exactly: its leaves are valued by the solver,
            not the rollout, and its decisions are the solver's, with no search.
    """

    name = "ismcts_value"
    two_player_only = "its value network reads two-player deals"

    def __init__(
        self,
        rules: Rules | str | None = None,
        iterations: int = 700,
        mix: float = 0.5,
        value: str | None = None,
        exact_last_round: bool = False,
        infer: bool = False,
        candidates: int = 256,
        time_limit: float | None = None,
        exploration: float = 0.7,
        epsilon: float = 0.0,
        reward_scale: float = 4.0,
        halving: bool = True,
        tree: bool = True,
        seed: int | None = None,
        values: CardValues | None = None,
    ) -> None:
        super().__init__(
            rules,
            iterations=iterations,
            time_limit=time_limit,
            exploration=exploration,
            epsilon=epsilon,
            reward_scale=reward_scale,
            halving=halving,
            tree=tree,
            seed=seed,
            values=values,
        )
        if not 0.0 <= mix <= 1.0:
            raise ValueError(f"mix is the value's weight at a leaf, from 0 to 1: got {mix}")
        self.mix = float(mix)
        self.path = Path(value) if value is not None else SHIPPED  # the value it searches with
        self.value = DealValue.load(self.path)
        self.exact_last_round = exact_last_round
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1, got {candidates}")
        self.infer = infer
        self.candidates = candidates
        self.model = OpponentModel(self.rules, self.valuer)
        self.tracker = PlayTracker()
        self._exact: AlphaBeta | None = None  # one decision's solver, with its memo

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tracker.reset()

    def observe(self, info: InfoState) -> None:
        if self.infer:
            self.tracker.observe(info)

    def determinizer(self, view: SeatView) -> Determinizer:
        """With ``infer``, deals weighed by the opponent's plays this round; otherwise, and in
        the last round (where the unseen cards are its hand), uniform."""
        info = view.info
        plays = self.tracker.this_round(info) if self.infer and info.stock_size else []
        if not plays:
            return super().determinizer(view)
        return InferredDeterminizer(view, self.rules, self.model, plays, self.candidates, self.rng)

    def search(self, view: SeatView, root_moves: list[MaskMove]) -> MaskMove:
        self._exact = AlphaBeta(self.rules, self.valuer) if self.exact_last_round else None
        try:
            if self._exact is not None and not view.info.stock_size:
                return self._solve(view, root_moves, self._exact)
            return super().search(view, root_moves)
        finally:
            self._exact = None

    def _solve(self, view: SeatView, root_moves: list[MaskMove], exact: AlphaBeta) -> MaskMove:
        """The last round's best move, solved: the unseen cards are the opponent's hand, so
        the one consistent deal is the truth. Ties go to the earlier move, as the greedy player
        orders them (``AlphaBeta.ordered``)."""
        deal = Determinizer(view, self.rules).sample(self.rng)
        plies = view.info.cards_to_play - 1
        best, best_value = root_moves[0], None
        for move in exact.ordered(deal):
            if move not in root_moves:
                continue
            child = deal.copy()
            child.play_unchecked(*move)
            if best_value is None:
                best, best_value = move, exact.value(child, plies, 0)
                continue
            value = exact.value(child, plies, 0, alpha=best_value)  # a bound when no better
            if value > best_value:
                best, best_value = move, value
        self.last_iterations = 0
        return best

    def leaf_rewards(
        self, deal: Deal, table: int, plies_left: int, valuer: MoveValuer
    ) -> list[float]:
        """``mix`` times the value plus ``1 - mix`` times the rollout's result, while the stock
        lasts; in the last round the rollout's, or the exact solver's value."""
        if not deal.stock and self._exact is not None:
            exact = self._exact.value(deal, NUM_CARDS, 0) / (POINT * self.reward_scale)
            return [exact, -exact]
        if not deal.stock or self.mix == 0.0:
            return super().leaf_rewards(deal, table, plies_left, valuer)
        value = self.value(deal) / self.reward_scale
        if deal.current_player != 0:
            value = -value
        if self.mix < 1.0:
            self._rollout(deal, table, plies_left, self._random, valuer)
            value = self.mix * value + (1.0 - self.mix) * side_rewards(deal, self.reward_scale)[0]
        return [value, -value]
