"""The cards a seat cannot see, as planes: for a training critic, never for a player.

An oracle critic (asymmetric actor-critic) judges a position knowing every hand and the
stock, so its value is not mostly the luck of the cards it cannot see; the policy it trains
still reads only the seat's observation. The block is ``40 x players`` floats: the hand of
each other seat in playing order after the seat (``seat + 1``, ``seat + 2``, ...), then the
stock, one 0/1 plane of the 40 cards each (card ``c`` at index ``c``, as the observation's
planes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from gymnasium import spaces

from scopa_env.batched_tables import U64
from scopa_env.cards import NUM_CARDS

if TYPE_CHECKING:
    from scopa_env.engine import Deal

_SHIFTS = np.arange(NUM_CARDS, dtype=U64)


def hidden_size(players: int) -> int:
    """The width of the block at a table of ``players`` seats."""
    return NUM_CARDS * players


def with_hidden(space: spaces.Box, players: int) -> spaces.Box:
    """The space of an observation of ``space`` followed by the block of ``players`` seats."""
    extra = hidden_size(players)
    return spaces.Box(
        np.concatenate([space.low, np.zeros(extra, np.float32)]),
        np.concatenate([space.high, np.ones(extra, np.float32)]),
        dtype=np.float32,
    )


def hidden_planes(hands: np.ndarray, stock: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """``(n, 40 x players)`` float32 from card bitmasks: ``hands`` ``(players, n)``, ``stock``
    ``(n,)``, seen from ``seat`` ``(n,)``."""
    players, n = hands.shape
    games = np.arange(n)
    seat = np.asarray(seat, np.intp)
    others = [hands[(seat + k) % players, games] for k in range(1, players)]
    words = np.stack([*others, stock], axis=1).astype(U64)
    return ((words[:, :, None] >> _SHIFTS) & U64(1)).reshape(n, -1).astype(np.float32)


def deal_hidden(deal: Deal, seat: int) -> np.ndarray:
    """The block of one ``Deal`` seen from ``seat``, ``(40 x players,)``: the simple path,
    which the batched engine's ``hidden`` is held equal to."""
    players = len(deal.hands)
    block = np.zeros((players, NUM_CARDS), np.float32)
    for k in range(1, players):
        block[k - 1, list(deal.hands[(seat + k) % players])] = 1.0
    block[-1, list(deal.stock)] = 1.0
    return block.reshape(-1)
