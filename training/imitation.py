"""How closely a network plays a teacher's saved decisions, and what its differences cost.

A warm start saves the teacher's decisions in its run folder (``warm_start/task_*.npz``,
``training.warm_start.collect_in_tasks``): each observation, legal-action mask and the
teacher's action, and, for a search teacher, its value of every legal action in points per
deal. ``imitation`` plays a network's most likely legal action on each decision with a choice
and reports, before the stock runs out and after it (the last round, where a two-player
search's values are the exact solver's):

- agreement: the share of decisions where the network picks the teacher's action;
- regret: the mean, over the decisions whose actions the teacher valued, of its best value
  minus its value of the network's pick, in points per decision. Agreement counts every
  difference alike; regret weighs each by what the teacher's values say it costs, and does
  not count a pick among tied moves as a difference.

A uniformly random legal pick's expected figures come beside them as a yardstick
(``uniform_imitation``). Decisions no network was fitted on (the tasks of another seed) make
these held-out figures: ``scopa imitation NETWORK ... --tasks RUN/warm_start``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.layouts import layout_of
from scopa_env.errors import CheckpointError

#: The arrays every saved task holds (``values`` only for a search teacher).
ARRAYS = ("obs", "masks", "actions")
#: The phases a report splits decisions by: the stock's state at the decision.
PHASES = ("all", "stock left", "stock empty")


@dataclass(frozen=True)
class TeacherDecisions:
    """The decisions with a choice: observations, masks, the teacher's actions, and its
    values of the legal actions (NaN where it valued none) or ``None``."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    values: np.ndarray | None

    def phases(self) -> dict[str, np.ndarray]:
        """Each phase's rows; a layout with no stock (Scopone) has only ``all``."""
        rows = {"all": np.ones(len(self.actions), bool)}
        layout = layout_of(self.obs.shape[1])
        if layout.stock_scale is not None:
            empty = self.obs[:, layout.slices["stock_size"]].sum(axis=1) == 0
            rows.update({"stock left": ~empty, "stock empty": empty})
        return rows


def read_tasks(folder: Path) -> TeacherDecisions:
    """Every ``task_*.npz`` in ``folder``, keeping the decisions with more than one legal action."""
    paths = sorted(Path(folder).glob("task_*.npz"))
    if not paths:
        raise CheckpointError(f"{folder} holds no warm-start tasks (task_*.npz)")
    parts = []
    for path in paths:
        with np.load(path) as task:
            missing = [name for name in ARRAYS if name not in task]
            if missing:
                raise CheckpointError(f"{path} is not a warm-start task: no {', '.join(missing)}")
            parts.append({name: task[name] for name in (*ARRAYS, "values") if name in task})
    valued = all("values" in part for part in parts)
    columns = {name: np.concatenate([part[name] for part in parts]) for name in ARRAYS}
    choice = columns["masks"].sum(axis=1) > 1
    values = np.concatenate([part["values"] for part in parts])[choice] if valued else None
    return TeacherDecisions(
        columns["obs"][choice], columns["masks"][choice], columns["actions"][choice], values
    )


def regrets(decisions: TeacherDecisions, picks: np.ndarray) -> np.ndarray:
    """Per decision, the teacher's best value minus its value of ``picks``; NaN where the teacher
    valued fewer than two actions (or no values were saved)."""
    n = len(picks)
    if decisions.values is None:
        return np.full(n, np.nan)
    values = decisions.values
    rows = (~np.isnan(values)).sum(axis=1) > 1
    best = np.where(np.isnan(values), -np.inf, values).max(axis=1)
    regret = best - values[np.arange(n), picks]
    return np.where(rows, regret, np.nan)


def imitation(decisions: TeacherDecisions, logits: np.ndarray) -> list[dict[str, float | str]]:
    """One row per phase: decisions, agreement and mean regret (each with its 95% interval's
    half-width, ``*_ci``) of the argmax of ``logits`` over each decision's legal actions."""
    picks = np.where(decisions.masks, logits, -np.inf).argmax(axis=1)
    agree = (picks == decisions.actions).astype(float)
    return _by_phase(decisions, agree, regrets(decisions, picks))


def uniform_imitation(decisions: TeacherDecisions) -> list[dict[str, float | str]]:
    """``imitation``'s rows for a uniformly random legal pick, in expectation: a yardstick."""
    legal = decisions.masks.sum(axis=1)
    regret = np.full(len(legal), np.nan)
    if decisions.values is not None:
        values = decisions.values
        valued = (~np.isnan(values)).sum(axis=1)
        best = np.where(np.isnan(values), -np.inf, values).max(axis=1, keepdims=True)
        gaps = np.where(np.isnan(values), 0.0, best - np.nan_to_num(values))
        every_legal = (valued == legal) & (legal > 1)
        regret[every_legal] = gaps[every_legal].sum(axis=1) / legal[every_legal]
    return _by_phase(decisions, 1.0 / legal, regret)


def _by_phase(
    decisions: TeacherDecisions, agree: np.ndarray, regret: np.ndarray
) -> list[dict[str, float | str]]:
    rows: list[dict[str, float | str]] = []
    for phase, rows_of in decisions.phases().items():
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
    """The 80 action logits of a network (``pretrained``, ``pretrained_v4`` or a checkpoint's
    path) on each observation."""
    from agents.guided import LeafValuer, load_network

    valuer = LeafValuer(load_network(network)[1])
    return np.concatenate([valuer.logits(obs[i : i + batch]) for i in range(0, len(obs), batch)])
