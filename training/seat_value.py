"""Fit ``agents.seat_value.SeatValue`` to a search's values of the moves before the last round.

The decisions are a warm start's, saved with the search's value of each legal action
(``training.warm_start``); with ``warm_start.rollin`` they are those of positions the network's
own play reached (DAgger). ``seat_afterstates`` turns each decision before the last round of a
two-player deal into the positions its moves leave, as the mover sees them; the fit, its loss
and the regret are ``training.last_round``'s.
"""

from __future__ import annotations

import numpy as np

from agents.last_round import in_last_round
from agents.seat_value import SEAT_FIELDS, seat_rows
from scopa_env.info_state import InfoState
from scopa_env.observation import OBS_SIZE
from scopa_env.rules import Rules
from training.last_round import Afterstate, Afterstates, afterstates_of
from training.warm_start import Decisions


def seat_moves(info: InfoState, obs: np.ndarray, rules: Rules) -> list[Afterstate] | None:
    """The moves of a two-player decision before the last round as ``seat_rows`` rows (no move
    there ends the deal)."""
    if in_last_round(info, obs) or obs.shape[-1] != OBS_SIZE:
        return None
    moves, rows = seat_rows(info, obs, rules)
    return [(move, row, np.nan) for move, row in zip(moves, rows, strict=True)]


def seat_afterstates(decisions: Decisions, rules: Rules) -> Afterstates:
    """The decisions before the last round of two-player deals with a choice, every legal
    action of which the search valued."""
    return afterstates_of(decisions, rules, seat_moves, SEAT_FIELDS)
