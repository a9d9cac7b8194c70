"""How closely a network plays a teacher's saved decisions, and what its differences cost.

A warm start saves the teacher's decisions in its run folder (``warm_start/task_*.npz``,
``training.warm_start.collect_in_tasks``): each observation, legal-action mask and the
teacher's action, and, for a search teacher, its value of every legal action in points per
deal. ``imitation`` plays a network's most likely legal action on each decision with a choice
and reports, before the stock runs out and after it (the last round, where a two-player
search's values are the exact solver's):

- agreement: the share of decisions where the network picks the teacher's action;
- regret: the mean, over the decisions whose every legal action the teacher valued, of its
  best value minus its value of the network's pick (``training.warm_start.search_regret``),
  in points per decision. Agreement counts every difference alike; regret weighs each by
  what the teacher's values say it costs, and does not count a pick among tied moves as a
  difference.

A uniformly random legal pick's expected figures come beside them as a yardstick
(``uniform_imitation``). Decisions no network was fitted on (the tasks of another seed) make
these held-out figures: ``scopa imitation NETWORK ... --tasks RUN/warm_start``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.layouts import layout_of
from scopa_env.errors import CheckpointError
from training.warm_start import Decisions, read_decisions, search_regret


def read_tasks(*folders: Path, choices_only: bool = True) -> Decisions:
    """Every ``task_*.npz`` in the folders, in order, keeping the decisions with more than one
    legal action (all of them without ``choices_only``: a game's history needs its forced
    moves too, ``training.seat_value.round_plays``)."""
    paths = []
    for folder in folders:
        found = sorted(Path(folder).glob("task_*.npz"))
        if not found:
            raise CheckpointError(f"{folder} holds no warm-start tasks (task_*.npz)")
        paths += found
    decisions = read_decisions(paths)
    if not choices_only:
        return decisions
    choice = decisions.masks.sum(axis=1) > 1
    return Decisions._make(None if column is None else column[choice] for column in decisions)


def phases(decisions: Decisions) -> dict[str, np.ndarray]:
    """Each phase's rows: all, and before and after the stock runs out where the layout has a
    stock (Scopone's has none)."""
    rows = {"all": np.ones(len(decisions.actions), bool)}
    layout = layout_of(decisions.obs.shape[1])
    if layout.stock_scale is not None:
        empty = decisions.obs[:, layout.slices["stock_size"]].sum(axis=1) == 0
        rows.update({"stock left": ~empty, "stock empty": empty})
    return rows


def imitation(decisions: Decisions, logits: np.ndarray) -> list[dict[str, float | str]]:
    """One row per phase: decisions, agreement and mean regret (each with its 95% interval's
    half-width, ``*_ci``) of the argmax of ``logits`` over each decision's legal actions."""
    picks = np.where(decisions.masks, logits, -np.inf).argmax(axis=1)
    agree = (picks == decisions.actions).astype(float)
    regret = np.where(
        _valued(decisions), search_regret(decisions)[np.arange(len(picks)), picks], np.nan
    )
    return _by_phase(decisions, agree, regret)


def uniform_imitation(decisions: Decisions) -> list[dict[str, float | str]]:
    """``imitation``'s rows for a uniformly random legal pick, in expectation: a yardstick."""
    legal = decisions.masks.sum(axis=1)
    regret = np.where(_valued(decisions), search_regret(decisions).sum(axis=1) / legal, np.nan)
    return _by_phase(decisions, 1.0 / legal, regret)


def _valued(decisions: Decisions) -> np.ndarray:
    """The decisions whose every legal action the teacher valued."""
    if decisions.values is None:
        return np.zeros(len(decisions.actions), bool)
    return ((~np.isnan(decisions.values)) == decisions.masks).all(axis=1)


def _by_phase(
    decisions: Decisions, agree: np.ndarray, regret: np.ndarray
) -> list[dict[str, float | str]]:
    rows: list[dict[str, float | str]] = []
    for phase, rows_of in phases(decisions).items():
        valued = rows_of & ~np.isnan(regret)
        agreement, agreement_ci = _mean_and_interval(agree[rows_of])
        mean_regret, regret_ci = _mean_and_interval(regret[valued])
        rows.append(
            {
                "phase": phase,
                "decisions": int(rows_of.sum()),
                "agreement": agreement,
                "agreement_ci": agreement_ci,
                "valued": int(valued.sum()),
                "regret": mean_regret,
                "regret_ci": regret_ci,
            }
        )
    return rows


def _mean_and_interval(samples: np.ndarray) -> tuple[float, float]:
    """The mean and its 95% interval's half-width (normal approximation); NaN for none."""
    if not len(samples):
        return float("nan"), float("nan")
    return float(samples.mean()), float(1.96 * samples.std() / np.sqrt(len(samples)))


def network_logits(network: str, obs: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The 80 action logits of a network (``pretrained_v5``, ``pretrained_v4`` or a checkpoint's
    path) on each observation."""
    from agents.guided import LeafValuer, load_network

    valuer = LeafValuer(load_network(network)[1])
    return np.concatenate([valuer.logits(obs[i : i + batch]) for i in range(0, len(obs), batch)])
