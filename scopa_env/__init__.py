"""scopa-env: the Italian capture card game Scopa as a reinforcement-learning environment.

Importing the package registers its environments with the libraries' registries:
``pettingzoo.make("aec", "scopa/scopa-v0")`` and ``"scopa/scopone-v0"`` (PettingZoo 1.27 and
later; earlier releases have no registry, so build them with ``scopa_v0.env()`` there), and
``gymnasium.make("scopa_env/Scopa-v0", opponent="greedy")`` (``single_agent.ScopaSingleAgentEnv``)
with ``gymnasium.make_vec("scopa_env/Scopa-v0", num_envs)`` (``vector_env.ScopaVectorEnv``, the
batched engine; ``vectorization_mode="sync"`` instead vectorizes the single-agent environment).
"""

import gymnasium
import pettingzoo

from scopa_env import scopa_v0, scopone_v0
from scopa_env.cards import card_name, parse_card
from scopa_env.engine import Deal, IllegalMoveError, Match, Move
from scopa_env.errors import ScopaError
from scopa_env.rules import Rules

__all__ = [
    "Deal",
    "IllegalMoveError",
    "Match",
    "Move",
    "Rules",
    "ScopaError",
    "card_name",
    "parse_card",
    "scopa_v0",
    "scopone_v0",
]
__version__ = "0.1.0"

# The membership tests keep a reload quiet.
if "scopa_env/Scopa-v0" not in gymnasium.registry:
    gymnasium.register(
        "scopa_env/Scopa-v0",
        entry_point="scopa_env.single_agent:ScopaSingleAgentEnv",
        vector_entry_point="scopa_env.vector_env:ScopaVectorEnv",
    )
if hasattr(pettingzoo, "aec_registry"):
    for _id, _entry_point in (
        ("scopa/scopa-v0", "scopa_env.scopa_v0:env"),
        ("scopa/scopone-v0", "scopa_env.scopone_v0:env"),
    ):
        if _id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", _id, entry_point=_entry_point)
