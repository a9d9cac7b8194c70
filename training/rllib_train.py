"""RLlib PPO on every table: an action-masking module against a pool of opponents.

The learner is one module, ``main``: RLlib's own ``ActionMaskingTorchRLModule`` (its
action-masking example, PPO). Each episode one side, drawn from the episode's id, is ``main``
(all its seats: partners share the module) and every other side is one opponent drawn from
the pool: ``random`` (a uniformly random legal action, not trained) or ``snapshot``, a frozen
copy of ``main`` refreshed every ``snapshot_every`` iterations, as RLlib's self-play examples
do. Environment runners (``num_env_runners``) and the Ray address come from the config, so the
same config runs on a laptop or a cluster. Needs the ``distributed`` extra.

``scopa train --config configs/rllib_quick.yaml`` runs it (a config with ``engine: rllib``,
``RLlibRunConfig``): training iterations, a snapshot refresh every ``snapshot_every``, the
checkpoint in ``RUN_DIR/checkpoint`` (a harness player: ``scopa eval RUN_DIR/checkpoint
random``), then ``final_deals`` duplicate deals against random through the harness.
"""

from __future__ import annotations

import time
import zlib
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from scopa_env.tables import resolve_table

#: The module that learns; the pool's members are the other module ids.
LEARNER = "main"
POOL = ("random", "snapshot")


class RandomLegalRLModule(RLModule):
    """A uniformly random legal action (the observation's ``action_mask``); never trained."""

    def setup(self) -> None:
        self._rng = np.random.default_rng(zlib.crc32(b"random"))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        masks = np.asarray(batch[Columns.OBS]["action_mask"]) > 0
        actions = [int(self._rng.choice(np.flatnonzero(m))) for m in masks]
        return {Columns.ACTIONS: np.array(actions, np.int64)}

    def _forward_train(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("the random player is not trained")


def mapping(table: str, pool: tuple[str, ...] = POOL) -> Any:
    """The policy mapping: per episode a learner side and one pool member for the others."""
    kind = resolve_table(table)

    def module_of(agent_id: str, episode: Any, **kwargs: Any) -> str:
        draw = zlib.crc32(str(episode.id_).encode())
        side = kind.side_of(kind.agents.index(agent_id))
        if side == draw % kind.sides:
            return LEARNER
        return pool[(draw // kind.sides) % len(pool)]

    return module_of


def ppo_config(
    table: str = "scopa",
    num_env_runners: int = 0,
    train_batch_size: int = 2000,
    minibatch_size: int = 250,
    num_epochs: int = 4,
    learning_rate: float = 3e-4,
    hidden: tuple[int, ...] = (256, 256),
    seed: int = 0,
) -> Any:
    """RLlib's ``PPOConfig`` for ``table`` with the learner, the pool and the mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    from scopa_env.integrations.rllib import ScopaMultiAgentEnv

    model = DefaultModelConfig(fcnet_hiddens=list(hidden), vf_share_layers=False)
    specs = {
        LEARNER: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model),
        "snapshot": RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model),
        "random": RLModuleSpec(module_class=RandomLegalRLModule),
    }
    return (
        PPOConfig()
        .environment(ScopaMultiAgentEnv, env_config={"table": table}, disable_env_checking=True)
        .env_runners(num_env_runners=num_env_runners, num_cpus_per_env_runner=1)
        .multi_agent(
            policies=set(specs),
            policy_mapping_fn=mapping(table),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=learning_rate,
            gamma=1.0,
        )
        .debugging(seed=seed)
    )


def refresh_snapshot(algorithm: Any) -> None:
    """Copy the learner's weights into the frozen ``snapshot`` module, here and in the runners."""
    weights = algorithm.get_module(LEARNER).get_state()
    algorithm.learner_group.foreach_learner(
        lambda learner: learner.module["snapshot"].set_state(weights)
    )
    algorithm.env_runner_group.foreach_env_runner(
        lambda runner: runner.module["snapshot"].set_state(weights), local_env_runner=True
    )


class RLlibRunConfig(BaseModel):
    """``scopa train`` with RLlib: the keys of ``configs/rllib_quick.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: Literal["rllib"]
    name: str = "rllib"
    table: str = "scopa"
    seed: int = Field(0, ge=0)
    iterations: int = Field(10, ge=1)
    #: Environment runners (Ray actors of one CPU each); 0 samples in the learner's process.
    num_env_runners: int = Field(1, ge=0)
    #: ``null``: start Ray on this machine; ``auto`` or ``HOST:PORT``: join that cluster.
    ray: str | None = None
    train_batch_size: int = Field(4000, ge=1)
    minibatch_size: int = Field(500, ge=1)
    num_epochs: int = Field(4, ge=1)
    learning_rate: float = Field(3e-4, gt=0)
    hidden: list[int] = Field(default_factory=lambda: [256, 256], min_length=1)
    #: Refresh the frozen snapshot from the learner every this many iterations.
    snapshot_every: int = Field(2, ge=1)
    #: Duplicate deals against random in the final evaluation; 0 skips it.
    final_deals: int = Field(2000, ge=0)


def load_rllib_config(path: Path, overrides: list[str]) -> RLlibRunConfig:
    from training.config import ConfigError

    data = yaml.safe_load(Path(path).read_text())
    for item in overrides:
        key, eq, value = item.partition("=")
        if not eq:
            raise ConfigError(f"override {item!r} is not KEY=VALUE")
        data[key] = yaml.safe_load(value)
    try:
        return RLlibRunConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"invalid config {path}: {error}") from None


def train_rllib(config: RLlibRunConfig, run_dir: Path | None = None) -> str:
    """Train as ``config`` says; returns the summary the command prints."""
    from evaluation.harness import evaluate
    from evaluation.ray_backend import connect, import_ray

    ray = import_ray()
    run_dir = Path(run_dir or f"runs/{config.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    run_dir.mkdir(parents=True, exist_ok=False)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.model_dump()))
    started = connect(config.ray or "local", config.num_env_runners + 1)
    try:
        algorithm = ppo_config(
            config.table,
            config.num_env_runners,
            config.train_batch_size,
            config.minibatch_size,
            config.num_epochs,
            config.learning_rate,
            tuple(config.hidden),
            config.seed,
        ).build_algo()
        wall, cpu = time.perf_counter(), time.process_time()
        steps = 0
        for iteration in range(1, config.iterations + 1):
            result = algorithm.train()
            steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
            returns = result["env_runners"].get("module_episode_returns_mean", {})
            print(
                f"iteration {iteration}: {steps:,} env steps, {time.perf_counter() - wall:.0f} s, "
                f"main's mean return {returns.get(LEARNER, float('nan')):+.2f}",
                flush=True,
            )
            if iteration % config.snapshot_every == 0:
                refresh_snapshot(algorithm)
        seconds, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
        checkpoint = Path(algorithm.save(str((run_dir / "checkpoint").resolve())).checkpoint.path)
        algorithm.stop()
    finally:
        if started:
            ray.shutdown()
    lines = [
        f"{config.iterations} iterations, {steps:,} env steps in {seconds:.0f} s "
        f"({steps / seconds:.0f} steps/s learning included, {config.num_env_runners} env "
        f"runner(s); this process's CPU {cpu_s:.0f} s)",
        f"checkpoint: {checkpoint}",
    ]
    if config.final_deals:
        _, summaries, _ = evaluate(
            [str(checkpoint), "random"], deals=config.final_deals, seed=config.seed
        )
        s = summaries[0]
        lines.append(
            f"against random over {config.final_deals} duplicate deals: "
            f"{s.points_per_deal:+.3f} ± {s.points_per_deal_ci:.3f} points per deal"
        )
    text = "\n".join(lines) + "\n"
    (run_dir / "summary.txt").write_text(text)
    return text
