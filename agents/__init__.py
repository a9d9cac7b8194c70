"""Players for Scopa: baselines and learned agents.

Every player has ``act(observation) -> int`` on ``scopa_v0``'s observation dict and an optional
``reset(seed=None)`` at the start of a match; ``make_agent`` builds one by name or checkpoint path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.alphabeta import AlphaBetaAgent
from agents.base import Agent, RuleAgent, reset_agent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.ismcts import ISMCTSAgent
from agents.policy import PRETRAINED_CHECKPOINT, PolicyAgent
from agents.random_agent import RandomAgent

AGENTS: dict[str, type] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "ismcts": ISMCTSAgent,
    "alphabeta": AlphaBetaAgent,
}


def make_agent(name_or_path: str | Path, **kwargs: Any) -> Agent:
    """A player by name (``random``, ``greedy``, ``heuristic``, ``ismcts``, ``pretrained``) or
    by the path of a MaskablePPO checkpoint; ``kwargs`` go to its constructor (``rules``,
    ``seed`` and the player's own options)."""
    name = str(name_or_path)
    if name in AGENTS:
        return AGENTS[name](**kwargs)
    if name == "pretrained":
        if not PRETRAINED_CHECKPOINT.is_file():
            raise FileNotFoundError(
                f"no pretrained checkpoint at {PRETRAINED_CHECKPOINT}; train one with "
                "`scopa train` or pass the path of a checkpoint"
            )
        return PolicyAgent(PRETRAINED_CHECKPOINT, **kwargs)
    path = Path(name)
    if path.suffix == ".zip" or path.is_file():
        return PolicyAgent(path, **kwargs)
    raise ValueError(
        f"unknown player {name!r}: use one of {sorted([*AGENTS, 'pretrained'])} "
        "or the path of a MaskablePPO .zip checkpoint"
    )


__all__ = [
    "AGENTS",
    "Agent",
    "AlphaBetaAgent",
    "GreedyAgent",
    "HeuristicAgent",
    "ISMCTSAgent",
    "PolicyAgent",
    "RandomAgent",
    "RuleAgent",
    "make_agent",
    "reset_agent",
]
