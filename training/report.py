"""What a finished run leaves for people: the learning curve, the report and the exported agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.records import atomic_path, copy_file, read_csv, write_text
from scopa_env.rules import describe_rules
from training.checkpoint_eval import eval_table
from training.checkpoints import RunState
from training.config import TrainConfig


def plot_learning_curve(run_dir: Path) -> None:
    """Points per deal against each evaluation opponent over training, with 95% bands.

    The evaluation at step 0 (the warm start's clone, or the random network) is the starting
    point every later one is read against: it is drawn as a larger marker and named in the
    legend; ``vs clone`` is the head-to-head against that starting point itself. A run without
    periodic evaluations (``eval.every: 0``) has no curve, and an earlier one is removed.
    """
    curve = run_dir / "learning_curve.png"
    rows = read_csv(run_dir / "evals.csv")
    if not rows:
        curve.unlink(missing_ok=True)
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        mine = [r for r in rows if r["opponent"] == opponent]
        x = np.array([int(r["timesteps"]) for r in mine])
        y = np.array([float(r["points_per_deal"]) for r in mine])
        lo = np.array([float(r["ci_low"]) for r in mine])
        hi = np.array([float(r["ci_high"]) for r in mine])
        (line,) = ax.plot(x, y, marker="o", markersize=3, label=f"vs {opponent}")
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
        start = x == 0
        ax.plot(
            x[start],
            y[start],
            marker="D",
            markersize=7,
            linestyle="none",
            color=line.get_color(),
        )
    if any(int(r["timesteps"]) == 0 for r in rows):
        ax.plot(
            [],
            [],
            marker="D",
            markersize=7,
            linestyle="none",
            color="grey",
            label="start (before PPO)",
        )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("environment steps (learner decisions)")
    ax.set_ylabel("points per deal (duplicate deals)")
    ax.set_title(f"Learning curve: {run_dir.name}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    with atomic_path(curve) as tmp:
        fig.savefig(tmp)
    plt.close(fig)


def write_report(
    run_dir: Path,
    config: TrainConfig,
    timesteps: int,
    state: RunState,
    evaluated: str,
    final_eval: list[dict[str, Any]],
    table: str,
    stopped: str | None = None,
) -> None:
    """``report.md``; ``stopped`` (why and where a stopped run stopped) marks it partial.

    A partial report's first lines say so, and it shows the last periodic evaluation in place
    of the final one; the run, resumed and finished, writes the whole report over it.
    """
    meta = json.loads((run_dir / "meta.json").read_text())
    steps_per_s = state.learn_steps / max(state.learn_s, 1e-9)
    env_share = state.env_s / max(state.learn_s, 1e-9)
    opp_share = state.opponent_s / max(state.learn_s, 1e-9)
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    best = (
        f"update {state.best_update} ({state.best_score:+.3f} points per deal vs "
        f"{config.eval.best_against} in periodic evaluation), `best.zip`"
        if state.best_score is not None
        else "none (no periodic evaluation)"
    )
    warm = "none (PPO from a random network)"
    if state.warm_start and config.warm_start.init_from:
        warm = f"started from `{config.warm_start.init_from}` (no cloning in this run)"
    elif state.warm_start:
        warm = (
            f"behaviour cloning of `{config.warm_start.teacher}` on "
            f"{int(state.warm_start['samples']):,} decisions, "
            f"{100 * state.warm_start['accuracy']:.1f}% agreement, "
            f"{state.warm_start['seconds'] / 60:.1f} min"
        )
        if config.warm_start.finetune_from:
            warm += f", fine-tuning `{config.warm_start.finetune_from}`"
    if state.warm_start and "critic_ev" in state.warm_start:
        warm += (
            f"; then the oracle critic fitted alone on {int(state.warm_start['critic_samples']):,}"
            f" decisions of its play ({100 * state.warm_start['critic_ev']:.1f}% of their returns'"
            f" variance, {state.warm_start['critic_seconds'] / 60:.1f} min)"
        )
    warm_s = state.warm_start["seconds"] if state.warm_start else 0.0
    baseline = ""
    if config.selfplay.baseline is not None:
        baseline = (
            f", minus the points of the deal baseline (`{config.selfplay.baseline}`, "
            f"{config.selfplay.baseline_play}) on the same deck, seats and opponent"
        )
    curve = "![learning curve](learning_curve.png)"
    if not (run_dir / "learning_curve.png").exists():
        curve = (
            "None: this run has no periodic evaluation (`eval.every: 0`)."
            if config.eval.every == 0
            else "None yet: no periodic evaluation has finished."
        )
    title = f"# Training run `{run_dir.name}`"
    evaluation = f"## Final evaluation of `{evaluated}` (duplicate deals, seed {config.eval.seed})"
    final = "`final.zip`"
    if stopped is not None:
        title = (
            f"# PARTIAL: training run `{run_dir.name}` stopped before its end\n\n"
            f"**Partial report**: {stopped}. The finished run replaces this report."
        )
        evaluation = f"## Last periodic evaluation: {evaluated} (duplicate deals)"
        final = "none yet"
    text = f"""{title}

| | |
| --- | --- |
| config | `{config.name}` (`config.yaml` beside this report) |
| seed | {config.seed} |
| rules | {describe_rules(config.resolved_rules())} |
| episode / reward | {config.episode} / {config.reward}{baseline} |
| environment steps | {timesteps:,} ({state.updates} PPO updates of {config.rollout_size:,} steps) |
| wall time | {(state.wall_s + state.eval_s) / 60:.1f} min: warm start {warm_s / 60:.1f}, \
training {state.learn_s / 60:.1f}, \
periodic evaluation and checkpoints {(state.wall_s - state.learn_s - warm_s) / 60:.1f}, \
final evaluation {state.eval_s / 60:.1f} |
| CPU time | {state.cpu_s / 60:.1f} min (the wall time on an otherwise idle CPU) |
| throughput | {steps_per_s:,.0f} environment steps/s including learning |
| time in the environment | {100 * env_share:.1f}% (opponent moves {100 * opp_share:.1f}%) |
| warm start | {warm} |
| best checkpoint | {best} |
| final checkpoint | {final} |
| libraries | {versions} |

{evaluation}

{table}

Points per deal are the learner's points minus the opponent's, averaged over every deal of
each duplicate pair; the interval is a 95% confidence interval over the pairs.

## Learning curve

{curve}
"""
    write_text(run_dir / "report.md", text)


def write_partial_report(
    run_dir: Path, config: TrainConfig, timesteps: int, state: RunState, stopped: str
) -> None:
    """The report of a run stopped by Ctrl-C or SIGTERM: what it has, marked partial.

    Its table is the last periodic evaluation in ``evals.csv`` (none before the first).
    """
    rows = read_csv(run_dir / "evals.csv")
    last: list[dict[str, Any]] = (
        [r for r in rows if r["update"] == rows[-1]["update"]] if rows else []
    )
    numbers = ("points_per_deal", "ci_low", "ci_high")
    last = [{**r, **{k: float(r[k]) for k in numbers}} for r in last]
    evaluated = (
        f"update {last[0]['update']}, {int(last[0]['timesteps']):,} steps" if last else "none yet"
    )
    table = eval_table(last) if last else "(no periodic evaluation yet)"
    plot_learning_curve(run_dir)
    write_report(run_dir, config, timesteps, state, evaluated, [], table, stopped=stopped)


def export_agent(
    run_dir: Path,
    checkpoint: Path,
    dest: Path,
    config: TrainConfig,
    timesteps: int,
    state: RunState,
) -> None:
    """Ship a checkpoint as an agent folder: ``model.zip`` plus what produced it and its scores."""
    dest.mkdir(parents=True, exist_ok=True)
    copy_file(checkpoint, dest / "model.zip")
    meta = json.loads((run_dir / "meta.json").read_text())
    rows = read_csv(run_dir / "final_eval.csv")
    card = {
        "checkpoint": "model.zip",
        "trained_from": run_dir.name,
        "selected": checkpoint.name,
        "seed": config.seed,
        "timesteps": timesteps,
        "updates": state.updates,
        "wall_time_min": round((state.wall_s + state.eval_s) / 60, 1),
        "training_time_min": round(state.learn_s / 60, 1),
        "steps_per_second": round(state.learn_steps / max(state.learn_s, 1e-9)),
        "versions": meta["versions"],
        "config": config.model_dump(mode="json"),
        "evaluation": rows,
    }
    write_text(dest / "model.json", json.dumps(card, indent=2) + "\n")
    copy_file(run_dir / "report.md", dest / "README.md")
    if (run_dir / "learning_curve.png").exists():
        copy_file(run_dir / "learning_curve.png", dest / "learning_curve.png")
    else:
        (dest / "learning_curve.png").unlink(missing_ok=True)
