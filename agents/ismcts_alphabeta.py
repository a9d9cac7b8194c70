"""Two searches of one decision, added: ISMCTS's mean reward and ``alphabeta_value``'s value.

``ISMCTSAgent`` ranks its root moves by their mean reward from greedy playouts, at each round of
sequential halving and at the end. ``alphabeta_value`` values the same moves by minimax over
three plies of 128 sampled deals, its leaves judged by the learnt ``DealValue`` and material.
The two err differently (playouts by a weak player to the end of the deal; a short horizon and
a learnt judge), so this player credits each root move with ``mix`` times ``alphabeta_value``'s
estimate, in points, on top of ISMCTS's mean (as ``agents.ismcts_prior`` credits a network's
prior). In the last round, where the deal is a game of perfect information,
``alphabeta_value``'s exact solution plays alone. Two-player Scopa only, as ``DealValue``.

Measured (with ``alphabeta_value``'s earlier defaults, ``blend=0.5`` without
``exact_last_round``), it is weaker than ``alphabeta_value`` alone: on 600 decks of seed 0 against
ISMCTS-300, +0.152 +- 0.116 points per deal at 28.5 ms a move, 0.094 +- 0.112 below
``alphabeta_value`` deck by deck; ``mix=3.0`` 0.091 +- 0.089 below (``docs/strength.md``).
"""

from __future__ import annotations

import numpy as np

from agents.alphabeta_value import ValueAlphaBetaAgent
from agents.ismcts import DEFAULT_ITERATIONS, ISMCTSAgent
from agents.seats import SeatView
from agents.values import CardValues
from scopa_env.engine import MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


class AlphaBetaISMCTSAgent(ISMCTSAgent):
    """Search player: ISMCTS whose root ranking adds ``alphabeta_value``'s values (module doc).

    Args: as ``ISMCTSAgent`` (``iterations``, ``exploration``, ``halving``, ...), and
        mix: the weight of ``alphabeta_value``'s estimate of a root move (points per deal)
            beside ISMCTS's mean (0: plain ISMCTS, but for the exact last round).
        samples: ``alphabeta_value``'s sampled deals a decision.
        value: ``alphabeta_value``'s ``DealValue`` network (``.npz``); the shipped one by
            default.
    """

    name = "ismcts_alphabeta"
    two_player_only = "its value network reads two-player deals"

    def __init__(
        self,
        rules: Rules | str | None = None,
        iterations: int = DEFAULT_ITERATIONS,
        mix: float = 1.0,
        samples: int = 128,
        value: str | None = None,
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
        if not mix >= 0:
            raise ValueError(f"mix weighs alphabeta_value's estimate, >= 0: got {mix}")
        self.mix = float(mix)
        self.lines = ValueAlphaBetaAgent(
            self.rules, samples=samples, value=value, seed=_lines_seed(seed), values=values
        )
        self.path = self.lines.path  # the value network it plays with (the ladder's hash)
        self._view: SeatView | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.lines.reset(_lines_seed(seed))

    def observe(self, info: InfoState) -> None:
        self.lines.observe(info)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, each row a game of its own (no history of the opponent's plays
        across rows, as ``alphabeta:infer=True``)."""
        actions = []
        for obs, mask in zip(observations, masks, strict=True):
            self.lines.tracker.reset()
            actions.append(self.act({"observation": obs, "action_mask": mask}))
        self.lines.tracker.reset()
        return np.array(actions, dtype=np.int64)

    def choose_seen(self, vector: np.ndarray, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        if self.lines.solves_exactly(info):
            return self.lines.choose_seen(vector, info, moves)
        return super().choose_seen(vector, info, moves)

    def search(self, view: SeatView, root_moves: list[MaskMove]) -> MaskMove:
        self._view = view
        try:
            return super().search(view, root_moves)
        finally:
            self._view = None

    def root_bonus(self, root_moves: list[MaskMove]) -> list[float] | None:
        """``mix`` times ``alphabeta_value``'s value of each move in points per deal, in
        ISMCTS's rewards (points over ``reward_scale``)."""
        if self._view is None or self.mix == 0:
            return None
        totals = self.lines.move_values(self._view, root_moves)
        scale = self.mix * self.lines.points_per_total(self._view.info) / self.reward_scale
        return [scale * total for total in totals]


def _lines_seed(seed: int | None) -> int | None:
    """The inner search's seed: its own stream, leaving ISMCTS's draws as they are alone."""
    return None if seed is None else int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
