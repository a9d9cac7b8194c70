"""Warm start: behaviour cloning of a rule-based teacher before PPO.

PPO from scratch learns Scopa slowly on a laptop CPU: the end-of-deal points say little about
which of ~18 decisions earned them, and after half a million steps a fresh policy barely beats
the random player. Cloning a teacher on its own decisions gives the policy the basics, and the
value head learns the teacher's returns at the same time, so PPO starts from a sensible actor
and critic. A rule-based teacher (greedy, heuristic) plays a few hundred thousand decisions in
the training environment in a minute or two; the search player (ISMCTS), which beats them,
costs about 20 ms of CPU a decision, so its decisions are played in tasks on every core and
saved as they finish (``collect_in_tasks``).

The search also says how good it found each move it tried, and two options use that:
- ``temperature``: fit the actor to a softmax of those values rather than to the single move
  chosen; when two moves are nearly as good, the search's pick between them is noise.
- ``regret_weight``: add the actor's expected regret, the points by the search's values that
  its choice gives up, to the loss. Cross-entropy counts a miss between near-equal moves as
  much as a blunder; regret weighs each decision by its stakes. The last round of a deal, where
  the cards left decide whole points, is where this matters most.

The teacher plays the positions it reaches itself, which are not the learner's: a clone that
errs meets positions the teacher never showed it. With ``rollin``, another player (the learner
as it is, say) plays the seat and the teacher only says at each of its decisions what it would
play and how it values each move: DAgger (Ross, Gordon and Bagnell, 2011), whose rounds teach
the learner where its own play leads.

The alpha-beta player scores every legal move too (``move_values``, totals over its sampled
deals); ``MoveValueTeacher`` turns those into the same per-action values, so it can teach with
either option at a fourteenth of the search's time. So does the rollout player, which improves
a network's play: cloning it into that network (``finetune_from``) is a step of expert
iteration.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from evaluation.progress import progress_bar
from evaluation.records import atomic_path
from evaluation.workers import open_pool
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET
from scopa_env.engine import MaskMove
from scopa_env.errors import CheckpointError
from scopa_env.info_state import InfoState


class Decisions(NamedTuple):
    """The teacher's decisions, one row each."""

    obs: np.ndarray  # (N, observation size) float32
    masks: np.ndarray  # (N, 80) bool
    actions: np.ndarray  # (N,) int64
    returns: np.ndarray  # (N,) float32: discounted rewards to the end of the episode
    values: np.ndarray | None  # (N, 80) float32 search values (NaN: not searched), or None


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


def per_game(agent: Any, rows: int) -> list[Any]:
    """``agent`` for every game of a batch of ``rows``, or one ``fork`` of it per game when
    its choice depends on the deal's earlier observations (``follows_deal``)."""
    if rows > 1 and getattr(agent, "follows_deal", False):
        seeds = agent.rng.integers(2**63, size=rows)
        return [agent.fork(int(seed)) for seed in seeds]
    return [agent]


class RollIn:
    """The player whose moves are played in the learner's seat while a teacher is recorded,
    one ``fork`` a game where it follows the deal (``per_game``)."""

    def __init__(self, agent: Any, rows: int) -> None:
        self.players = per_game(agent, rows)

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if len(self.players) == 1:
            return teacher_actions(self.players[0], obs, masks)
        if len(self.players) != len(masks):
            raise ValueError(
                f"this player follows {len(self.players)} games, one a row: got {len(masks)} rows"
            )
        return np.array(
            [
                player.act({"observation": o, "action_mask": m.astype(np.int8)})
                for player, o, m in zip(self.players, obs, masks, strict=True)
            ]
        )


class MoveValueTeacher:
    """A player with ``move_values`` (``agents.alphabeta``, ``agents.rollout``) as a teacher
    that reports values.

    ``act_batch_with_values`` gives, as the search player's does, each legal action's value in
    points per deal (the player's totals times its ``points_per_total``: for ``alphabeta`` the
    mean over its sampled deals, for ``rollout`` with ``confidence`` the lower bound of the
    move's gain on the network's own); a card with several captures is worth its best one, as
    is a table card picked toward them, and a decision with one legal move is NaN. The values
    are the ones the player chose its move by, recorded as it plays (its ``move_values`` is
    wrapped in place), so the chosen action's regret is zero.

    A player that follows the deal across its calls (``follows_deal``: ``alphabeta_value``, or
    ``alphabeta`` with ``infer``) reads what the opponent's plays say about its hand from the
    observations before; given ``rows``, the games of the batch, it plays each row with a
    ``fork`` of its own, so that each follows its game. Otherwise one player serves every row,
    each row a decision on its own.
    """

    def __init__(self, agent: Any, rows: int = 1) -> None:
        self._seen: tuple[InfoState, list[MaskMove], list[int]] | None = None
        self.players = per_game(agent, rows)
        for player in self.players:
            player.move_values = self._recording(player.move_values)

    def _recording(self, score: Callable[[Any, list[MaskMove]], list[int]]) -> Any:
        def recorded(view: Any, moves: list[MaskMove]) -> list[int]:
            totals = score(view, moves)
            self._seen = (view.info, moves, totals)
            return totals

        return recorded

    def act_batch_with_values(
        self, observations: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The player's actions ``(N,)`` and its values of each action ``(N, 80)``."""
        players = self.players
        if len(players) > 1 and len(players) != len(masks):
            raise ValueError(
                f"this teacher follows {len(players)} games, one a row: got {len(masks)} rows"
            )
        actions = np.empty(len(masks), np.int64)
        values = np.full((len(masks), NUM_ACTIONS), np.nan, np.float32)
        for i, (obs, mask) in enumerate(zip(observations, masks, strict=True)):
            player = players[i % len(players)]
            self._seen = None
            actions[i] = player.act({"observation": obs, "action_mask": mask})
            if self._seen is None:
                continue
            info, moves, totals = self._seen
            scale = player.points_per_total(info)
            for move, total in zip(moves, totals, strict=True):
                for a in actions_toward(info, move):
                    values[i, a] = np.fmax(values[i, a], total * scale)
        return actions, values


def actions_toward(info: InfoState, move: MaskMove) -> list[int]:
    """The actions that keep ``move`` open: its card, or in the pick phase any of its table
    cards not yet picked (each pick is worth the best capture it leaves open)."""
    if not info.in_pick_phase:
        return [info.action(move)]
    remaining = move[1] & ~info.picked
    return [PICK_OFFSET + c for c in range(40) if remaining >> c & 1]


def with_values(teacher: Any, rows: int = 1) -> Any:
    """The teacher, as a ``MoveValueTeacher`` of ``rows`` games when it values moves without
    reporting them."""
    if hasattr(teacher, "move_values") and not hasattr(teacher, "act_batch_with_values"):
        return MoveValueTeacher(teacher, rows)
    return teacher


def collect(
    env: Any,
    teacher: Any,
    samples: int,
    gamma: float,
    rollin: Any | None = None,
    show_progress: bool = False,
) -> Decisions:
    """The teacher plays the learner's seat; returns its decisions (with ``show_progress``, a
    bar of them on stderr).

    Returns are discounted sums of the environment's rewards to the end of each episode;
    decisions whose episode was still running when collection stopped are dropped. A teacher
    with ``act_batch_with_values`` (the search player) also gives its values of each action,
    as does one with ``move_values`` (``with_values``). With ``rollin``, a player, that player
    plays the seat instead: each decision holds the position it reached, the teacher's action
    and values there, and the return of the roll-in's play from there.
    """
    n = env.num_envs
    teacher = with_values(teacher, n)
    roll = None if rollin is None else RollIn(rollin, n)
    steps = -(-samples // n)
    obs_buf = np.zeros((steps, n, env.observation_space.shape[0]), np.float32)
    mask_buf = np.zeros((steps, n, NUM_ACTIONS), bool)
    act_buf = np.zeros((steps, n), np.int64)
    rew_buf = np.zeros((steps, n), np.float32)
    done_buf = np.zeros((steps, n), bool)
    searches = hasattr(teacher, "act_batch_with_values")
    value_buf = np.zeros((steps, n, NUM_ACTIONS), np.float32) if searches else None
    # The teacher reads the seat's observation, without an oracle critic's hidden cards.
    seen = getattr(env, "play_width", env.observation_space.shape[0])
    env.draw_opponents()
    obs = env.reset()
    with progress_bar(steps * n, "decision", show_progress, "warm start", unit_scale=True) as bar:
        for t in range(steps):
            masks = env.action_masks()
            if value_buf is not None:
                actions, value_buf[t] = teacher.act_batch_with_values(
                    obs[:, :seen], masks.astype(np.int8)
                )
            else:
                actions = teacher_actions(teacher, obs[:, :seen], masks)
            obs_buf[t], mask_buf[t], act_buf[t] = obs, masks, actions
            played = actions if roll is None else roll.actions(obs[:, :seen], masks)
            obs, rew_buf[t], done_buf[t], _ = env.step(played)
            bar.update(n)
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
    return Decisions(
        obs_buf.reshape(steps * n, -1)[keep],
        mask_buf.reshape(steps * n, -1)[keep],
        act_buf.reshape(-1)[keep],
        returns.reshape(-1)[keep],
        None if value_buf is None else value_buf.reshape(steps * n, -1)[keep],
    )


def soft_targets(decisions: Decisions, temperature: float | None) -> np.ndarray:
    """The distribution over actions the actor is fitted to, one row per decision.

    Without a temperature, or where the teacher did not search, the teacher's action; else a
    softmax of the search's values (points per deal) divided by ``temperature``.
    """
    n = len(decisions.actions)
    targets = np.zeros((n, NUM_ACTIONS), np.float32)
    targets[np.arange(n), decisions.actions] = 1.0
    if temperature is None or decisions.values is None:
        return targets
    values = decisions.values
    searched = ~np.isnan(values)
    rows = searched.any(axis=1)
    logits = np.where(searched, values, -np.inf)[rows] / temperature
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    targets[rows] = weights / weights.sum(axis=1, keepdims=True)
    return targets


def search_regret(decisions: Decisions) -> np.ndarray:
    """Per decision and action, the search's best value minus the action's (points per deal).

    Zero for actions and decisions the search did not value (or all, without values); a
    search values every legal action of the decisions it searched.
    """
    if decisions.values is None:
        return np.zeros(decisions.masks.shape, np.float32)
    values = decisions.values
    best = np.where(np.isnan(values), -np.inf, values).max(axis=1, keepdims=True)
    return np.nan_to_num(best - values, nan=0.0)  # NaN where the action was not valued


def behaviour_clone(
    policy: Any,
    data: Decisions,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    vf_coef: float,
    seed: int,
    temperature: float | None = None,
    regret_weight: float = 0.0,
) -> float:
    """Fit the actor to the teacher's play and the critic to its returns; returns accuracy.

    The actor's loss is the cross-entropy to ``soft_targets(data, temperature)`` plus
    ``regret_weight`` times its expected ``search_regret``. Accuracy is the share of the
    teacher's actions the fitted actor picks where it had a choice.
    """
    device = policy.device
    obs, masks, actions, returns, targets, regret = (
        torch.as_tensor(column, device=device)
        for column in (
            data.obs,
            data.masks,
            data.actions,
            data.returns,
            soft_targets(data, temperature),
            search_regret(data),
        )
    )
    rng = np.random.default_rng(seed)
    for group in policy.optimizer.param_groups:
        group["lr"] = learning_rate
    policy.set_training_mode(True)
    size = obs.shape[0]
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(size), device=device)
        for start in range(0, size, batch_size):
            idx = order[start : start + batch_size]
            values, log_probs = _values_and_log_probs(policy, obs[idx], masks[idx])
            policy_loss = -(targets[idx] * log_probs).sum(dim=1).mean()
            if regret_weight:
                expected_regret = (log_probs.exp() * regret[idx]).sum(dim=1).mean()
                policy_loss = policy_loss + regret_weight * expected_regret
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


def _values_and_log_probs(
    policy: Any, obs: torch.Tensor, masks: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The critic's values and the masked actor's log-probabilities of all 80 actions.

    As ``evaluate_actions`` computes them, in one forward pass, but for every action; masked
    actions get a large negative log-probability, finite so that a zero target cancels it.
    """
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    distribution = policy._get_action_dist_from_latent(latent_pi)
    distribution.apply_masking(masks)
    return policy.value_net(latent_vf), distribution.distribution.logits


def collect_in_tasks(
    make_task: Callable[[int], tuple[Any, Any, Any]],
    samples: int,
    task_samples: int,
    gamma: float,
    workers: int,
    folder: Path,
    ray: str | None = None,
    show_progress: bool = False,
) -> Decisions:
    """``collect`` split into tasks of ``task_samples`` run by ``workers`` processes or on Ray
    (with ``show_progress``, a bar of their decisions on stderr).

    ``make_task(i)`` builds task ``i``'s environment, teacher and roll-in player (``None``: the
    teacher plays) with the task's own seeds, so the data do not depend on the number of
    workers nor on where they ran (``ray``: ``"local"`` or a cluster's address,
    ``evaluation.ray_backend``). Each task's data come back to this
    process, which saves them to ``folder/task_NNNN.npz`` as the task finishes (so a cluster
    needs no shared disk) and reads them back instead of playing again, so an interrupted
    collection continues where it stopped: a Ctrl-C or SIGTERM cancels the queued tasks and
    ends the running ones at once (``evaluation.workers``), and every finished task's file
    stays.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(".task_*"):  # written by a task that was stopped
        stale.unlink()
    tasks = -(-samples // task_samples)
    paths = [folder / f"task_{i:04d}.npz" for i in range(tasks)]
    todo = [i for i, path in enumerate(paths) if not path.is_file()]
    total = tasks * task_samples
    saved = total - len(todo) * task_samples
    bar = progress_bar(total, "decision", show_progress, "warm start", saved, unit_scale=True)
    with bar:
        if todo:
            task = functools.partial(_collect_task, make_task, samples=task_samples, gamma=gamma)
            with open_pool(min(workers, len(todo)), ray) as pool:
                for index, arrays in pool.results(task, todo):
                    with atomic_path(paths[index]) as tmp:
                        np.savez_compressed(tmp, **arrays)
                    bar.update(task_samples)
    return read_decisions(paths)


def read_decisions(paths: list[Path]) -> Decisions:
    """The decisions of saved tasks, in order; ``values`` only if every task holds them."""
    parts = []
    for path in paths:
        with np.load(path) as part:
            missing = [name for name in Decisions._fields[:-1] if name not in part]
            if missing:
                raise CheckpointError(f"{path} is not a warm-start task: no {', '.join(missing)}")
            parts.append(dict(part))
    columns: dict[str, Any] = {k: [part.get(k) for part in parts] for k in Decisions._fields}
    if any(v is None for v in columns["values"]):  # tasks saved without the search's values
        columns["values"] = None
    return Decisions._make(None if c is None else np.concatenate(c) for c in columns.values())


def _collect_task(
    make_task: Callable[[int], tuple[Any, Any, Any]],
    index: int,
    samples: int,
    gamma: float,
) -> dict[str, np.ndarray]:
    torch.set_num_threads(1)
    env, teacher, rollin = make_task(index)
    # One BLAS thread, as the tasks fill every core: idle BLAS threads spin after each
    # product, and a teacher that values many leaves a decision (``alphabeta_value``) does
    # many of them (``evaluation.harness.play_game`` has the figures).
    with threadpool_limits(limits=1, user_api="blas"):
        decisions = collect(env, teacher, samples, gamma, rollin)
    return {k: v for k, v in decisions._asdict().items() if v is not None}


def warm_start(
    model: Any,
    env: Any,
    teacher: Any,
    config: Any,
    seed: int,
    make_task: Callable[[int], tuple[Any, Any, Any]] | None = None,
    folder: Path | None = None,
    rollin: Any | None = None,
    show_progress: bool = False,
) -> WarmStartResult:
    """Collect the teacher's play and clone it into ``model.policy`` (with ``show_progress``,
    a bar of the collection on stderr).

    The teacher plays in ``env`` (or ``rollin`` plays and the teacher is recorded), or, when
    ``config.workers`` is set, in the tasks that ``make_task`` builds (see
    ``collect_in_tasks``), saved in ``folder``; with ``config.ray`` the tasks run on Ray.
    """
    start = time.perf_counter()
    if config.workers is None:
        data = collect(env, teacher, config.samples, model.gamma, rollin, show_progress)
    else:
        if make_task is None or folder is None:
            raise ValueError("collecting with workers needs make_task and folder")
        data = collect_in_tasks(
            make_task,
            config.samples,
            config.task_samples,
            model.gamma,
            config.workers,
            folder,
            config.ray,
            show_progress,
        )
    accuracy = behaviour_clone(
        model.policy,
        data,
        config.epochs,
        config.batch_size,
        config.learning_rate,
        model.vf_coef,
        seed,
        config.temperature,
        config.regret_weight,
    )
    return WarmStartResult(len(data.actions), accuracy, time.perf_counter() - start)


def start_from(model: Any, path: Path, key: str = "init_from") -> dict[str, float]:
    """Load the weights of the model saved at ``path`` into ``model``'s policy (the config's
    ``warm_start.<key>``).

    The saved network must be the one the config builds (same policy class and options, the
    table among them); a different one is a ``ConfigError`` naming the key and the path, never
    a half-loaded network.
    """
    from agents.oracle_policy import OracleCardPolicy
    from agents.policy import load_policy_checkpoint
    from training.config import ConfigError

    start = time.perf_counter()
    saved = load_policy_checkpoint(path)
    oracle = isinstance(model.policy, OracleCardPolicy)
    kwargs = model.policy.play_kwargs(model.policy_kwargs) if oracle else model.policy_kwargs
    ours = ("CardPolicy" if oracle else type(model.policy).__name__, kwargs)
    theirs = (type(saved.policy).__name__, dict(saved.policy_kwargs))
    if (
        theirs[1].get("table") is None
        and "table" in kwargs
        and saved.observation_space.shape == model.observation_space.shape
    ):  # saved before networks named their table: the table of its observation's width
        theirs[1]["table"] = kwargs["table"]
    if ours != theirs:
        raise ConfigError(
            f"warm_start.{key}: {path} holds a different network ({theirs[0]} with "
            f"{theirs[1]}) from the one this config's ppo section builds ({ours[0]} with {ours[1]})"
        )
    if oracle:  # the clone's actor and value; the oracle's own part starts fresh
        model.policy.load_play_state_dict(saved.policy.state_dict())
    else:
        model.policy.load_state_dict(saved.policy.state_dict())
    return {"seconds": time.perf_counter() - start}


def fit_critic(model: Any, env: Any, config: Any, seed: int) -> dict[str, float]:
    """Fit an oracle critic alone to the returns of the model's own play (``critic_samples``).

    The policy plays as a ``FrozenPolicy`` (sampled, masked) against the pool; the actor is
    frozen, so only the critic moves. Returns the decisions, the fit's explained variance of
    those returns and the seconds.
    """
    from training.selfplay import FrozenPolicy

    start = time.perf_counter()
    policy = model.policy
    data = collect(env, FrozenPolicy(policy, seed), config.critic_samples, model.gamma)
    obs, returns = (
        torch.as_tensor(column, device=policy.device) for column in (data.obs, data.returns)
    )
    rng = np.random.default_rng(seed)
    for group in policy.optimizer.param_groups:
        group["lr"] = config.learning_rate
    policy.set_actor_frozen(True)
    policy.set_training_mode(True)
    try:
        for _ in range(config.critic_epochs):
            order = torch.as_tensor(rng.permutation(len(returns)), device=policy.device)
            for idx in order.split(config.batch_size):
                loss = torch.nn.functional.mse_loss(
                    policy.predict_values(obs[idx]).flatten(), returns[idx]
                )
                policy.optimizer.zero_grad()
                loss.backward()
                policy.optimizer.step()
    finally:
        policy.set_training_mode(False)
        policy.set_actor_frozen(False)
    with torch.no_grad():
        values = torch.cat([policy.predict_values(part).flatten() for part in obs.split(4096)])
    explained = 1.0 - float((returns - values).var() / returns.var())
    return {
        "critic_samples": len(returns),
        "critic_ev": explained,
        "critic_seconds": time.perf_counter() - start,
    }
