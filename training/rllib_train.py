"""RLlib PPO on every table: an action-masking module against a pool of opponents.

The learner is one module, ``main``: RLlib's own ``ActionMaskingTorchRLModule`` (its
action-masking example, PPO). Each episode one side, drawn from the episode's id, is ``main``
(all its seats: partners share the module) and every other side is one opponent drawn from
the pool: ``random`` (a uniformly random legal action, not trained) or ``snapshot``, a frozen
copy of ``main`` refreshed every ``snapshot_every`` iterations, as RLlib's self-play examples
do. Environment runners (``num_env_runners``) and the Ray address come from the config, so the
same config runs on a laptop or a cluster. Needs the ``distributed`` extra.

Status: the module, the pool and a training iteration are tested (``tests/test_ray.py``); the
``scopa train`` entry, the harness player of a checkpoint and the measured targets are not
done yet.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
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
