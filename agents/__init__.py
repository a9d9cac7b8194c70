"""Players for Scopa: baselines and learned agents.

Every player has ``act(observation) -> int`` on ``scopa_v0``'s observation dict and an optional
``reset(seed=None)`` at the start of a match; ``make_agent`` builds one by name or checkpoint path.

The rule players (random, greedy, heuristic, ismcts) play every table (``scopa_env.tables``):
they read the table from the observation's layout and value cards by their side's interest, a
partner's captures as their own and any opponent's sweep against them (``agents.seats`` reads
every seat apart for the search player's determinizations). A learned policy plays the table
whose observations it was trained on.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.alphabeta import AlphaBetaAgent
from agents.alphabeta_value import ValueAlphaBetaAgent
from agents.base import Agent, RuleAgent, reset_agent
from agents.greedy import GreedyAgent
from agents.guided import GuidedAgent
from agents.heuristic import HeuristicAgent
from agents.ismcts import ISMCTSAgent
from agents.ismcts_alphabeta import AlphaBetaISMCTSAgent
from agents.ismcts_prior import PriorISMCTSAgent
from agents.ismcts_value import ValueISMCTSAgent
from agents.last_round import LastRoundAgent
from agents.openspiel_bot import OpenSpielISMCTSAgent
from agents.oracle import OracleAgent
from agents.policy import SHIPPED_CHECKPOINTS, PolicyAgent
from agents.random_agent import RandomAgent
from agents.rollout import RolloutAgent
from agents.seat_search import SeatSearchAgent
from agents.seat_value import PretrainedAgent, SeatValueAgent
from scopa_env.errors import CheckpointNotFoundError, PlayerError, ScopaError, UnknownPlayerError

AGENTS: dict[str, type] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "ismcts": ISMCTSAgent,
    "ismcts_prior": PriorISMCTSAgent,
    "ismcts_value": ValueISMCTSAgent,
    "ismcts_alphabeta": AlphaBetaISMCTSAgent,
    "alphabeta": AlphaBetaAgent,
    "alphabeta_value": ValueAlphaBetaAgent,
    "oracle": OracleAgent,
    "guided": GuidedAgent,
    "rollout": RolloutAgent,
    "last_round": LastRoundAgent,
    "seat_value": SeatValueAgent,
    "seat_search": SeatSearchAgent,
    "pretrained": PretrainedAgent,
    "openspiel-ismcts": OpenSpielISMCTSAgent,
}


#: Annotations whose values ``check_options`` checks, and what each accepts (never coerced).
_OPTION_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "int": ("an integer", lambda v: isinstance(v, int | np.integer) and not isinstance(v, bool)),
    "float": (
        "a number",
        lambda v: isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool),
    ),
    "bool": ("True or False", lambda v: isinstance(v, bool)),
    "str": ("a string", lambda v: isinstance(v, str)),
}


def check_options(factory: Callable[..., Any], name: str, options: dict[str, Any]) -> None:
    """Refuse options a player does not take, and values of the wrong type, naming them.

    Types come from the constructor's annotations (``int``, ``float``, ``bool``, ``str``,
    each optionally ``| None``); a string where a number is wanted is refused, not converted.
    """
    parameters = inspect.signature(factory).parameters
    accepted = [p for p in parameters if p not in ("self", "path")]
    for key, value in options.items():
        if key not in parameters or key == "path":
            raise PlayerError(f"player {name!r} has no option {key!r}; it takes {sorted(accepted)}")
        kinds = [part.strip() for part in str(parameters[key].annotation).split("|")]
        optional = "None" in kinds
        kinds = [kind for kind in kinds if kind != "None"]
        if (value is None and optional) or not kinds or any(k not in _OPTION_TYPES for k in kinds):
            continue  # None where allowed, or a type this check does not know
        if not any(_OPTION_TYPES[kind][1](value) for kind in kinds):
            wanted = " or ".join(_OPTION_TYPES[kind][0] for kind in kinds)
            raise PlayerError(
                f"player {name!r} option {key} takes {wanted + ' or None' * optional}, "
                f"got {value!r}"
            )


def make_agent(name_or_path: str | Path, **kwargs: Any) -> Agent:
    """A player by name (``random``, ``greedy``, ``heuristic``, ``ismcts``, the shipped agent
    ``pretrained``, the policy networks shipped before it ``pretrained_v5`` and
    ``pretrained_v4``, the networks of the three-, four- and six-seat tables, of Scopone and
    of Scopone scientifico ``pretrained_scopa_3``, ``pretrained_scopa_4``,
    ``pretrained_scopa_6``, ``pretrained_scopone`` and ``pretrained_scopone_scientifico``,
    ...) or
    by the path of a MaskablePPO checkpoint or of an RLlib checkpoint (``rllib:PATH``, or the
    folder, ``agents.rllib_agent``); ``kwargs`` go to its constructor (``rules``,
    ``seed`` and the player's own options). It is also the ``scopa_env.players`` entry point,
    through which environments build an opponent by name."""
    name = str(name_or_path)
    if name in AGENTS:
        check_options(AGENTS[name], name, kwargs)
        try:
            return AGENTS[name](**kwargs)
        except ValueError as error:
            if isinstance(error, ScopaError):
                raise
            raise PlayerError(f"player {name!r}: {error}") from None
    if name in SHIPPED_CHECKPOINTS:
        path = SHIPPED_CHECKPOINTS[name]
        if not path.is_file():
            raise CheckpointNotFoundError(
                f"no {name} checkpoint at {path}; train one with `scopa train` or pass the "
                "path of a checkpoint"
            )
        check_options(PolicyAgent, name, kwargs)
        return PolicyAgent(path, **kwargs)
    path = Path(name.removeprefix("rllib:"))
    if name.startswith("rllib:") or (path / "rllib_checkpoint.json").is_file():
        from agents.rllib_agent import RLlibAgent  # needs the distributed extra

        check_options(RLlibAgent, name, kwargs)
        return RLlibAgent(path, **kwargs)
    if path.suffix == ".zip" or path.is_file():
        check_options(PolicyAgent, name, kwargs)
        return PolicyAgent(path, **kwargs)
    raise UnknownPlayerError(
        f"unknown player {name!r}: use one of {sorted([*AGENTS, *SHIPPED_CHECKPOINTS])} "
        "or the path of a MaskablePPO .zip checkpoint"
    )


__all__ = [
    "AGENTS",
    "Agent",
    "AlphaBetaAgent",
    "AlphaBetaISMCTSAgent",
    "GreedyAgent",
    "GuidedAgent",
    "HeuristicAgent",
    "LastRoundAgent",
    "ISMCTSAgent",
    "OpenSpielISMCTSAgent",
    "OracleAgent",
    "PolicyAgent",
    "PretrainedAgent",
    "PriorISMCTSAgent",
    "RandomAgent",
    "RolloutAgent",
    "RuleAgent",
    "ValueAlphaBetaAgent",
    "check_options",
    "make_agent",
    "reset_agent",
]
