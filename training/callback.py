"""The SB3 callback that runs a training between PPO updates."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agents.oracle_policy import save_for_play
from evaluation.progress import progress_bar
from evaluation.records import append_csv, copy_file
from training.checkpoint_eval import evaluate_checkpoint
from training.checkpoints import (
    RunState,
    boundary_seed,
    cpu_seconds,
    latest_checkpoint,
    preserved_rng,
    save_checkpoint,
)
from training.config import TrainConfig

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

    from agents.oracle_policy import OracleCardPolicy


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
        resumed: bool = False,
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
        #: The games restart before the next rollout: after every checkpoint, and on a resume.
        self.restart_pending = resumed

    def _on_training_start(self) -> None:
        self.bar = progress_bar(
            self.config.total_updates * self.config.rollout_size,
            "step",
            self.progress,
            desc=self.config.name,
            done=self.model.num_timesteps,
            unit_scale=True,
        )
        self.pool_env.take_timers()  # drop what the warm start's games left in the counters
        self.pool_env.take_results()
        self.pool_env.take_baseline_results()
        fresh = latest_checkpoint(self.run_dir) is None
        if self.model.num_timesteps == 0 and fresh:
            # The starting point (the clone, or the random network) opens the learning curve.
            if self.state.warm_start:
                if "accuracy" in self.state.warm_start:  # not known for an init_from start
                    self.logger.record("warm_start/accuracy", self.state.warm_start["accuracy"])
                self.logger.record("warm_start/seconds", self.state.warm_start["seconds"])
                self.logger.dump(0)
            if self.config.eval.every:
                self._evaluate()
            if self.state.warm_start:  # the clone is a candidate for best, and resumable
                self._checkpoint()
        self.clock = time.perf_counter()

    def _on_rollout_start(self) -> None:
        now = time.perf_counter()
        if self.started:  # an update just finished
            self.state.updates += 1
            self._account(now)
            self._between_updates()
        self.started = True
        if self.config.ppo.critic_warmup:  # the first updates fit the critic alone
            policy = cast("OracleCardPolicy", self.model.policy)  # critic_warmup needs it
            policy.set_actor_frozen(self.state.updates < self.config.ppo.critic_warmup)
        self.pool_env.draw_opponents()
        if self.restart_pending:
            self._restart()

    def _restart(self) -> None:
        """Start every game afresh from a seed of the update alone, as a resume from the
        checkpoint just written does: so a resumed run continues exactly as this one."""
        import numpy as np

        self.restart_pending = False
        seed = boundary_seed(self.config.seed, self.state.updates)
        self.model._last_obs = self.pool_env.restart(seed)
        self.model._last_episode_starts = np.ones(self.pool_env.num_envs, dtype=bool)

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
        for kind, (mean, _) in self.pool_env.take_baseline_results().items():
            self.logger.record(f"pool/baseline_points_vs_{kind}", mean)
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
        save_for_play(self.model, path)  # the player alone, as every play file of a run
        try:
            with preserved_rng():
                rows = evaluate_checkpoint(path, self.config, self.config.eval.deals)
        except BaseException:  # stopped: the run folder keeps no half-used model
            path.unlink(missing_ok=True)
            raise
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
            copy_file(path, self.run_dir / "best.zip")
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
        self.restart_pending = True
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
