"""RLlib PPO on every table: an action-masking module against a pool of opponents.

The learner is one module, ``main``: RLlib's own ``ActionMaskingTorchRLModule`` (its
action-masking example, an MLP; ``module: mlp``) or the project's card network
(``agents.rllib_module.CardNetRLModule``, ``module: card``, the ``scopa`` table). Each episode
one side, drawn from the episode's id, is ``main`` (all its seats: partners share the module)
and every other side is one opponent drawn from the pool (``opponents``): ``snapshot``, a
frozen copy of ``main`` refreshed every ``snapshot_every`` iterations, as RLlib's self-play
examples do, or a player of the project by name (``random``, ``greedy``...; not trained).
Environment runners (``num_env_runners``) and the Ray address come from the config, so the
same config runs on a laptop or a cluster. Needs the ``distributed`` extra.

Plain PPO learns Scopa slowly (the points come at the end of a deal of ~18 decisions per
seat): the quick config with the MLP and no warm start scored +0.08 points per deal against
random after 120,000 steps. ``warm_start`` (card network only) first clones a rule player
with the project's own behaviour cloning (``training.warm_start``: the teacher's decisions in
the batched environment, the actor fitted to its moves and the critic to its returns), then
PPO trains from there, as ``scopa train`` does for SB3.

A resumed run is the run that never stopped, bit for bit (the same ``metrics.csv`` rows and
module weights, with one env runner or several), on the same machine and libraries and with
the same config (``num_env_runners`` and ``checkpoint_every`` included, though a resume may
change them): at every checkpoint, and after a resume, ``restart`` puts the run in a state of
``seed`` and the iteration alone (the games in progress dropped), and the checkpoint carries
PPO's KL coefficients, which RLlib's leaves out.

``scopa train --config configs/rllib_quick.yaml`` runs it (a config with ``engine: rllib``,
``RLlibRunConfig``): the warm start, training iterations, the checkpoint in
``RUN_DIR/checkpoint`` (a harness player: ``scopa eval RUN_DIR/checkpoint random``), then
``final_deals`` duplicate deals against random through the harness.
"""

from __future__ import annotations

import time
import zlib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, model_validator

from evaluation.records import write_text
from scopa_env.tables import resolve_table
from training.config import ConfigError, Section, load_model

#: The module that learns; the pool's members are the other module ids.
LEARNER = "main"
SNAPSHOT = "snapshot"
POOL = ("random", SNAPSHOT)


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


def _name_episode(*, episode: Any, env_runner: Any, **kwargs: Any) -> None:
    """Name each new episode ``PREFIX-N`` (a counter per env runner, restarted by
    ``restart_runner``) rather than RLlib's random uuid: ``mapping`` draws the sides from the
    id, and a resumed run must draw them as the run that never stopped."""
    prefix, counter = getattr(env_runner, "scopa_episodes", None) or _episode_names(env_runner)
    episode.id_ = f"{prefix}-{next(counter)}"


def _episode_names(env_runner: Any, boundary: int = 0) -> tuple[str, Any]:
    import itertools

    env_runner.scopa_episodes = (f"{boundary}-{env_runner.worker_index or 0}", itertools.count())
    return env_runner.scopa_episodes


def restart_runner(env_runner: Any, seed: int, boundary: int) -> None:
    """Put an env runner in a state of ``seed`` and ``boundary`` alone: its random streams
    (Python's, numpy's, torch's: the actions' draws), its rule players', its episode names,
    and every game restarted at the next ``sample`` from a seed of its own."""
    from agents.base import reset_agent
    from training.checkpoints import seed_everything

    own = seed + 104_729 * (env_runner.worker_index or 0)
    seed_everything(own)
    _episode_names(env_runner, boundary)
    if env_runner.module is not None:
        for i, module_id in enumerate(sorted(env_runner.module.keys())):
            player = getattr(env_runner.module[module_id], "player", None)
            if player is not None:
                reset_agent(player, own + 15_485_863 * (i + 1))
    env_runner._seed = own  # RLlib seeds the games with it on its next first reset
    env_runner._needs_initial_reset = True


def _learner_state(algorithm: Any, module_id: str) -> Any:
    results = algorithm.learner_group.foreach_learner(
        lambda learner: learner.module[module_id].get_state()
    )
    return next(iter(results)).get()


def restart(algorithm: Any, seed: int, boundary: int) -> None:
    """Restart the run at checkpoint ``boundary`` from ``training.checkpoints.boundary_seed``:
    every env runner gets the learner's weights of ``main`` and the snapshot (RLlib's build
    and restore leave remote runners with weights of their own until the first update), then the
    learner's random streams (its minibatches' shuffling) and every env runner's
    (``restart_runner``; the games in progress are dropped) are seeded. Done after each
    checkpoint and after a resume alike, so a resumed run goes on as the one that wrote the
    checkpoint."""
    from training.checkpoints import boundary_seed, seed_everything

    for module_id in (LEARNER, SNAPSHOT):
        if module_id in algorithm.config.policies:
            weights = _learner_state(algorithm, module_id)
            algorithm.env_runner_group.foreach_env_runner(
                lambda runner, m=module_id, w=weights: runner.module[m].set_state(w),
                local_env_runner=True,
            )
    start = boundary_seed(seed, boundary)
    algorithm.env_runner_group.foreach_env_runner(
        lambda runner: restart_runner(runner, start, boundary), local_env_runner=True
    )
    algorithm.learner_group.foreach_learner(lambda learner: seed_everything(start))


def kl_coeffs(algorithm: Any) -> dict[str, float]:
    """PPO's adaptive KL coefficients per module, which RLlib's checkpoint leaves out."""
    results = algorithm.learner_group.foreach_learner(
        lambda learner: {m: c.item() for m, c in learner.curr_kl_coeffs_per_module.items()}
    )
    return next(iter(results)).get()


def set_kl_coeffs(algorithm: Any, coeffs: dict[str, float]) -> None:
    def change(learner: Any) -> None:
        for module_id, value in coeffs.items():
            learner.curr_kl_coeffs_per_module[module_id].data.fill_(value)

    algorithm.learner_group.foreach_learner(change)


def module_spec(module: str, hidden: tuple[int, ...], card: dict[str, Any]) -> Any:
    """The learner's ``RLModuleSpec``: RLlib's masked MLP or the project's card network."""
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    if module == "card":
        from agents.rllib_module import CardNetRLModule

        return RLModuleSpec(module_class=CardNetRLModule, model_config=dict(card))
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    model = DefaultModelConfig(fcnet_hiddens=list(hidden), vf_share_layers=False)
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)


def ppo_config(
    table: str = "scopa",
    num_env_runners: int = 0,
    train_batch_size: int = 2000,
    minibatch_size: int = 250,
    num_epochs: int = 4,
    learning_rate: float = 3e-4,
    hidden: tuple[int, ...] = (256, 256),
    seed: int = 0,
    *,
    module: Literal["mlp", "card"] = "mlp",
    card: dict[str, Any] | None = None,
    opponents: tuple[str, ...] = POOL,
    gae_lambda: float = 1.0,
    clip_param: float = 0.3,
    entropy_coeff: float = 0.0,
    vf_loss_coeff: float = 1.0,
) -> Any:
    """RLlib's ``PPOConfig`` for ``table`` with the learner, the pool and the mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import PlayerRLModule
    from scopa_env.integrations.rllib import ScopaMultiAgentEnv

    if module == "card" and resolve_table(table).players != 2:
        raise ValueError(f"module 'card' reads the two-player observation; {table} is not")
    learner = module_spec(module, hidden, card or {})
    specs = {LEARNER: learner}
    for name in opponents:
        if name == SNAPSHOT:
            specs[SNAPSHOT] = learner
        else:
            specs[name] = RLModuleSpec(module_class=PlayerRLModule, model_config={"player": name})
    return (
        PPOConfig()
        .environment(ScopaMultiAgentEnv, env_config={"table": table}, disable_env_checking=True)
        # A shared or slow machine can take minutes for a batch: wait rather than return none.
        .env_runners(
            num_env_runners=num_env_runners, num_cpus_per_env_runner=1, sample_timeout_s=3600
        )
        .multi_agent(
            policies=set(specs),
            policy_mapping_fn=mapping(table, tuple(opponents)),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .callbacks(on_episode_created=_name_episode)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=learning_rate,
            gamma=1.0,
            lambda_=gae_lambda,
            clip_param=clip_param,
            entropy_coeff=entropy_coeff,
            vf_loss_coeff=vf_loss_coeff,
        )
        .debugging(seed=seed)
    )


def _everywhere(algorithm: Any, module_id: str, change: Any) -> None:
    """``change(module)`` on ``module_id`` in every learner and every env runner."""
    algorithm.learner_group.foreach_learner(lambda learner: change(learner.module[module_id]))
    algorithm.env_runner_group.foreach_env_runner(
        lambda runner: change(runner.module[module_id]), local_env_runner=True
    )


def refresh_snapshot(algorithm: Any) -> None:
    """Copy the learner's weights into the frozen ``snapshot`` module, here and in the runners."""
    if SNAPSHOT not in algorithm.config.policies:
        return
    weights = algorithm.get_module(LEARNER).get_state()
    _everywhere(algorithm, SNAPSHOT, lambda module: module.set_state(weights))


class RLlibWarmStart(Section):
    """Behaviour cloning of ``teacher`` into the card network before PPO."""

    teacher: str = "greedy"
    #: Who the teacher plays against while its decisions are recorded.
    opponent: str = "random"
    samples: int = Field(100_000, ge=1)
    envs: int = Field(256, ge=1)
    epochs: int = Field(8, ge=1)
    batch_size: int = Field(1024, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    vf_coef: float = Field(0.5, ge=0)


def warm_start(algorithm: Any, config: RLlibRunConfig, progress: bool = False) -> str:
    """Clone ``config.warm_start.teacher`` into ``main`` (and the snapshot); returns a report
    (with ``progress``, a bar of the teacher's decisions on stderr).

    The decisions and the cloning are ``training.warm_start``'s, on an SB3 ``CardPolicy`` of
    the module's widths, whose weights then go to every copy of the module.
    """
    import torch
    from gymnasium import spaces

    from agents import make_agent
    from agents.card_policy import CardPolicy
    from scopa_env.vector_env import ScopaVecEnv
    from training.warm_start import behaviour_clone, collect

    ws = config.warm_start
    assert ws is not None
    started = time.perf_counter()
    env = ScopaVecEnv(
        ws.envs, opponent=ws.opponent, episode="deal", reward="points", seed=config.seed
    )
    env.draw_opponents = lambda: None  # collect() redraws a pool's opponents; this has one
    teacher = make_agent(ws.teacher, seed=config.seed)
    data = collect(env, teacher, ws.samples, gamma=1.0, show_progress=progress)
    torch.manual_seed(config.seed)
    policy = CardPolicy(
        env.observation_space,
        spaces.Discrete(env.action_space.n),
        lambda _: ws.learning_rate,
        **config.card,
    )
    accuracy = behaviour_clone(
        policy, data, ws.epochs, ws.batch_size, ws.learning_rate, ws.vf_coef, config.seed
    )
    _everywhere(algorithm, LEARNER, lambda module: module.load_card_policy(policy))
    refresh_snapshot(algorithm)
    return (
        f"warm start: {len(data.actions):,} decisions of {ws.teacher} cloned in "
        f"{time.perf_counter() - started:.0f} s, agreement {accuracy:.1%} where it had a choice"
    )


class RLlibRunConfig(Section):
    """``scopa train`` with RLlib: the keys of ``configs/rllib_quick.yaml``."""

    engine: Literal["rllib"]
    name: str = "rllib"
    table: str = "scopa"
    seed: int = Field(0, ge=0)
    iterations: int = Field(10, ge=1)
    #: Environment runners (Ray actors of one CPU each); 0 samples in the learner's process.
    num_env_runners: int = Field(1, ge=0)
    #: ``null``: start Ray on this machine; ``auto`` or ``HOST:PORT``: join that cluster.
    ray: str | None = None
    #: ``mlp``: RLlib's action-masking MLP (``hidden``); ``card``: the card network (``card``).
    module: Literal["mlp", "card"] = "mlp"
    hidden: list[int] = Field(default_factory=lambda: [256, 256], min_length=1)
    #: ``CardNet``'s options: ``card_width``, ``global_width``, ``capture_sum``, ``lookahead``.
    card: dict[str, Any] = Field(default_factory=dict)
    #: The pool of opponents: ``snapshot`` and players by name.
    opponents: list[str] = Field(default_factory=lambda: list(POOL), min_length=1)
    warm_start: RLlibWarmStart | None = None
    train_batch_size: int = Field(4000, ge=1)
    minibatch_size: int = Field(500, ge=1)
    num_epochs: int = Field(4, ge=1)
    learning_rate: float = Field(3e-4, gt=0)
    gae_lambda: float = Field(1.0, ge=0, le=1)
    clip_param: float = Field(0.3, gt=0)
    entropy_coeff: float = Field(0.0, ge=0)
    vf_loss_coeff: float = Field(1.0, ge=0)
    #: Threads of torch in this process (the learner); 0 leaves torch's default.
    torch_threads: int = Field(0, ge=0)
    #: Refresh the frozen snapshot from the learner every this many iterations.
    snapshot_every: int = Field(2, ge=1)
    #: Save a resumable checkpoint (``checkpoints/iteration_NNNNNN``) every this many
    #: iterations, and after the last.
    checkpoint_every: int = Field(5, ge=1)
    #: Duplicate deals against random in the final evaluation; 0 skips it.
    final_deals: int = Field(2000, ge=0)

    @model_validator(mode="after")
    def _check(self) -> RLlibRunConfig:
        from agents import AGENTS

        if self.warm_start is not None and self.module != "card":
            raise ValueError("warm_start clones into the card network: set module: card")
        unknown = set(self.card) - {"card_width", "global_width", "capture_sum", "lookahead"}
        if unknown:
            raise ValueError(
                f"card takes card_width, global_width, capture_sum and lookahead, "
                f"not {sorted(unknown)}"
            )
        for name in self.opponents:
            if name != SNAPSHOT and name not in AGENTS:
                raise ValueError(
                    f"opponent {name!r} is neither 'snapshot' nor a player of {sorted(AGENTS)}"
                )
        if len(set(self.opponents)) != len(self.opponents):
            raise ValueError(f"opponents has a name twice: {self.opponents}")
        return self


def load_rllib_config(path: Path, overrides: list[str]) -> RLlibRunConfig:
    """Read an RLlib run's YAML config as ``scopa train`` reads its own (``load_model``): the
    overrides merged in, every bad key, a missing file and bad YAML named in a ``ConfigError``."""
    return load_model(RLlibRunConfig, path, overrides)


def _descendants_cpu() -> float:
    """CPU seconds of this process's live descendants: a local Ray's nodes and workers."""
    import psutil

    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


#: What a ``--resume`` may change: how long and where the run goes on, not what it learns.
RESUMABLE = frozenset(
    {"iterations", "final_deals", "checkpoint_every", "ray", "num_env_runners", "torch_threads"}
)


def check_rllib_resume(saved: RLlibRunConfig, asked: RLlibRunConfig) -> None:
    """Refuse overrides on ``--resume`` that would change what the checkpoint learned."""
    for key in type(saved).model_fields:
        if key not in RESUMABLE and getattr(saved, key) != getattr(asked, key):
            raise ConfigError(
                f"{key} is {getattr(saved, key)!r} in the run, {getattr(asked, key)!r} asked: a "
                f"resume may change only {sorted(RESUMABLE)}"
            )


def save_rllib_checkpoint(algorithm: Any, run_dir: Path, state: dict[str, Any]) -> Path:
    """``checkpoints/iteration_NNNNNN``: RLlib's save of the algorithm (learner weights and
    optimizer, every module, the snapshot too, connector states, metrics) in ``algo/``, the
    run's counters in ``state.json`` and a manifest of every file, written atomically."""
    import json

    from training.checkpoints import checkpoint_folder, write_manifest

    name = f"iteration_{state['iteration']:06d}"
    state = {**state, "kl_coeffs": kl_coeffs(algorithm)}
    with checkpoint_folder(run_dir, name) as tmp:
        algorithm.save(str((tmp / "algo").resolve()))
        write_text(tmp / "state.json", json.dumps(state, indent=2) + "\n")
        write_manifest(tmp)
    return run_dir / "checkpoints" / name


def latest_rllib_checkpoint(run_dir: Path) -> Path:
    """The newest whole checkpoint of an RLlib run; each newer broken one is named and why."""
    import sys

    from scopa_env.errors import CheckpointError
    from training.checkpoints import latest_checkpoint, manifest_problem

    skipped: list[str] = []
    checkpoint = latest_checkpoint(run_dir, skipped, "iteration", manifest_problem)
    for line in skipped:
        print(f"skipping checkpoint {line}", file=sys.stderr)
    if checkpoint is None:
        raise CheckpointError(
            f"{run_dir} has no complete checkpoint to resume from (checkpoints/iteration_*/ "
            "with its done marker); start the run again with --config and another --run-dir"
        )
    return checkpoint


def check_opponents_seated(config: RLlibRunConfig) -> None:
    """Refuse an opponent of the pool that cannot play the run's table (one that plays
    two-player Scopa only), before Ray starts or a file is written: its module would fail in
    an env runner at its first decision."""
    from agents import make_agent
    from scopa_env.players import check_table

    for name in config.opponents:
        if name != SNAPSHOT:
            check_table(make_agent(name), config.table, f"opponent {name}")


def train_rllib(
    config: RLlibRunConfig,
    run_dir: Path | None = None,
    resume: bool = False,
    progress: bool = False,
) -> str:
    """Train as ``config`` says; returns the summary the command prints (with ``progress``, a
    bar of the warm start's collection on stderr).

    A checkpoint every ``checkpoint_every`` iterations (and after the warm start) keeps the
    run resumable: Ctrl-C or SIGTERM stops it with its newest checkpoint, a ``summary.txt``
    marked partial and a line saying how to continue (``KeyboardInterrupt``), and
    ``resume=True`` continues ``run_dir`` from its newest whole checkpoint. The resumed run
    continues exactly as the run that wrote the checkpoint went on (see the module
    docstring), ``metrics.csv`` cut back to the checkpoint and its later rows played again.
    """
    import json

    from evaluation.records import folder_lock
    from training.checkpoints import cut_csv

    run_dir = Path(run_dir or f"runs/{config.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    check_opponents_seated(config)
    if resume:
        check_rllib_resume(load_rllib_config(run_dir / "config.yaml", []), config)
        checkpoint: Path | None = latest_rllib_checkpoint(run_dir)
    elif run_dir.exists():
        raise ConfigError(f"run folder {run_dir} already exists; choose another --run-dir")
    else:
        checkpoint = None
        run_dir.mkdir(parents=True)
    with folder_lock(run_dir):
        write_text(run_dir / "config.yaml", yaml.safe_dump(config.model_dump()))
        lines: list[str] = []
        state = {"iteration": 0, "env_steps": 0, "ppo_seconds": 0.0}
        if checkpoint is not None:
            state = json.loads((checkpoint / "state.json").read_text())
            cut_csv(run_dir / "metrics.csv", "iteration", state["iteration"])
            lines = list(state.get("lines", []))
            print(f"resuming {run_dir} at iteration {state['iteration']} ({checkpoint})")
        state["done"] = state["iteration"]
        try:
            return _train_rllib(config, run_dir, checkpoint, state, lines, progress)
        except KeyboardInterrupt:
            from training.checkpoints import latest_checkpoint, manifest_problem

            kept = latest_checkpoint(run_dir, None, "iteration", manifest_problem)
            how = "it stopped before its first checkpoint: start it again with --config"
            if kept is not None:
                how = (
                    f"the run keeps its checkpoint at iteration {int(kept.name[10:])}: "
                    f"continue it with scopa train --resume {run_dir}"
                )
            partial = [f"PARTIAL: stopped after iteration {state['done']} of "
                       f"{config.iterations}; {how}", *lines]  # fmt: skip
            write_text(run_dir / "summary.txt", "\n".join(partial) + "\n")
            raise KeyboardInterrupt(how) from None


def _train_rllib(
    config: RLlibRunConfig,
    run_dir: Path,
    checkpoint: Path | None,
    state: dict[str, Any],
    lines: list[str],
    progress: bool,
) -> str:
    import torch

    from evaluation.harness import evaluate
    from evaluation.ray_backend import connect, import_ray
    from evaluation.records import append_csv

    ray = import_ray()
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    wall, cpu = time.perf_counter(), time.process_time()
    started = connect(config.ray or "local", config.num_env_runners + 1)
    first = state["iteration"]
    algorithm = None
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
            module=config.module,
            card=config.card,
            opponents=tuple(config.opponents),
            gae_lambda=config.gae_lambda,
            clip_param=config.clip_param,
            entropy_coeff=config.entropy_coeff,
            vf_loss_coeff=config.vf_loss_coeff,
        ).build_algo()
        if checkpoint is not None:
            algorithm.restore_from_path(str((checkpoint / "algo").resolve()))
            set_kl_coeffs(algorithm, state.get("kl_coeffs", {}))
        elif config.warm_start is not None:
            lines.append(warm_start(algorithm, config, progress))
            warm = algorithm.save(str((run_dir / "checkpoint_warm").resolve())).checkpoint.path
            lines.append(f"the clone before PPO: {warm}")
            print(*lines[-2:], sep="\n", flush=True)
            save_rllib_checkpoint(algorithm, run_dir, {**state, "lines": lines})
        restart(algorithm, config.seed, first)
        ppo_wall = time.perf_counter()
        lifetime = _lifetime_steps(algorithm)  # RLlib's count as restored, if it restores it
        steps = state["env_steps"]
        for iteration in range(first + 1, config.iterations + 1):
            result = algorithm.train()
            steps = state["env_steps"] + _lifetime_steps(algorithm) - lifetime
            returns = result["env_runners"].get("module_episode_returns_mean", {})
            main_return = returns.get(LEARNER, float("nan"))
            print(
                f"iteration {iteration}: {steps:,} env steps, {time.perf_counter() - wall:.0f} s, "
                f"main's mean return {main_return:+.2f}",
                flush=True,
            )
            append_csv(
                run_dir / "metrics.csv",
                [{"iteration": iteration, "env_steps": steps, "main_return_mean": main_return}],
            )
            if iteration % config.snapshot_every == 0:
                refresh_snapshot(algorithm)
            state["done"] = iteration
            if iteration % config.checkpoint_every == 0 or iteration == config.iterations:
                seconds = state["ppo_seconds"] + time.perf_counter() - ppo_wall
                saved = {"iteration": iteration, "env_steps": steps, "ppo_seconds": seconds}
                save_rllib_checkpoint(algorithm, run_dir, {**saved, "lines": lines})
                restart(algorithm, config.seed, iteration)
                state.update(saved)
                ppo_wall, lifetime = time.perf_counter(), _lifetime_steps(algorithm)
        ppo_seconds = state["ppo_seconds"] + time.perf_counter() - ppo_wall
        ray_cpu_s = _descendants_cpu()
        final = Path(algorithm.save(str((run_dir / "checkpoint").resolve())).checkpoint.path)
    finally:
        if algorithm is not None:  # its env runners too, when a stop leaves Ray running
            algorithm.stop()
        if started:
            ray.shutdown()
    seconds, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    resumed = f", resumed at iteration {first}" if checkpoint is not None else ""
    lines += [
        f"{config.iterations} iterations, {steps:,} env steps of PPO in {ppo_seconds:.0f} s "
        f"({steps / max(ppo_seconds, 1e-9):.0f} steps/s learning included, "
        f"{config.num_env_runners} env runner(s){resumed}); {seconds:.0f} s in all this "
        f"session, CPU {cpu_s:.0f} s in this process and {ray_cpu_s:.0f} s in its child "
        "processes (a local Ray's)",
        f"checkpoint: {final}",
    ]
    if config.final_deals:
        _, summaries, _ = evaluate(
            [str(final), "random"], deals=config.final_deals, seed=config.seed
        )
        s = summaries[0]
        lines.append(
            f"against random over {config.final_deals} duplicate deals: "
            f"{s.points_per_deal:+.3f} ± {s.points_per_deal_ci:.3f} points per deal"
        )
    text = "\n".join(lines) + "\n"
    write_text(run_dir / "summary.txt", text)
    return text


def _lifetime_steps(algorithm: Any) -> int:
    """RLlib's count of env steps sampled over the algorithm's life."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    return int(
        algorithm.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
    )
