"""The 80 actions of every Scopa environment, the batched engine and every player.

Actions ``0..39`` play that card from hand. When the card has several legal captures, the same
agent then picks table cards one at a time with actions ``PICK_OFFSET + c`` (40..79) until only
one capture remains; a card with one capture or none resolves at once.
"""

from __future__ import annotations

import operator

from scopa_env.cards import NUM_CARDS, card_name

NUM_ACTIONS = 2 * NUM_CARDS
#: Actions ``PICK_OFFSET + c`` take table card ``c`` during a capture choice.
PICK_OFFSET = NUM_CARDS


def describe_action(action: int) -> str:
    """A readable name for an action, e.g. ``"play 7D"`` or ``"take 5C"``."""
    action = operator.index(action)
    if 0 <= action < PICK_OFFSET:
        return f"play {card_name(action)}"
    if PICK_OFFSET <= action < NUM_ACTIONS:
        return f"take {card_name(action - PICK_OFFSET)}"
    raise ValueError(f"not an action: {action!r} (actions are 0..{NUM_ACTIONS - 1})")
