"""Regenerate ``scopa_moves.npz``: the moves the players made on two-player Scopa observations.

Written once from the players as they were before they learned the tables of more seats
(commit d56ea79); ``tests/test_agents.py`` holds today's players to the same moves. Run from
the repository root: ``python tests/data/make_scopa_moves.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents import GreedyAgent, HeuristicAgent, ISMCTSAgent, RandomAgent
from scopa_env.scopa_v0 import raw_env

RULES = ("scopa", "napola", "scopa_a_quindici")
PER_RULES = 150
ISMCTS_ITERATIONS = 24


def observations(rules: str, count: int, seed: int) -> list[dict]:
    """Decision points of random games (every fifth kept), seeded."""
    rng = np.random.default_rng(seed)
    env = raw_env(rules=rules)
    found: list[dict] = []
    while len(found) < count:
        env.reset(seed=int(rng.integers(2**31)))
        while not env.terminations[env.agent_selection] and len(found) < count:
            obs = env.observe(env.agent_selection)
            if rng.random() < 0.2:
                found.append({k: np.array(v) for k, v in obs.items()})
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(rng.choice(legal)))
    return found


def moves(rules: str, found: list[dict]) -> dict[str, np.ndarray]:
    players = {
        "greedy": lambda i: GreedyAgent(rules=rules),
        "heuristic": lambda i: HeuristicAgent(rules=rules),
        "ismcts": lambda i: ISMCTSAgent(rules=rules, iterations=ISMCTS_ITERATIONS, seed=i),
        "random": lambda i: RandomAgent(seed=i),
    }
    return {
        name: np.array([make(i).act(obs) for i, obs in enumerate(found)], dtype=np.int64)
        for name, make in players.items()
    }


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    for index, rules in enumerate(RULES):
        found = observations(rules, PER_RULES, seed=index)
        arrays[f"{rules}/observation"] = np.stack([o["observation"] for o in found])
        arrays[f"{rules}/action_mask"] = np.stack([o["action_mask"] for o in found])
        for name, actions in moves(rules, found).items():
            arrays[f"{rules}/{name}"] = actions
    np.savez_compressed(Path(__file__).with_name("scopa_moves.npz"), **arrays)


if __name__ == "__main__":
    main()
