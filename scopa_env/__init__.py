"""scopa-env: the Italian capture card game Scopa as a reinforcement-learning environment."""

from scopa_env.cards import card_name, parse_card
from scopa_env.engine import Deal, IllegalMoveError, Match, Move
from scopa_env.rules import Rules

__all__ = ["Deal", "IllegalMoveError", "Match", "Move", "Rules", "card_name", "parse_card"]
__version__ = "0.1.0"
