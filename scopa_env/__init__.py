"""scopa-env: the Italian capture card game Scopa as a reinforcement-learning environment.

Importing the package registers its environments with the libraries' registries:
``pettingzoo.make("aec", "scopa/scopa-v0")`` and ``"scopa/scopone-v0"`` (PettingZoo 1.27 and
later; earlier releases have no registry, so build them with ``scopa_v0.env()`` there).
"""

import pettingzoo

from scopa_env import scopa_v0, scopone_v0
from scopa_env.cards import card_name, parse_card
from scopa_env.engine import Deal, IllegalMoveError, Match, Move
from scopa_env.rules import Rules

__all__ = [
    "Deal",
    "IllegalMoveError",
    "Match",
    "Move",
    "Rules",
    "card_name",
    "parse_card",
    "scopa_v0",
    "scopone_v0",
]
__version__ = "0.1.0"

# The membership tests keep a reload quiet.
if hasattr(pettingzoo, "aec_registry"):
    for _id, _entry_point in (
        ("scopa/scopa-v0", "scopa_env.scopa_v0:env"),
        ("scopa/scopone-v0", "scopa_env.scopone_v0:env"),
    ):
        if _id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", _id, entry_point=_entry_point)
