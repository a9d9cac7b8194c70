"""Warm start: behaviour cloning of a rule-based teacher before PPO.

PPO from scratch learns Scopa slowly on a laptop CPU: the end-of-deal points say little about
which of ~18 decisions earned them, and after half a million steps a fresh policy barely beats
the random player. Cloning a teacher on its own decisions gives the policy the basics, and the
value head learns the teacher's returns at the same time, so PPO starts from a sensible actor
and critic. A rule-based teacher (greedy, heuristic) plays a few hundred thousand decisions in
the training environment in a minute or two; the search player (ISMCTS), which beats them,
costs about 20 ms of CPU a decision, so its decisions are played in tasks on every core and
saved as they finish (``collect_in_tasks``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.base import NUM_ACTIONS

Data = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass
class WarmStartResult:
    samples: int
    accuracy: float  # on the teacher's decisions with more than one legal action
    seconds: float


def teacher_actions(teacher: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The teacher's actions for a batch: batched when it can, row by row otherwise."""
    if hasattr(teacher, "act_batch"):
        return np.asarray(teacher.act_batch(obs, masks.astype(np.int8)))
    return np.array(
        [
            teacher.act({"observation": o, "action_mask": m.astype(np.int8)})
            for o, m in zip(obs, masks, strict=True)
        ]
    )


def collect(env: Any, teacher: Any, samples: int, gamma: float) -> Data:
    """The teacher plays the learner's seat; returns observations, masks, actions, returns.

    Returns are discounted sums of the environment's rewards to the end of each episode;
    decisions whose episode was still running when collection stopped are dropped.
    """
    n = env.num_envs
    steps = -(-samples // n)
    obs_buf = np.zeros((steps, n, env.observation_space.shape[0]), np.float32)
    mask_buf = np.zeros((steps, n, NUM_ACTIONS), bool)
    act_buf = np.zeros((steps, n), np.int64)
    rew_buf = np.zeros((steps, n), np.float32)
    done_buf = np.zeros((steps, n), bool)
    env.draw_opponents()
    obs = env.reset()
    for t in range(steps):
        masks = env.action_masks()
        actions = teacher_actions(teacher, obs, masks)
        obs_buf[t], mask_buf[t], act_buf[t] = obs, masks, actions
        obs, rew_buf[t], done_buf[t], _ = env.step(actions)
    returns = np.zeros((steps, n), np.float32)
    valid = np.zeros((steps, n), bool)
    running = np.zeros(n, np.float32)
    finished = np.zeros(n, bool)
    for t in reversed(range(steps)):
        running = np.where(done_buf[t], 0.0, gamma * running) + rew_buf[t]
        finished |= done_buf[t]
        returns[t], valid[t] = running, finished
    keep = valid.reshape(-1)
    if not keep.any():
        raise ValueError(
            f"warm_start.samples={samples} gives {steps} decisions to each of {n} environments, "
            "too few to finish any episode; raise warm_start.samples"
        )
    return (
        obs_buf.reshape(steps * n, -1)[keep],
        mask_buf.reshape(steps * n, -1)[keep],
        act_buf.reshape(-1)[keep],
        returns.reshape(-1)[keep],
    )


def behaviour_clone(
    policy: Any,
    data: Data,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    vf_coef: float,
    seed: int,
) -> float:
    """Fit the actor to the teacher's actions and the critic to its returns; returns accuracy."""
    obs, masks, actions, returns = (torch.as_tensor(x) for x in data)
    rng = np.random.default_rng(seed)
    for group in policy.optimizer.param_groups:
        group["lr"] = learning_rate
    policy.set_training_mode(True)
    size = obs.shape[0]
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(size))
        for start in range(0, size, batch_size):
            idx = order[start : start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(
                obs[idx], actions[idx], action_masks=masks[idx].numpy()
            )
            policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            loss = policy_loss + vf_coef * value_loss
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            policy.optimizer.step()
    policy.set_training_mode(False)
    choice = masks.sum(dim=1) > 1
    with torch.no_grad():
        predicted = torch.cat(
            [
                policy(obs[i : i + 4096], deterministic=True, action_masks=masks[i : i + 4096])[0]
                for i in range(0, size, 4096)
            ]
        )
    return float((predicted == actions)[choice].float().mean())


def collect_in_tasks(
    make_task: Callable[[int], tuple[Any, Any]],
    samples: int,
    task_samples: int,
    gamma: float,
    workers: int,
    folder: Path,
) -> Data:
    """``collect`` split into tasks of ``task_samples`` run by ``workers`` processes.

    ``make_task(i)`` builds task ``i``'s environment and teacher with the task's own seeds, so
    the data do not depend on the number of workers. Each task's data are saved to
    ``folder/task_NNNN.npz`` when it finishes and read back instead of played again, so an
    interrupted collection continues where it stopped.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tasks = -(-samples // task_samples)
    paths = [folder / f"task_{i:04d}.npz" for i in range(tasks)]
    todo = [i for i, path in enumerate(paths) if not path.is_file()]
    if todo:
        with ProcessPoolExecutor(max_workers=min(workers, len(todo))) as pool:
            futures = [
                pool.submit(_collect_task, make_task, i, task_samples, gamma, paths[i])
                for i in todo
            ]
            for future in futures:
                future.result()
    parts = []
    for path in paths:
        with np.load(path) as part:
            parts.append(tuple(part[k] for k in ("obs", "masks", "actions", "returns")))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))  # type: ignore[return-value]


def _collect_task(
    make_task: Callable[[int], tuple[Any, Any]], index: int, samples: int, gamma: float, path: Path
) -> None:
    torch.set_num_threads(1)
    env, teacher = make_task(index)
    obs, masks, actions, returns = collect(env, teacher, samples, gamma)
    partial = path.with_suffix(".partial.npz")
    np.savez_compressed(partial, obs=obs, masks=masks, actions=actions, returns=returns)
    partial.replace(path)


def warm_start(
    model: Any,
    env: Any,
    teacher: Any,
    config: Any,
    seed: int,
    make_task: Callable[[int], tuple[Any, Any]] | None = None,
    folder: Path | None = None,
) -> WarmStartResult:
    """Collect the teacher's play and clone it into ``model.policy``.

    The teacher plays in ``env``, or, when ``config.workers`` is set, in the tasks that
    ``make_task`` builds (see ``collect_in_tasks``), saved in ``folder``.
    """
    start = time.perf_counter()
    if config.workers is None:
        data = collect(env, teacher, config.samples, model.gamma)
    else:
        if make_task is None or folder is None:
            raise ValueError("collecting with workers needs make_task and folder")
        data = collect_in_tasks(
            make_task, config.samples, config.task_samples, model.gamma, config.workers, folder
        )
    accuracy = behaviour_clone(
        model.policy,
        data,
        config.epochs,
        config.batch_size,
        config.learning_rate,
        model.vf_coef,
        seed,
    )
    return WarmStartResult(len(data[0]), accuracy, time.perf_counter() - start)
