"""Fit ``agents.seat_value.SeatValue`` to a search's values of the moves before the last round.

The decisions are a warm start's, saved with the search's value of each legal action
(``training.warm_start``); with ``warm_start.rollin`` they are those of positions the network's
own play reached (DAgger). ``seat_afterstates`` turns each decision before the last round of a
two-player deal into the positions its moves leave, as the mover sees them, each followed by
the opponent's plays this round (``round_plays``); the fit, its loss and the regret are
``training.last_round``'s.
"""

from __future__ import annotations

import copy
from collections import deque

import numpy as np

from agents.inference import PlayTracker, follows
from agents.last_round import in_last_round
from agents.seat_value import NO_PLAYS, PLAY_FIELDS, SEAT_FIELDS, play_fields, seat_rows
from scopa_env.info_state import InfoState
from scopa_env.observation import OBS_SIZE
from scopa_env.rules import Rules
from training.last_round import Afterstate, Afterstates, afterstates_of
from training.warm_start import Decisions

#: How many rows back ``round_plays`` looks for a decision's previous one: more than the
#: environments a warm-start task steps together (``selfplay.groups``, 8 by default).
WINDOW = 64


def seat_moves(info: InfoState, obs: np.ndarray, rules: Rules) -> list[Afterstate] | None:
    """The moves of a two-player decision before the last round as ``seat_rows`` rows (no move
    there ends the deal), without the plays."""
    if in_last_round(info, obs) or obs.shape[-1] != OBS_SIZE:
        return None
    moves, rows = seat_rows(info, obs, rules, ())
    return [(move, row, np.nan) for move, row in zip(moves, rows, strict=True)]


def round_plays(obs: np.ndarray, window: int = WINDOW) -> list[tuple[int, ...]]:
    """Per decision, the opponent's plays this round as ``play_fields``.

    A warm start saves its decisions step by step, the games it plays side by side
    interleaved (``warm_start.collect``), so a decision's previous one in its game is the
    nearest row before it, within ``window``, that it continues (``agents.inference.follows``:
    a two-player observation continues only one of its own deal). A decision with none starts
    a deal, or its history is unknown and its plays are read as none.
    """
    recent: deque[tuple[InfoState, PlayTracker]] = deque(maxlen=window)
    out: list[tuple[int, ...]] = []
    for vector in obs:
        if vector.shape[-1] != OBS_SIZE:
            out.append(NO_PLAYS)
            continue
        info = InfoState.from_observation(vector)
        tracker = next(
            (copy.copy(t) for last, t in reversed(recent) if follows(last, info)), PlayTracker()
        )
        tracker.observe(info)
        recent.append((info, tracker))
        out.append(play_fields(tracker.this_round(info)))
    return out


def seat_afterstates(decisions: Decisions, rules: Rules) -> Afterstates:
    """The decisions before the last round of two-player deals with a choice, every legal
    action of which the search valued, with the opponent's plays this round."""
    return afterstates_of(
        decisions, rules, seat_moves, SEAT_FIELDS + PLAY_FIELDS, round_plays(decisions.obs)
    )
