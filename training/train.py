"""``scopa train``: MaskablePPO self-play on the vectorized environment, from a config.

Read top to bottom: command line, then ``train`` (seeds, run folder, environment and opponent
pool, model, callbacks, learning, final evaluation, report), then the pieces it uses.

    scopa train --config configs/quick.yaml [key=value ...]   # a new run in runs/NAME-TIMESTAMP
    scopa train --resume runs/quick-20250101-120000           # continue from its last checkpoint

A run folder holds ``config.yaml`` (the resolved config), ``meta.json`` (seed, library versions,
machine), ``checkpoints/`` (resumable: model with optimizer, opponent pool, random states),
``best.zip`` (best periodic evaluation), ``final.zip``, ``evals.csv``, ``tb/`` (TensorBoard),
``report.md`` and ``learning_curve.png``.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from training.config import ConfigError, TrainConfig, dump_config, load_config
from training.rules_args import describe_rules

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

LIBRARIES = ("scopa-env", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy")
CHECKPOINTS_KEPT = 2


# Command line -------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="YAML config (see configs/)")
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, e.g. ppo.n_epochs=2"
    )
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="continue a run from its last checkpoint"
    )
    parser.add_argument("--run-dir", type=Path, help="run folder (default: runs/NAME-TIMESTAMP)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    try:
        if args.resume is not None:
            if args.config is not None:
                raise ConfigError("--resume uses the run's own config.yaml; drop --config")
            config = load_config(args.resume / "config.yaml", args.overrides)
            if args.overrides:  # e.g. a longer total_timesteps: the run folder keeps the truth
                (args.resume / "config.yaml").write_text(dump_config(config))
        else:
            if args.config is None:
                raise ConfigError("give --config configs/NAME.yaml (or --resume RUN_DIR)")
            config = load_config(args.config, args.overrides)
            if args.run_dir is not None and args.run_dir.exists():
                raise ConfigError(
                    f"run folder {args.run_dir} already exists; continue it with --resume "
                    f"{args.run_dir} or choose another --run-dir"
                )
    except ConfigError as error:
        print(f"scopa train: {error}", file=sys.stderr)
        return 2
    result = train(
        config,
        run_dir=args.resume or args.run_dir,
        resume=args.resume is not None,
        progress=not args.no_progress,
    )
    print(result.table)
    print(f"run folder: {result.run_dir}")
    return 0


# Training -----------------------------------------------------------------------------------


@dataclass
class TrainResult:
    run_dir: Path
    timesteps: int
    wall_s: float
    steps_per_s: float
    final_eval: list[dict[str, Any]] = field(default_factory=list)
    table: str = ""


def train(
    config: TrainConfig,
    run_dir: Path | str | None = None,
    resume: bool = False,
    progress: bool = True,
) -> TrainResult:
    """Train, evaluate and report one run; ``resume`` continues ``run_dir``'s last checkpoint."""
    import torch
    from sb3_contrib import MaskablePPO

    from training.selfplay import OpponentPool

    # 1. Seeds and threads: the same seed and config give the same run on the same machine.
    cpu_start = cpu_seconds()
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)

    # 2. The run folder documents itself before any training happens.
    run_dir = Path(run_dir) if run_dir else default_run_dir(config)
    if resume:
        checkpoint = latest_checkpoint(run_dir)
        if checkpoint is None and not (run_dir / "warm_start").is_dir():
            raise FileNotFoundError(f"{run_dir} has no checkpoint to resume from")
        if checkpoint is None:
            print(f"{run_dir} stopped in its warm start: starting again from the saved tasks")
    else:
        checkpoint = None
        if run_dir.exists():
            raise FileExistsError(f"run folder {run_dir} already exists: resume it or use another")
        run_dir.mkdir(parents=True)
        (run_dir / "config.yaml").write_text(dump_config(config))
        (run_dir / "meta.json").write_text(json.dumps(run_metadata(config), indent=2) + "\n")

    # 3. Environment and opponent pool. The learner plays both seats (the env alternates them).
    pool = OpponentPool(
        config.selfplay.opponents, config.selfplay.max_snapshots, seed=config.seed + 1
    )
    env = make_training_env(config, pool)

    # 4. The model: new, or the checkpoint's (weights, optimizer, counters) with its pool.
    state = RunState()
    if checkpoint is None:
        model = MaskablePPO(
            policy_class(config),
            env,
            seed=config.seed,
            device=config.device,
            tensorboard_log=str(run_dir / "tb"),
            **ppo_kwargs(config),
        )
        env.attach_policy(model.policy)
        if config.warm_start.teacher is not None:
            state.warm_start = run_warm_start(model, env, config, run_dir)
            state.wall_s += state.warm_start["seconds"]
    else:
        # The config's PPO settings win over the checkpoint's, so a resume can change them.
        settings = {k: v for k, v in ppo_kwargs(config).items() if k != "policy_kwargs"}
        model = MaskablePPO.load(
            checkpoint / "model.zip", env=env, device=config.device, **settings
        )
        state = RunState.load(checkpoint, pool)
        env.seed(config.seed + 7919 * state.updates)  # fresh deals, not a replay of the start
        print(f"resuming {run_dir} at update {state.updates} ({model.num_timesteps:,} steps)")
    env.attach_policy(model.policy)

    # 5. Callbacks do everything around PPO's updates: pool, checkpoints, evaluation, progress.
    callback = TrainingCallback(config, run_dir, pool, env, state, progress, cpu_start)

    # 6. Learn (SB3 counts from the checkpoint's num_timesteps when resuming).
    remaining = config.total_timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(
            remaining,
            callback=callback,
            reset_num_timesteps=checkpoint is None,
            tb_log_name="ppo",
        )
    callback.finish(model)
    model.save(run_dir / "final.zip")
    env.close()

    # 7. Final evaluation of the chosen checkpoint, then the report and the learning curve.
    chosen = run_dir / f"{config.eval.final_checkpoint}.zip"
    if not chosen.exists():  # no periodic evaluation ran, so there is no best.zip
        chosen = run_dir / "final.zip"
    final_eval: list[dict[str, Any]] = []
    if config.eval.final_deals:
        start = time.perf_counter()
        final_eval = evaluate_checkpoint(
            chosen,
            config,
            config.eval.final_deals,
            config.eval.final_matches,
            progress=progress,
            final=True,
        )
        state.eval_s += time.perf_counter() - start
        write_csv(run_dir / "final_eval.csv", final_eval)
    table = eval_table(final_eval)
    state.cpu_s += cpu_seconds() - callback.cpu_mark
    plot_learning_curve(run_dir)
    write_report(run_dir, config, model.num_timesteps, state, chosen.name, final_eval, table)
    if config.export_to:
        export_agent(run_dir, chosen, Path(config.export_to), config, model.num_timesteps, state)
    steps_per_s = state.learn_steps / max(state.learn_s, 1e-9)
    return TrainResult(
        run_dir, model.num_timesteps, state.wall_s + state.eval_s, steps_per_s, final_eval, table
    )


def run_warm_start(
    model: MaskablePPO, env: Any, config: TrainConfig, run_dir: Path
) -> dict[str, float]:
    """Clone the configured teacher into the fresh policy (see ``training.warm_start``)."""
    from agents import make_agent
    from training.warm_start import warm_start

    cfg = config.warm_start
    assert cfg.teacher is not None
    teacher = make_agent(
        cfg.teacher, rules=config.resolved_rules(), seed=config.seed + 3, **cfg.teacher_options
    )
    with preserved_rng():
        result = warm_start(
            model,
            env,
            teacher,
            cfg,
            seed=config.seed + 4,
            make_task=functools.partial(warm_start_task, config),
            folder=run_dir / "warm_start",
        )
    print(
        f"warm start: cloned {cfg.teacher} on {result.samples:,} decisions in "
        f"{result.seconds:.0f} s, {100 * result.accuracy:.1f}% agreement where there is a choice"
    )
    return {"samples": result.samples, "accuracy": result.accuracy, "seconds": result.seconds}


def warm_start_task(config: TrainConfig, index: int) -> tuple[Any, Any]:
    """Task ``index`` of a warm start in workers: its own environments, pool draws and teacher.

    One environment per self-play group, so each task meets as many opponents as the training
    environment does; seeds come from the run's seed and the task's index alone.
    """
    from agents import make_agent
    from training.selfplay import OpponentPool

    seed = config.seed + 100_003 * (index + 1)
    task = config.model_copy(update={"seed": seed, "n_envs": config.selfplay.groups})
    pool = OpponentPool(config.selfplay.opponents, config.selfplay.max_snapshots, seed=seed + 1)
    cfg = config.warm_start
    assert cfg.teacher is not None
    teacher = make_agent(
        cfg.teacher, rules=config.resolved_rules(), seed=seed + 3, **cfg.teacher_options
    )
    return make_training_env(task, pool), teacher


def policy_class(config: TrainConfig) -> Any:
    if config.ppo.policy == "card":
        from training.card_policy import CardPolicy

        return CardPolicy
    return "MlpPolicy"


def ppo_kwargs(config: TrainConfig) -> dict[str, Any]:
    """MaskablePPO's arguments from the config's ``ppo`` section."""
    import torch
    from stable_baselines3.common.utils import LinearSchedule

    ppo = config.ppo
    learning_rate: Any = ppo.learning_rate
    if ppo.lr_schedule == "linear":
        learning_rate = LinearSchedule(
            ppo.learning_rate, ppo.learning_rate * ppo.lr_final_fraction, 1.0
        )
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[ppo.activation]
    policy_kwargs: dict[str, Any] = {"activation_fn": activation}
    if ppo.policy == "card":
        policy_kwargs.update(card_width=ppo.card_width, global_width=ppo.global_width)
        capture_sum = config.resolved_rules().capture_sum
        if capture_sum is not None:
            # Scopa a quindici: the card network's capture facts must follow the rules' sum.
            policy_kwargs["capture_sum"] = capture_sum
        if ppo.card_lookahead:
            policy_kwargs["lookahead"] = True
    else:
        policy_kwargs["net_arch"] = list(ppo.net_arch)
    return {
        "learning_rate": learning_rate,
        "n_steps": ppo.n_steps,
        "batch_size": ppo.batch_size,
        "n_epochs": ppo.n_epochs,
        "gamma": ppo.gamma,
        "gae_lambda": ppo.gae_lambda,
        "clip_range": ppo.clip_range,
        "ent_coef": ppo.ent_coef,
        "vf_coef": ppo.vf_coef,
        "max_grad_norm": ppo.max_grad_norm,
        "target_kl": ppo.target_kl,
        "policy_kwargs": policy_kwargs,
    }


def cpu_seconds() -> float:
    """CPU time used so far by this process and its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def seed_everything(seed: int) -> None:
    """Seed the global streams; SB3 shuffles minibatches with numpy's legacy global one."""
    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002
    torch.manual_seed(seed)


def default_run_dir(config: TrainConfig) -> Path:
    if config.run_dir:
        return Path(config.run_dir)
    return Path("runs") / f"{config.name}-{datetime.now():%Y%m%d-%H%M%S}"


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def run_metadata(config: TrainConfig) -> dict[str, Any]:
    return {
        "name": config.name,
        "seed": config.seed,
        "started": datetime.now().isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "versions": library_versions(),
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
    }


# The training environment -------------------------------------------------------------------


def make_training_env(config: TrainConfig, pool: Any) -> Any:
    """The learner against the opponent pool on the batched engine, as one SB3 VecEnv."""
    from agents.greedy import GreedyAgent
    from agents.heuristic import HeuristicAgent
    from agents.random_agent import RandomAgent
    from training.selfplay import PoolVecEnv

    rules = config.resolved_rules()
    baselines = {
        "random": RandomAgent(seed=config.seed + 2),
        "greedy": GreedyAgent(rules),
        "heuristic": HeuristicAgent(rules),
    }
    return PoolVecEnv(
        config.n_envs,
        config.selfplay.groups,
        pool,
        baselines,
        rules=rules,
        episode=config.episode,
        reward=config.reward,
        seed=config.seed,
        shaping=config.shaping,
        gamma=config.ppo.gamma,
    )


# Run state, checkpoints ---------------------------------------------------------------------


@dataclass
class RunState:
    """What a checkpoint holds beside the model: counters, best score, timing."""

    updates: int = 0
    best_score: float | None = None
    best_update: int = -1
    wall_s: float = 0.0
    learn_s: float = 0.0
    learn_steps: int = 0
    env_s: float = 0.0
    opponent_s: float = 0.0
    eval_s: float = 0.0  # the final evaluation
    warm_start: dict[str, float] | None = None
    cpu_s: float = 0.0  # CPU time of this process and its children (wall time on an idle CPU)

    def save(self, folder: Path, pool: Any) -> None:
        import torch

        (folder / "state.json").write_text(json.dumps(self.__dict__, indent=2) + "\n")
        torch.save(
            {
                "pool": pool.state_dict(),
                "python": random.getstate(),
                "numpy": np.random.get_state(),  # noqa: NPY002 - SB3's minibatch shuffling
                "torch": torch.get_rng_state(),
            },
            folder / "pool_and_rng.pt",
        )

    @classmethod
    def load(cls, folder: Path, pool: Any) -> RunState:
        import torch

        state = cls(**json.loads((folder / "state.json").read_text()))
        saved = torch.load(folder / "pool_and_rng.pt", weights_only=False)
        pool.load_state_dict(saved["pool"])
        random.setstate(saved["python"])
        np.random.set_state(saved["numpy"])  # noqa: NPY002
        torch.set_rng_state(saved["torch"])
        return state


def latest_checkpoint(run_dir: Path) -> Path | None:
    folders = sorted((run_dir / "checkpoints").glob("update_*"))
    complete = [f for f in folders if (f / "done").exists()]
    return complete[-1] if complete else None


def save_checkpoint(run_dir: Path, model: MaskablePPO, state: RunState, pool: Any) -> Path:
    """Write a complete checkpoint; the ``done`` marker makes a half-written one invisible."""
    folder = run_dir / "checkpoints" / f"update_{state.updates:06d}"
    folder.mkdir(parents=True, exist_ok=True)
    model.save(folder / "model.zip")
    state.save(folder, pool)
    (folder / "done").touch()
    for old in sorted((run_dir / "checkpoints").glob("update_*"))[:-CHECKPOINTS_KEPT]:
        shutil.rmtree(old)
    return folder


# Callbacks ----------------------------------------------------------------------------------


def _base_callback() -> type:
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class TrainingCallback(_base_callback()):  # type: ignore[misc]
    """Runs between PPO updates: snapshots, opponent draws, checkpoints, evaluation, logging.

    SB3 calls ``_on_rollout_start`` right after each update (and before the first rollout), the
    one moment when the weights are stable, so everything that reads them happens there.
    """

    def __init__(
        self,
        config: TrainConfig,
        run_dir: Path,
        pool: Any,
        env: Any,
        state: RunState,
        progress: bool,
        cpu_mark: float,
    ) -> None:
        super().__init__()
        self.config = config
        self.run_dir = run_dir
        self.pool = pool
        self.pool_env = env
        self.state = state
        self.progress = progress
        self.bar: Any = None
        self.started = False
        self.clock = time.perf_counter()
        self.cpu_mark = cpu_mark

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.bar = tqdm(
            total=self.config.total_timesteps,
            initial=self.model.num_timesteps,
            unit="step",
            unit_scale=True,
            dynamic_ncols=True,
            disable=not self.progress,
            desc=self.config.name,
        )
        self.pool_env.take_timers()  # drop what the warm start's games left in the counters
        self.pool_env.take_results()
        fresh = latest_checkpoint(self.run_dir) is None
        if self.state.warm_start and self.model.num_timesteps == 0 and fresh:
            self.logger.record("warm_start/accuracy", self.state.warm_start["accuracy"])
            self.logger.record("warm_start/seconds", self.state.warm_start["seconds"])
            self.logger.dump(0)
            # The clone is a candidate for the best checkpoint, and a resume starts from it.
            if self.config.eval.every:
                self._evaluate()
            self._checkpoint()
        self.clock = time.perf_counter()

    def _on_rollout_start(self) -> None:
        now = time.perf_counter()
        if self.started:  # an update just finished
            self.state.updates += 1
            self._account(now)
            self._between_updates()
        self.started = True
        self.pool_env.draw_opponents()

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return True

    def _account(self, now: float) -> None:
        """Timing of the last rollout+update, and throughput to TensorBoard."""
        elapsed = now - self.clock
        self.clock = now
        cpu = cpu_seconds()
        self.state.cpu_s += cpu - self.cpu_mark
        self.cpu_mark = cpu
        self.state.wall_s += elapsed
        self.state.learn_s += elapsed
        self.state.learn_steps += self.config.rollout_size
        env_s, opp_s = self.pool_env.take_timers()
        self.state.env_s += env_s
        self.state.opponent_s += opp_s
        for kind, (mean, count) in self.pool_env.take_results().items():
            self.logger.record(f"pool/points_per_episode_vs_{kind}", mean)
            self.logger.record(f"pool/episodes_vs_{kind}", count)
        self.logger.record("time/steps_per_second", self.config.rollout_size / elapsed)
        self.logger.record("time/env_share", env_s / elapsed)
        self.logger.record("time/opponent_share", opp_s / elapsed)
        self.logger.dump(self.model.num_timesteps)

    def _between_updates(self) -> None:
        cfg, updates = self.config, self.state.updates
        if updates % cfg.selfplay.snapshot_every == 0:
            self.pool.add_snapshot(updates, self.model.policy.state_dict())
        if cfg.eval.every and updates % cfg.eval.every == 0:
            self._evaluate()
        if updates % cfg.checkpoint_every == 0:
            self._checkpoint()

    def _evaluate(self) -> None:
        """Periodic evaluation; it never touches the training random streams."""
        start = time.perf_counter()
        path = self.run_dir / "eval_model.zip"
        self.model.save(path)
        with preserved_rng():
            rows = evaluate_checkpoint(path, self.config, self.config.eval.deals)
        for row in rows:
            row.update(update=self.state.updates, timesteps=self.model.num_timesteps)
            prefix = f"eval/{row['opponent']}"
            self.logger.record(f"{prefix}/points_per_deal", row["points_per_deal"])
            self.logger.record(f"{prefix}/ci95", row["ci95"])
        append_csv(self.run_dir / "evals.csv", rows)
        best_against = self.config.eval.best_against
        score = next(r["points_per_deal"] for r in rows if r["opponent"] == best_against)
        if self.state.best_score is None or score > self.state.best_score:
            self.state.best_score, self.state.best_update = score, self.state.updates
            shutil.copyfile(path, self.run_dir / "best.zip")
        path.unlink()
        self.logger.record("eval/best_points_per_deal", self.state.best_score)
        self.logger.dump(self.model.num_timesteps)
        if self.bar is not None:
            self.bar.set_postfix(
                {r["opponent"]: f"{r['points_per_deal']:+.2f}" for r in rows}, refresh=False
            )
        self.state.wall_s += time.perf_counter() - start
        self.clock = time.perf_counter()  # evaluation time is not training throughput

    def _checkpoint(self) -> None:
        start = time.perf_counter()
        save_checkpoint(self.run_dir, self.model, self.state, self.pool)
        self.state.wall_s += time.perf_counter() - start
        self.clock = time.perf_counter()

    def finish(self, model: MaskablePPO) -> None:
        """After ``learn``: account the last update, take the last checkpoint."""
        self.model = model
        if self.started:
            self.state.updates += 1
            self._account(time.perf_counter())
            if self.config.eval.every:
                self._evaluate()
            self._checkpoint()
        if self.bar is not None:
            self.bar.close()


class preserved_rng:  # noqa: N801 - used as a context manager
    """Restore Python's, numpy's and torch's global random states on exit."""

    def __enter__(self) -> None:
        import torch

        self.states = (random.getstate(), np.random.get_state(), torch.get_rng_state())  # noqa: NPY002

    def __exit__(self, *exc: object) -> None:
        import torch

        random.setstate(self.states[0])
        np.random.set_state(self.states[1])  # noqa: NPY002
        torch.set_rng_state(self.states[2])


# Evaluation, report, plot -------------------------------------------------------------------


def evaluate_checkpoint(
    path: Path,
    config: TrainConfig,
    deals: int,
    matches: int = 0,
    progress: bool = False,
    final: bool = False,
) -> list[dict[str, Any]]:
    """Duplicate-deal evaluation of a checkpoint against each configured opponent.

    Uses the evaluation harness (``training.evaluate``), one head-to-head per opponent on the
    same seeded decks. One row per opponent: points per deal with its 95% interval, deal
    record, and the match win rate when ``matches`` duplicate matches are played.
    """
    with tempfile.TemporaryDirectory() as tmp:
        # A fresh file name for every evaluation: the harness caches its players by name.
        unique = Path(tmp) / f"{path.stem}-{uuid.uuid4().hex[:8]}.zip"
        shutil.copyfile(path, unique)
        return _evaluate_rows(unique, config, deals, matches, progress, final)


def _evaluate_rows(
    path: Path, config: TrainConfig, deals: int, matches: int, progress: bool, final: bool
) -> list[dict[str, Any]]:
    from training.evaluate import evaluate

    rows = []
    opponents = config.eval.opponents
    if final and config.eval.final_opponents is not None:
        opponents = config.eval.final_opponents
    for opponent in opponents:
        _, (summary,), _ = evaluate(
            [str(path), opponent],
            deals=deals,
            matches=matches,
            rules=config.resolved_rules(),
            seed=config.eval.seed,
            workers=config.eval.workers if final else 1,
            progress=progress,
        )
        ppd, ci = summary.points_per_deal, summary.points_per_deal_ci
        rows.append(
            {
                "opponent": opponent,
                "deals": summary.deal_pairs,
                "points_per_deal": ppd,
                "ci95": ci,
                "ci_low": ppd - ci,
                "ci_high": ppd + ci,
                "deal_wins": summary.deal_wins,
                "deal_draws": summary.deal_draws,
                "deal_losses": summary.deal_losses,
                "matches": summary.match_pairs,
                "match_win_rate": summary.match_win_rate if summary.match_pairs else None,
                "match_win_rate_ci": summary.match_win_rate_ci if summary.match_pairs else None,
            }
        )
    return rows


def eval_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of evaluation rows."""
    if not rows:
        return "(no final evaluation)"
    lines = [
        "| opponent | duplicate deals | points per deal | 95% CI | deals won / drawn / lost "
        "| matches won (95% CI) |",
        "| --- | ---: | ---: | --- | --- | ---: |",
    ]
    for r in rows:
        matches = ""
        if r.get("match_win_rate") not in (None, ""):
            matches = (
                f"{100 * float(r['match_win_rate']):.1f}% ± "
                f"{100 * float(r['match_win_rate_ci']):.1f} of {r['matches']}"
            )
        lines.append(
            f"| {r['opponent']} | {r['deals']} | {r['points_per_deal']:+.3f} | "
            f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] | "
            f"{r['deal_wins']} / {r['deal_draws']} / {r['deal_losses']} | {matches} |"
        )
    return "\n".join(lines)


def append_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if path.exists():
        path.unlink()
    if rows:
        append_csv(path, rows)


def plot_learning_curve(run_dir: Path) -> None:
    """Points per deal against each evaluation opponent over training, with 95% bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = run_dir / "evals.csv"
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if path.exists():
        with path.open() as handle:
            rows = list(csv.DictReader(handle))
        for opponent in dict.fromkeys(r["opponent"] for r in rows):
            mine = [r for r in rows if r["opponent"] == opponent]
            x = np.array([int(r["timesteps"]) for r in mine])
            y = np.array([float(r["points_per_deal"]) for r in mine])
            lo = np.array([float(r["ci_low"]) for r in mine])
            hi = np.array([float(r["ci_high"]) for r in mine])
            (line,) = ax.plot(x, y, marker="o", markersize=3, label=f"vs {opponent}")
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("environment steps (learner decisions)")
    ax.set_ylabel("points per deal (duplicate deals)")
    ax.set_title(f"Learning curve: {run_dir.name}")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    fig.tight_layout()
    fig.savefig(run_dir / "learning_curve.png")
    plt.close(fig)


def write_report(
    run_dir: Path,
    config: TrainConfig,
    timesteps: int,
    state: RunState,
    evaluated: str,
    final_eval: list[dict[str, Any]],
    table: str,
) -> None:
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
    if state.warm_start:
        warm = (
            f"behaviour cloning of `{config.warm_start.teacher}` on "
            f"{int(state.warm_start['samples']):,} decisions, "
            f"{100 * state.warm_start['accuracy']:.1f}% agreement, "
            f"{state.warm_start['seconds'] / 60:.1f} min"
        )
    warm_s = state.warm_start["seconds"] if state.warm_start else 0.0
    text = f"""# Training run `{run_dir.name}`

| | |
| --- | --- |
| config | `{config.name}` (`config.yaml` beside this report) |
| seed | {config.seed} |
| rules | {describe_rules(config.resolved_rules())} |
| episode / reward | {config.episode} / {config.reward} |
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
| final checkpoint | `final.zip` |
| libraries | {versions} |

## Final evaluation of `{evaluated}` (duplicate deals, seed {config.eval.seed})

{table}

Points per deal are the learner's points minus the opponent's, averaged over every deal of
each duplicate pair; the interval is a 95% confidence interval over the pairs.

## Learning curve

![learning curve](learning_curve.png)
"""
    (run_dir / "report.md").write_text(text)


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
    shutil.copyfile(checkpoint, dest / "model.zip")
    meta = json.loads((run_dir / "meta.json").read_text())
    rows = []
    if (run_dir / "final_eval.csv").exists():
        with (run_dir / "final_eval.csv").open() as handle:
            rows = list(csv.DictReader(handle))
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
    (dest / "model.json").write_text(json.dumps(card, indent=2) + "\n")
    shutil.copyfile(run_dir / "report.md", dest / "README.md")
    if (run_dir / "learning_curve.png").exists():
        shutil.copyfile(run_dir / "learning_curve.png", dest / "learning_curve.png")
