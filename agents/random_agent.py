"""The random player: uniform over the legal actions of the mask, seeded."""

from __future__ import annotations

import numpy as np

from agents.base import Observation


class RandomAgent:
    """Uniform over the legal actions; needs no rules since the mask says what is legal.

    In the pick phase it picks a uniform pickable table card, so a capture among several is
    not uniform over capture sets (sets sharing cards are likelier), as for any mask-driven
    player such as a learned policy.
    """

    name = "random"

    def __init__(self, rules: object = None, seed: int | None = None) -> None:
        del rules  # accepted for a uniform constructor; the mask carries the rules
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in this observation: is the deal over?")
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One uniform legal action per row of ``masks`` ``(n, 80)``, vectorized."""
        del observations
        legal = np.asarray(masks) != 0
        if not legal.any(axis=1).all():
            raise ValueError("a row of the action masks has no legal action")
        # Uniform keys on legal actions, -1 elsewhere: the argmax is a uniform legal action.
        keys = np.where(legal, self.rng.random(legal.shape), -1.0)
        return keys.argmax(axis=1)

    def __repr__(self) -> str:
        return "RandomAgent()"
