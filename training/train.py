"""MaskablePPO self-play on the vectorized environment, from a config.

Read top to bottom: ``train`` (seeds, run folder, environment and opponent
pool, model, callbacks, learning, final evaluation, report), then the pieces it uses.

    scopa train --config configs/quick.yaml [key=value ...]   # a new run in runs/NAME-TIMESTAMP
    scopa train --resume runs/quick-20250101-120000           # continue from its last checkpoint

A run folder holds ``config.yaml`` (the resolved config), ``meta.json`` (seed, library versions,
machine), ``checkpoints/`` (resumable: model with optimizer, opponent pool, random states),
``best.zip`` (best periodic evaluation), ``final.zip``, ``evals.csv``, ``tb/`` (TensorBoard),
``report.md`` and, when there are periodic evaluations, ``learning_curve.png``.
"""

from __future__ import annotations

import functools
import json
import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from evaluation.records import atomic_path, folder_lock, library_versions, write_csv, write_text
from scopa_env.errors import CheckpointError
from training.callback import TrainingCallback
from training.checkpoint_eval import eval_table, evaluate_checkpoint
from training.checkpoints import (
    RunState,
    cpu_seconds,
    latest_checkpoint,
    preserved_rng,
    rewind_run,
    seed_everything,
)
from training.config import ConfigError, TrainConfig, check_resume, dump_config, load_config
from training.report import (
    export_agent,
    plot_learning_curve,
    write_partial_report,
    write_report,
)

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

    from agents.card_policy import CardPolicy


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
    """Train, evaluate and report one run; ``resume`` continues ``run_dir``'s last checkpoint.

    Interrupted (Ctrl-C, SIGTERM), it stops within seconds with the run folder as its last
    checkpoint left it, and raises ``KeyboardInterrupt`` with a line saying how to continue.
    """
    # 0. Nothing is written before the request is checked, and one command at a time.
    run_dir = Path(run_dir) if run_dir else default_run_dir(config)
    if resume:
        tasks_read = _saved_tasks(run_dir) > 0 and latest_checkpoint(run_dir) is None
        check_resume(load_config(run_dir / "config.yaml"), config, tasks_saved=tasks_read)
    config.check_export()
    check_seated(config)
    if not resume:
        _refuse_existing(run_dir)
    live: dict[str, Any] = {}
    with folder_lock(run_dir):  # a second command writing this run folder is refused
        try:
            return _train(config, run_dir, resume, progress, live)
        except KeyboardInterrupt:
            how = _how_to_continue(run_dir)
            _report_stop(run_dir, config, live, how)
            raise KeyboardInterrupt(how) from None


def collect_decisions(
    config: TrainConfig, run_dir: Path | str, resume: bool = False, progress: bool = True
) -> int:
    """Play the warm start's decisions into ``run_dir/warm_start`` and stop: no clone, no PPO.

    The tasks are those ``train`` would play (the same seeds), so ``scopa train --resume
    run_dir`` later clones them and trains on, and ``scopa last-round``/``seat-value`` fit
    networks to them. Resumed, it plays only the tasks not yet saved. Returns the decisions.
    """
    cfg = config.warm_start
    if cfg.teacher is None or cfg.workers is None:
        raise ConfigError(
            "collecting decisions needs warm_start.teacher and warm_start.workers (the tasks "
            f"are saved one file each), got teacher={cfg.teacher!r}, workers={cfg.workers!r}"
        )
    run_dir = Path(run_dir)
    if resume:
        check_resume(load_config(run_dir / "config.yaml"), config, tasks_saved=True)
    else:
        _refuse_existing(run_dir)
    check_seated(config)
    from training.warm_start import collect_in_tasks

    with folder_lock(run_dir):
        write_text(run_dir / "config.yaml", dump_config(config))
        if not (run_dir / "meta.json").is_file():
            write_text(run_dir / "meta.json", json.dumps(run_metadata(config), indent=2) + "\n")
        data = collect_in_tasks(
            functools.partial(warm_start_task, config),
            cfg.samples,
            cfg.task_samples,
            config.ppo.gamma,
            cfg.workers,
            run_dir / "warm_start",
            cfg.ray,
            show_progress=progress,
        )
    return len(data.actions)


def check_seated(config: TrainConfig) -> None:
    """Refuse a warm start's teacher or roll-in player that cannot play the run's table (one
    that plays two-player Scopa only, or a network of another table), before anything is
    written: it would otherwise fail at its first decision, in a run folder left behind."""
    from agents import make_agent
    from scopa_env.players import check_table

    cfg, rules = config.warm_start, config.resolved_rules()
    players = {"warm_start.rollin": (cfg.rollin, cfg.rollin_options)}
    if cfg.init_from is None:  # with init_from the teacher only names who taught the clone
        players["warm_start.teacher"] = (cfg.teacher, cfg.teacher_options)
    for key, (name, options) in players.items():
        if name is not None:
            player = make_agent(name, rules=rules, **options)
            check_table(player, config.table, f"{key}={name}")


def _refuse_existing(run_dir: Path) -> None:
    """A new run never writes into a folder that exists: another run's, or this one's to resume."""
    if run_dir.exists():
        raise ConfigError(
            f"run folder {run_dir} already exists: continue it with --resume {run_dir}, or "
            "choose another run_dir"
        )


def _saved_tasks(run_dir: Path) -> int:
    return len(list((run_dir / "warm_start").glob("task_*.npz")))


def _report_stop(run_dir: Path, config: TrainConfig, live: dict[str, Any], how: str) -> None:
    """Write the stopped run's partial report from its live counters (``_train``'s ``live``).

    A run stopped before its folder documented itself has nothing to report; a report that
    fails is named, never allowed to hide the stop.
    """
    if not (run_dir / "meta.json").is_file():
        return
    state = live.get("state", RunState())
    model = live.get("model")
    timesteps = model.num_timesteps if model is not None else 0
    stopped = (
        f"stopped after update {state.updates} of {config.total_updates}, "
        f"{timesteps:,} of {config.total_timesteps:,} environment steps; {how}"
    )
    try:
        write_partial_report(run_dir, config, timesteps, state, stopped)
    except Exception as error:  # noqa: BLE001 - the stop matters more than its report
        print(f"no partial report: {type(error).__name__}: {error}", file=sys.stderr)


def _how_to_continue(run_dir: Path) -> str:
    checkpoint, tasks = latest_checkpoint(run_dir), _saved_tasks(run_dir)
    if checkpoint is not None:
        kept = f"its checkpoint at update {int(checkpoint.name.removeprefix('update_'))}"
    elif tasks:
        kept = f"{tasks} warm-start tasks"
    else:
        kept = "no checkpoint yet (a resume starts it again)"
    return f"the run keeps {kept}: continue it with scopa train --resume {run_dir}"


def _train(
    config: TrainConfig, run_dir: Path, resume: bool, progress: bool, live: dict[str, Any]
) -> TrainResult:
    import torch
    from sb3_contrib import MaskablePPO

    from agents.oracle_policy import save_for_play
    from training.selfplay import OpponentPool

    # 1. Seeds and threads: the same seed and config give the same run on the same machine.
    cpu_start = cpu_seconds()
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)

    # 2. The run folder documents itself before any training happens.
    if resume:
        skipped: list[str] = []
        checkpoint = latest_checkpoint(run_dir, skipped)
        for line in skipped:
            print(f"skipping checkpoint {line}", file=sys.stderr)
        started = (run_dir / "meta.json").is_file() or (run_dir / "warm_start").is_dir()
        if checkpoint is None and not started:
            raise CheckpointError(
                f"{run_dir} has no complete checkpoint to resume from (checkpoints/update_*/ "
                "with its done marker); start the run again with --config"
            )
        if checkpoint is None:  # the same seed from the start is the same run
            if (run_dir / "warm_start").is_dir():
                print(f"{run_dir} stopped in its warm start: starting again from the saved tasks")
            else:
                print(f"{run_dir} stopped before its first checkpoint: starting it again")
            rewind_run(run_dir, None, -1)
        if config != load_config(run_dir / "config.yaml"):  # e.g. a longer total_timesteps
            write_text(run_dir / "config.yaml", dump_config(config))
    else:
        checkpoint = None
        write_text(run_dir / "config.yaml", dump_config(config))
    if not (run_dir / "meta.json").is_file():  # a new run, or a folder of another run's tasks
        write_text(run_dir / "meta.json", json.dumps(run_metadata(config), indent=2) + "\n")

    # 3. Environment and opponent pool at the config's table. The learner plays every side in
    #    turn (the env alternates them), its partners' seats too.
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
        live.update(state=state, model=model)
        if config.warm_start.init_from is not None:
            from training.warm_start import start_from

            state.warm_start = start_from(model, saved_model(config.warm_start.init_from))
            state.wall_s += state.warm_start["seconds"]
            with atomic_path(run_dir / "clone.zip") as tmp:
                save_for_play(model, tmp)
        elif config.warm_start.teacher is not None:
            if config.warm_start.finetune_from is not None:
                from training.warm_start import start_from

                start_from(model, saved_model(config.warm_start.finetune_from), "finetune_from")
            state.warm_start = run_warm_start(model, env, config, run_dir, progress)
            state.wall_s += state.warm_start["seconds"]
            with atomic_path(run_dir / "clone.zip") as tmp:  # PPO's starting point, to compare
                save_for_play(model, tmp)
        if config.warm_start.critic_samples:
            from training.warm_start import fit_critic

            assert state.warm_start is not None  # the config asks for a starting point
            with preserved_rng():
                fitted = fit_critic(model, env, config.warm_start, seed=config.seed + 5)
            state.warm_start.update(fitted)
            state.warm_start["seconds"] += fitted["critic_seconds"]
            state.wall_s += fitted["critic_seconds"]
            print(
                f"critic fitted to the start's play: {fitted['critic_samples']:,} decisions, "
                f"{100 * fitted['critic_ev']:.1f}% of their returns' variance explained"
            )
        if pool.probs.get("start") or config.selfplay.baseline == "start":
            # The starting point as it is (cloned), before softening.
            pool.set_start(model.policy.state_dict())
        if config.ppo.init_temperature != 1:
            # init_temperature needs the card policy (PPOConfig checks it)
            cast("CardPolicy", model.policy).soften(config.ppo.init_temperature)
    else:
        # The config's PPO settings win over the checkpoint's, so a resume can change them.
        settings = {k: v for k, v in ppo_kwargs(config).items() if k != "policy_kwargs"}
        model = MaskablePPO.load(
            checkpoint / "model.zip", env=env, device=config.device, **settings
        )
        state = RunState.load(checkpoint, pool)
        rewind_run(run_dir, checkpoint, state.updates)
        print(f"resuming {run_dir} at update {state.updates} ({model.num_timesteps:,} steps)")
    env.attach_policy(model.policy)
    if config.selfplay.baseline is not None and not env.deal_baseline.active:
        raise RuntimeError("selfplay.baseline=start, but the run's pool holds no start")
    live.update(state=state, model=model)

    # 5. Callbacks do everything around PPO's updates: pool, checkpoints, evaluation, progress.
    callback = TrainingCallback(
        config, run_dir, pool, env, state, progress, cpu_start, resumed=checkpoint is not None
    )

    # 6. Learn (SB3 counts from the checkpoint's num_timesteps when resuming).
    remaining = config.total_timesteps - model.num_timesteps
    if remaining > 0:
        try:
            model.learn(
                remaining,
                callback=callback,
                reset_num_timesteps=checkpoint is None,
                tb_log_name="ppo",
            )
        finally:
            if callback.bar is not None:
                callback.bar.close()
    callback.finish(model)
    with atomic_path(run_dir / "final.zip") as tmp:
        save_for_play(model, tmp)
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
    dest = config.export_dir()
    if dest is not None:
        try:
            config.check_export()  # an agent may have appeared there while this run trained
        except ConfigError as error:
            print(f"not exported: {error}", file=sys.stderr)
        else:
            export_agent(run_dir, chosen, dest, config, model.num_timesteps, state)
    steps_per_s = state.learn_steps / max(state.learn_s, 1e-9)
    return TrainResult(
        run_dir, model.num_timesteps, state.wall_s + state.eval_s, steps_per_s, final_eval, table
    )


def run_warm_start(
    model: MaskablePPO, env: Any, config: TrainConfig, run_dir: Path, progress: bool = True
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
            rollin=rollin_player(config, config.seed + 6),
            show_progress=progress,
        )
    played = "" if cfg.rollin is None else f" where {cfg.rollin} played"
    print(
        f"warm start: cloned {cfg.teacher}{played} on {result.samples:,} decisions in "
        f"{result.seconds:.0f} s, {100 * result.accuracy:.1f}% agreement where there is a choice"
    )
    return {"samples": result.samples, "accuracy": result.accuracy, "seconds": result.seconds}


def saved_model(name: str) -> Path:
    """The saved model ``warm_start.init_from`` or ``finetune_from`` names: a path, or a shipped
    policy network by its player name (``pretrained_v5``, ``pretrained_v4``)."""
    from agents.policy import checkpoint_path

    return checkpoint_path(name)


def rollin_player(config: TrainConfig, seed: int) -> Any | None:
    """The player ``warm_start.rollin`` names, or ``None`` where the teacher plays."""
    from agents import make_agent

    cfg = config.warm_start
    if cfg.rollin is None:
        return None
    return make_agent(cfg.rollin, rules=config.resolved_rules(), seed=seed, **cfg.rollin_options)


def warm_start_task(config: TrainConfig, index: int) -> tuple[Any, Any, Any]:
    """Task ``index`` of a warm start in workers: its own environments, pool draws, teacher and
    roll-in player (``None`` without ``warm_start.rollin``).

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
    return make_training_env(task, pool), teacher, rollin_player(config, seed + 6)


def policy_class(config: TrainConfig) -> Any:
    if config.ppo.oracle_critic:
        from agents.oracle_policy import OracleCardPolicy

        return OracleCardPolicy
    if config.ppo.policy == "card":
        from agents.card_policy import CardPolicy

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
        policy_kwargs["table"] = config.table  # saved with the model: it refuses other tables
        if ppo.oracle_critic:
            from scopa_env.privileged import hidden_size

            policy_kwargs["hidden"] = hidden_size(config.resolved_table().players)
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


def default_run_dir(config: TrainConfig) -> Path:
    if config.run_dir:
        return Path(config.run_dir)
    return Path("runs") / f"{config.name}-{datetime.now():%Y%m%d-%H%M%S}"


def run_metadata(config: TrainConfig) -> dict[str, Any]:
    return {
        "name": config.name,
        "seed": config.seed,
        "started": datetime.now().isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "versions": {"python": platform.python_version(), **library_versions()},
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
    }


# The training environment -------------------------------------------------------------------


def make_training_env(config: TrainConfig, pool: Any) -> Any:
    """The learner against the opponent pool on the batched engine, as one SB3 VecEnv."""
    from agents.greedy import GreedyAgent
    from agents.heuristic import HeuristicAgent
    from agents.ismcts import ISMCTSAgent
    from agents.random_agent import RandomAgent
    from training.selfplay import PoolVecEnv

    rules = config.resolved_rules()
    baselines: dict[str, Any] = {
        "random": RandomAgent(seed=config.seed + 2),
        "greedy": GreedyAgent(rules),
        "heuristic": HeuristicAgent(rules),
    }
    if "ismcts" in config.selfplay.opponents:  # only then: the others' seeds stay as they were
        baselines["ismcts"] = ISMCTSAgent(rules, seed=config.seed + 7)
    if "rollin" in config.selfplay.opponents:
        baselines["rollin"] = rollin_player(config, config.seed + 8)
        if getattr(baselines["rollin"], "follows_deal", False):
            raise ConfigError(
                f"selfplay.opponents: rollin={config.warm_start.rollin!r} follows the deal, and "
                "one copy of a pool member plays every game's row: it cannot be an opponent"
            )
    return PoolVecEnv(
        config.n_envs,
        config.selfplay.groups,
        pool,
        baselines,
        rules=rules,
        table=config.table,
        episode=config.episode,
        reward=config.reward,
        seed=config.seed,
        shaping=config.shaping,
        gamma=config.ppo.gamma,
        hidden=config.ppo.oracle_critic,
        deal_baseline=config.selfplay.baseline,
        baseline_play=config.selfplay.baseline_play,
    )
