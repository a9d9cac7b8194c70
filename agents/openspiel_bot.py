"""OpenSpiel's ISMCTS (``open_spiel.python.algorithms.ismcts``) as a player of the harness.

The player knows only its observation, while OpenSpiel's bots search from a state of a game.
So each decision rebuilds a state of ``python_scopa`` (``scopa_env.integrations.openspiel``)
consistent with the observation: decode it (``InfoState``), deal the cards the player has not
seen at random (``Determinizer``, the player in seat 0), start a state at that position
(``ScopaGame.new_state_at``) and replay a capture being chosen. ``ISMCTSBot`` then searches it,
drawing a fresh deal for every simulation through the game's ``resample_from_infostate`` (from a
seeded sampler, so games are reproducible), with OpenSpiel's random rollouts to the end of the
deal. Scores are the deal's point difference, as for the project's ``ismcts``.

Two-player Scopa only (the determinizer deals two-player positions; another table's observation
is a ``PlayerError``). Needs ``open-spiel`` (the ``bench`` extra), imported when the player is
built.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Observation, check_action
from agents.determinize import Determinizer
from agents.seats import SeatView
from scopa_env.actions import PICK_OFFSET
from scopa_env.cards import cards_of
from scopa_env.players import check_seats
from scopa_env.rules import Rules, resolve_rules


class OpenSpielISMCTSAgent:
    """Plays the move of OpenSpiel's ``ISMCTSBot`` (most visited root action).

    Args:
        rules: the rules (a ``Rules``, preset name or option dict).
        simulations: ISMCTS simulations per decision (a capture pick is a decision too).
        uct_c: the UCT exploration constant, in points of deal difference.
        rollouts: random rollouts per leaf.
        seed: seed of the player's randomness (deals, rollouts, choices).
    """

    name = "openspiel-ismcts"
    two_player_only = "its OpenSpiel game seats two players"

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        simulations: int = 40,
        uct_c: float = 4.0,
        rollouts: int = 1,
        seed: int | None = None,
    ) -> None:
        import pyspiel

        from scopa_env.integrations import openspiel

        if simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {simulations}")
        self.rules = resolve_rules(rules)
        self.game = pyspiel.load_game(openspiel.GAME_NAME, openspiel.game_parameters(self.rules))
        self.simulations = simulations
        self.uct_c = uct_c
        self.rollouts = rollouts
        self._seed(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new match; a seed makes the player's own randomness reproducible."""
        if seed is not None:
            self._seed(seed)

    def _seed(self, seed: int | None) -> None:
        import pyspiel
        from open_spiel.python.algorithms import ismcts, mcts

        self.rng = np.random.default_rng(seed)
        bot_seed, sampler_seed = (int(s) for s in self.rng.integers(2**31, size=2))
        random_state = np.random.RandomState(bot_seed)
        sampler = pyspiel.UniformProbabilitySampler(sampler_seed, 0.0, 1.0)
        evaluator = mcts.RandomRolloutEvaluator(self.rollouts, random_state)
        self.bot = ismcts.ISMCTSBot(
            self.game,
            evaluator,
            self.uct_c,
            self.simulations,
            random_state=random_state,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        )
        self.bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))

    def state(self, view: SeatView) -> Any:
        """A ``python_scopa`` state consistent with what the player knows (the player: 0)."""
        info = view.info
        state = self.game.new_state_at(Determinizer(view, self.rules).sample(self.rng))
        if info.pending is not None:
            state.apply_action(info.pending)
            for card in cards_of(info.picked):
                state.apply_action(PICK_OFFSET + card)
        return state

    def act(self, observation: Observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        view = SeatView.from_observation(observation["observation"])
        check_seats(self, view.table.players)
        action = int(self.bot.step(self.state(view)))
        check_action(observation, action, self.rules)
        return action

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(rules={self.rules}, simulations={self.simulations}, "
            f"uct_c={self.uct_c}, rollouts={self.rollouts})"
        )
