"""scopa-env: the Italian capture card game Scopa as a reinforcement-learning environment."""

from pettingzoo import aec_registry, register

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

# pettingzoo.make("aec", "scopa/scopa-v0") after `import scopa_env`; the guard keeps a reload quiet.
if "scopa/scopa-v0" not in aec_registry:
    register("aec", "scopa/scopa-v0", entry_point="scopa_env.scopa_v0:env")
if "scopa/scopone-v0" not in aec_registry:
    register("aec", "scopa/scopone-v0", entry_point="scopa_env.scopone_v0:env")
