"""The player interface shared by every agent, and the base class of the rule-based ones.

A player maps ``scopa_v0``'s observation dict (``"observation"``: float32 vector,
``"action_mask"``: int8 over the 80 actions) to a legal action. Actions 0..39 play that card;
40..79 pick table card ``a - 40`` while choosing among several legal captures. Players are
stateless between steps (a player rebuilds what it knows from each observation), so any player
can take either seat in any environment and be evaluated on duplicate deals.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scopa_env.cards import card_name
from scopa_env.engine import MaskMove
from scopa_env.info_state import InfoState
from scopa_env.players import Observation, check_seats
from scopa_env.players import Player as Agent
from scopa_env.rules import Rules, resolve_rules


def reset_agent(agent: Agent, seed: int | None = None) -> None:
    """Call an agent's optional ``reset(seed=...)`` before a match (or a single-deal game)."""
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset(seed=seed)


class RuleAgent:
    """Base of the players that choose whole moves from the rules.

    Subclasses implement ``choose(info, moves)``, picking one ``(card, capture mask)`` among the
    legal moves of the information state. In the pick phase the moves are the pending card's
    captures consistent with what is already picked, so a player finishes the capture it meant
    (or the best one still open) and ``act`` emits one table card of it.
    """

    name = "rule"
    #: Why the player plays two-player Scopa only (``check_seats``); ``None``: every table.
    two_player_only: str | None = None

    def __init__(self, rules: Rules | str | dict[str, Any] | None = None, seed: int | None = None):
        self.rules = resolve_rules(rules)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new match; a seed makes the player's own randomness reproducible."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def choose(self, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        raise NotImplementedError

    def choose_seen(self, vector: np.ndarray, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        """``choose``, with the observation vector at hand for players that read every seat
        apart (``agents.seats.SeatView``); the others need only the ``InfoState``."""
        return self.choose(info, moves)

    def observe(self, info: InfoState) -> None:
        """Sees every observation ``act`` is given, forced moves included; players that follow
        the deal (``agents.inference``) override it."""

    def act(self, observation: Observation) -> int:
        vector = observation["observation"]
        info = InfoState.from_observation(vector)
        check_seats(self, info.seats)
        self.observe(info)
        moves = info.legal_moves(self.rules)
        if not moves:
            raise ValueError("no legal move in this observation: is the deal over?")
        move = self.choose_seen(vector, info, moves) if len(moves) > 1 else moves[0]
        action = info.action(move)
        check_action(observation, action, self.rules)
        return action

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, by ``act`` on each; lets any rule player oppose a batch of games."""
        return np.fromiter(
            (
                self.act({"observation": obs, "action_mask": mask})
                for obs, mask in zip(observations, masks, strict=True)
            ),
            dtype=np.int64,
            count=len(masks),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rules={self.rules})"


def check_action(observation: Observation, action: int, rules: Rules) -> None:
    """Raise a clear error if the environment's mask forbids an action the player derived.

    That only happens when the player was built with other rules than the environment's.
    """
    mask = observation.get("action_mask")
    if mask is not None and not mask[action]:
        raise ValueError(
            f"action {action} ({card_name(action % 40)}) is not legal here; legal actions are "
            f"{np.flatnonzero(mask).tolist()}. Was the player built with the environment's "
            f"rules? It has {rules}"
        )
