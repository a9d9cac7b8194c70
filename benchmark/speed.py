"""Decisions per second of every Scopa engine beside reference engines, one run.

Three comparisons, each measured in the same process, interleaved repeat by repeat so that the
machine's load affects peers alike, and reported as best and median of the repeats. The cases
compared with each other (the engines; the AEC loops) take turns in slices of 0.1 s within
each repeat, and each ratio is also the median of its ratios repeat by repeat (paired), which
a busy neighbour moves least:

==========  =======================================================  =========================
Benchmark   What is timed                                            Target
==========  =======================================================  =========================
engine      random playouts of whole deals with ``Deal``:            >= 1/2 OpenSpiel
            ``legal_moves()`` + ``play()`` (and the fast path)
aec         a random masked-action AEC loop (``last``, mask,         ``raw_env`` >= 3x
            ``step``) over ``scopa_v0.raw_env()`` and ``.env()``;     ``connect_four_v3``'s;
            the same loop at every other table                       ``env()`` >= 0.8x the
                                                                     null env's; every table
                                                                     >= 0.9x two players
batched     ``BatchedScopa.step`` with observations and masks,       >= 1M/s on one core and
            uniform random legal actions, batch size 1..16384        >= 10x OpenSpiel
tables      the same at every other table (``scopa_3`` .. Scopone),  >= 1M/s on one core each
            batch sizes from 1024, beside the two-player figure
==========  =======================================================  =========================

Peers: OpenSpiel's C++ ``crazy_eights`` through pyspiel (random legal play, the observation
tensor built every step) and PettingZoo's ``connect_four_v3`` (the same AEC loop). The AEC
comparison also runs both environments' ``raw_env`` and a do-nothing environment under the same
three classic wrappers (``null_aec_env``): the wrappers' attribute forwarding costs more per
step than either environment, so the do-nothing environment's rate is the ceiling of any
wrapped environment, and its ratio to ``connect_four_v3`` the best ratio attainable. A decision
is one action chosen by a player (chance nodes and PettingZoo's ``None`` steps are not
counted). The process is pinned to one CPU core (the least busy); rates are reported per
wall-clock second and per second of CPU time the process got, since other processes may share
the core. Peak memory of the batched engine is measured
with ``tracemalloc`` (numpy allocations included) in a separate, untimed run.

    scopa bench                 # full run: 5 repeats of 2 s each
    scopa bench --quick         # a short run: 2 repeats of 0.3 s, fewer batch sizes

Results go to ``--out`` (default ``runs/bench/``) as ``bench.json`` and ``bench.md``.
"""

from __future__ import annotations

import functools
import os
import platform
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np

from evaluation.records import library_versions
from scopa_env.rules import resolve_rules

BATCH_SIZES = (1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384)
QUICK_BATCH_SIZES = (1, 64, 1024, 4096, 16384)
#: A benchmark: given a time budget in seconds, run and return ``(decisions, seconds)``.
Runner = Callable[[float], tuple[int, float]]
BENCH_LIBRARIES = ("scopa-env", "numpy", "pettingzoo", "open-spiel", "gymnasium")
#: The tables of more than two seats whose AEC loop is held to the two-player one.
AEC_TABLES = ("scopa_3", "scopa_4", "scopa_6", "scopone", "scopone_scientifico")
#: The least rate of a table's AEC loop, as a fraction of the two-player one.
AEC_TABLE_TARGET = 0.9
#: The largest batch the vector environment is measured at.
VECTOR_ENV_MAX = 4096


# Benchmarks -----------------------------------------------------------------------------------


def engine_playouts(rules: str, seed: int, fast: bool = False) -> Runner:
    """Random legal playouts of whole deals with the rules engine."""
    from scopa_env.engine import Deal

    rng = np.random.default_rng(seed)
    pick = random.Random(seed)

    def run(budget: float) -> tuple[int, float]:
        decisions = 0
        start = time.perf_counter()
        while True:
            deal = Deal.new(rng, first_player=decisions & 1, rules=rules)
            if fast:
                while not deal.is_over:
                    card, capture = pick.choice(deal.legal_mask_moves())
                    deal.play_unchecked(card, capture)
                    decisions += 1
            else:
                while not deal.is_over:
                    deal.play(pick.choice(deal.legal_moves()))
                    decisions += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return decisions, elapsed

    return run


def openspiel_playouts(seed: int, game_name: str = "crazy_eights") -> Runner:
    """OpenSpiel's C++ game through pyspiel: random legal play, observation tensor each step."""
    import pyspiel

    game = pyspiel.load_game(game_name)
    pick = random.Random(seed)

    def run(budget: float) -> tuple[int, float]:
        decisions = 0
        start = time.perf_counter()
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(pick.choice(outcomes)[0])
                else:
                    state.observation_tensor()
                    state.apply_action(pick.choice(state.legal_actions()))
                    decisions += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return decisions, elapsed

    return run


def aec_loop(make_env: Callable[[], Any], seed: int) -> Runner:
    """PettingZoo's AEC loop with uniform random masked actions; counts agent decisions."""
    env = make_env()
    env.reset(seed=seed)
    pick = random.Random(seed)

    def run(budget: float) -> tuple[int, float]:
        decisions = 0
        start = time.perf_counter()
        while True:
            env.reset()
            for _agent in env.agent_iter():
                observation, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    action = None
                else:
                    action = pick.choice(np.flatnonzero(observation["action_mask"]).tolist())
                    decisions += 1
                env.step(action)
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return decisions, elapsed

    return run


def null_aec_env(wrapped: bool = True) -> Any:
    """A two-agent AEC environment that does nothing, for the cost of PettingZoo's own machinery.

    Its observation and mask have ``scopa_v0``'s shapes, every action is legal and an episode
    is 36 decisions, like a deal. Under the classic wrappers (``TerminateIllegal``,
    ``AssertOutOfBounds``, ``OrderEnforcing``, as ``scopa_v0.env()`` and
    ``connect_four_v3.env()`` use) it bounds what any wrapped environment can reach.
    """
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers

    from scopa_env.observation import OBS_HIGH, OBS_SIZE

    class NullAEC(AECEnv):
        metadata = {"name": "null_v0", "render_modes": [], "is_parallelizable": False}
        possible_agents = ["player_0", "player_1"]
        episode_length = 36

        def __init__(self) -> None:
            super().__init__()
            self._obs: dict[str, np.ndarray] = {
                "observation": np.zeros(OBS_SIZE, np.float32),
                "action_mask": np.ones(80, np.int8),
            }
            self._observation_space = spaces.Dict(
                {
                    "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
                    "action_mask": spaces.Box(0, 1, (80,), np.int8),
                }
            )
            self._action_space: spaces.Discrete[np.int64] = spaces.Discrete(80)

        def observation_space(self, agent: str) -> spaces.Space:
            return self._observation_space

        def action_space(self, agent: str) -> spaces.Space:
            return self._action_space

        def observe(self, agent: str) -> dict[str, np.ndarray]:
            return self._obs

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            self.agents = list(self.possible_agents)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
            self.agent_selection = self.agents[0]
            self.decisions = 0

        def step(self, action: int | None) -> None:
            if self.terminations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self.decisions += 1
            self.agent_selection = self.agents[self.decisions % 2]
            if self.decisions == self.episode_length:
                self.terminations = dict.fromkeys(self.agents, True)

    env = NullAEC()
    if wrapped:
        env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
        env = wrappers.AssertOutOfBoundsWrapper(env)
        env = wrappers.OrderEnforcingWrapper(env)
    return env


def batched_steps(num_games: int, rules: str, seed: int, table: str = "scopa") -> Runner:
    """``BatchedScopa.step`` on random legal actions: observations and masks built each step."""
    from scopa_env.batched import BatchedScopa

    env = BatchedScopa(num_games, rules, table=table, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed + 1)
    for _ in range(3):  # warm up: buffers, tables, caches
        env.step(env.sample_actions(rng))

    def run(budget: float) -> tuple[int, float]:
        steps = 0
        start = time.perf_counter()
        while True:
            for _ in range(max(1, 256 // num_games)):
                env.step(env.sample_actions(rng))
                steps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return steps * num_games, elapsed

    return run


def vector_env_steps(num_envs: int, rules: str, seed: int) -> Runner:
    """The learner-centric Gymnasium ``ScopaVectorEnv`` against its random opponent."""
    from scopa_env.batched import random_legal_actions
    from scopa_env.vector_env import ScopaVectorEnv

    env = ScopaVectorEnv(num_envs, rules, seed=seed)
    env.reset(seed=seed)
    batch = env.batch

    def run(budget: float) -> tuple[int, float]:
        steps = 0
        start = time.perf_counter()
        while True:
            for _ in range(8):
                cards, offset = batch.engine.legal_actions_bits()
                env.step(random_legal_actions(cards, batch.rng) + offset)
                steps += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return steps * num_envs, elapsed

    return run


def batched_memory(num_games: int, rules: str, seed: int, steps: int = 45) -> dict[str, int]:
    """Peak traced memory of building and stepping a batch, and its state and buffer sizes.

    Single-deal episodes, so that episodes end within the steps and every buffer (the final
    observations too) is allocated.
    """
    from scopa_env.batched import BatchedScopa

    tracemalloc.start()
    try:
        env = BatchedScopa(num_games, rules, episode="deal", seed=seed)
        env.reset()
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            env.step(env.sample_actions(rng))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {
        "num_games": num_games,
        "peak_bytes": peak,
        "peak_bytes_per_game": peak // num_games,
        "state_bytes_per_game": env.state_bytes_per_game,
        "obs_mask_bytes_per_game": (env.obs.nbytes + env.mask.nbytes) // num_games,
    }


# Running and reporting ------------------------------------------------------------------------


def _stats(rates: list[float]) -> dict[str, Any]:
    return {"best": max(rates), "median": statistics.median(rates), "all": rates}


#: The slice of a group's round robin: short against the stretches a busy neighbour causes.
SLICE_SECONDS = 0.1


def _measure(
    groups: list[dict[str, Runner]], repeats: int, seconds: float, slice_seconds: float
) -> dict[str, dict[str, Any]]:
    """Run every case ``repeats`` times; decisions per wall and per CPU second.

    Each repeat runs the groups one after another. Within a group the cases take turns in
    slices of ``slice_seconds`` until each has had ``seconds`` (forward order on even repeats,
    backward on odd ones), so that a slow stretch of the machine falls on every case of the
    group alike, and a ratio of two cases of one group can be taken repeat by repeat
    (``_paired``).
    """
    names = [name for group in groups for name in group]
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        for group in groups:
            order = list(group) if repeat % 2 == 0 else list(reversed(group))
            done = dict.fromkeys(order, 0)
            elapsed = dict.fromkeys(order, 0.0)
            used = dict.fromkeys(order, 0.0)
            while True:
                left = [name for name in order if elapsed[name] < seconds]
                if not left:
                    break
                for name in left:
                    start = time.thread_time()
                    decisions, spent = group[name](min(slice_seconds, seconds - elapsed[name]))
                    used[name] += time.thread_time() - start
                    done[name] += decisions
                    elapsed[name] += spent
            for name in order:
                wall[name].append(done[name] / elapsed[name])
                cpu[name].append(done[name] / max(used[name], 1e-9))
    return {name: {"wall": _stats(wall[name]), "cpu": _stats(cpu[name])} for name in names}


def _paired(ours: dict[str, Any], peer: dict[str, Any], target: float) -> dict[str, Any]:
    """The ratio ``ours / peer``: of their best rates, of their medians, and the median of the
    ratios repeat by repeat (the measure a noisy machine moves least, for cases of one group)."""
    return {
        "target": target,
        **{
            clock: {
                "best": ours[clock]["best"] / peer[clock]["best"],
                "median": ours[clock]["median"] / peer[clock]["median"],
                "paired_median": statistics.median(
                    a / b for a, b in zip(ours[clock]["all"], peer[clock]["all"], strict=True)
                ),
            }
            for clock in ("wall", "cpu")
        },
    }


def _cpu_idle() -> dict[int, int]:
    """Idle jiffies of each CPU from ``/proc/stat``."""
    idle = {}
    with open("/proc/stat") as stat:
        for line in stat:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                idle[int(name[3:])] = int(fields[3]) + int(fields[4])
    return idle


def _pin_one_core() -> int | None:
    """Pin this process to one CPU, the least busy over a short look; None where unsupported."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1]
    try:
        before = _cpu_idle()
        time.sleep(0.5)
        after = _cpu_idle()
        cpu = max(cpus, key=lambda c: after.get(c, 0) - before.get(c, 0))
    except OSError:
        pass
    os.sched_setaffinity(0, {cpu})
    return cpu


def _fmt(rate: float) -> str:
    return f"{rate:,.0f}"


def markdown(result: dict[str, Any]) -> str:
    m = result["measurements"]
    best_n = result["best_batch_size"]
    lines = [
        "# scopa bench",
        "",
        f"{result['started']}; {result['machine']}; pinned to CPU {result['pinned_cpu']}; "
        f"{result['repeats']} repeats x {result['seconds']} s; rules `{result['rules']}`; "
        f"1-min load average {result['load_average_1min'][0]} before, "
        f"{result['load_average_1min'][1]} after (other processes share the machine).",
        "",
        "Decisions per second, best and median of the repeats, per wall-clock second and per "
        "second of CPU time this process got on its core (what one core does when it is not "
        "shared).",
        "",
        "| Benchmark | wall best | wall median | CPU best | CPU median |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, stats in m.items():
        wall, cpu = stats["wall"], stats["cpu"]
        lines.append(
            f"| {name} | {_fmt(wall['best'])} | {_fmt(wall['median'])} | {_fmt(cpu['best'])} | "
            f"{_fmt(cpu['median'])} |"
        )
    lines += [
        "",
        "Ratios of the best rates, of the medians, and the median of the ratios repeat by "
        "repeat (paired: the cases of a ratio take turns in short slices, so a busy stretch of "
        "the machine slows both).",
        "",
        "| Ratio | target | wall best | wall median | wall paired | CPU best | CPU median | "
        "CPU paired |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in result["ratios"].items():
        w, c = r["wall"], r["cpu"]
        lines.append(
            f"| {name} | {r['target']:g} | {w['best']:.2f} | {w['median']:.2f} | "
            f"{w['paired_median']:.2f} | {c['best']:.2f} | {c['median']:.2f} | "
            f"{c['paired_median']:.2f} |"
        )
    best = m[f"batched N={best_n}"]
    lines += [
        "",
        f"Best batch size: {best_n}: {_fmt(best['wall']['best'])} decisions per wall second, "
        f"{_fmt(best['cpu']['best'])} per CPU second (target 1,000,000).",
        "",
        "Every table at its best batch size, beside two-player Scopa in the same run (ratios of "
        "best rates, same clock; target 1,000,000 decisions per second each):",
        "",
        "| Table | best N | wall best | CPU best | wall / two-player | CPU / two-player |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for table, row in result["tables"].items():
        lines.append(
            f"| {table} | {row['best_batch_size']} | {_fmt(row['wall']['best'])} | "
            f"{_fmt(row['cpu']['best'])} | {row['wall']['ratio']:.2f} | {row['cpu']['ratio']:.2f} |"
        )
    lines += [
        "",
        "| Batch size | peak traced MB | peak bytes/game | state bytes/game | obs+mask bytes/game"
        " |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for mem in result["memory"]:
        lines.append(
            f"| {mem['num_games']} | {mem['peak_bytes'] / 2**20:.1f} | "
            f"{mem['peak_bytes_per_game']:,} | {mem['state_bytes_per_game']} | "
            f"{mem['obs_mask_bytes_per_game']} |"
        )
    return "\n".join(lines) + "\n"


def table_case(table: str, num_games: int) -> str:
    """The name of a batched measurement (two-player Scopa keeps its original name)."""
    return f"batched N={num_games}" if table == "scopa" else f"batched {table} N={num_games}"


def vector_env_size(sizes: tuple[int, ...]) -> int:
    """The batch size of the vector environment's case: the largest asked for up to
    ``VECTOR_ENV_MAX``, or ``VECTOR_ENV_MAX`` when every size asked for is larger."""
    return max((n for n in sizes if n <= VECTOR_ENV_MAX), default=VECTOR_ENV_MAX)


def table_sizes(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The batch sizes measured at the other tables: from 1024 (where the best lies), or the
    largest asked for."""
    return tuple(n for n in sizes if n >= 1024) or (max(sizes),)


def _tables_summary(
    measurements: dict[str, dict[str, Any]], tables: tuple[str, ...], sizes: tuple[int, ...]
) -> dict[str, dict[str, Any]]:
    """Per table: the best batch size, its rates and their ratio to two-player Scopa's best."""
    summary: dict[str, dict[str, Any]] = {}
    for table in ("scopa", *tables):
        candidates = sizes if table == "scopa" else table_sizes(sizes)
        best_n = max(candidates, key=lambda n: measurements[table_case(table, n)]["wall"]["best"])
        summary[table] = {"best_batch_size": best_n, **measurements[table_case(table, best_n)]}
    two = summary["scopa"]
    for row in summary.values():
        for clock in ("wall", "cpu"):
            row[clock] = {**row[clock], "ratio": row[clock]["best"] / two[clock]["best"]}
        row["target_met"] = {clock: row[clock]["best"] >= 1_000_000 for clock in ("wall", "cpu")}
    return summary


def benchmark(
    rules: str = "scopa",
    seed: int = 0,
    repeats: int = 5,
    seconds: float = 2.0,
    sizes: tuple[int, ...] = BATCH_SIZES,
    pin: bool = True,
    tables: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Measure every case, interleaved repeat by repeat; the result as ``bench.json`` holds it.

    ``tables``: the tables measured beside two-player Scopa (default every other one)."""
    resolve_rules(rules)  # a bad preset is refused before any measurement
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    if not seconds > 0:
        raise ValueError(f"seconds must be more than 0, got {seconds!r}")
    import pettingzoo
    from pettingzoo.classic import connect_four_v3

    from scopa_env import scopa_v0
    from scopa_env.environments import make_aec
    from scopa_env.tables import TABLES, resolve_table

    if tables is None:
        tables = tuple(TABLES)
    tables = tuple(resolve_table(name).name for name in tables)  # TableError names an unknown
    tables = tuple(name for name in tables if name != "scopa")

    cpu = _pin_one_core() if pin else None
    started = datetime.now(UTC).isoformat(timespec="seconds")

    engine: dict[str, Runner] = {
        "openspiel crazy_eights": openspiel_playouts(seed),
        "engine legal_moves+play": engine_playouts(rules, seed),
        "engine legal_mask_moves+play_unchecked": engine_playouts(rules, seed, fast=True),
    }
    aec: dict[str, Runner] = {
        "pettingzoo connect_four_v3 (AEC)": aec_loop(
            lambda: pettingzoo.make("aec", "classic/connect_four-v3"), seed
        ),
        "scopa_v0 (AEC)": aec_loop(lambda: scopa_v0.env(rules=rules), seed),
        "null env under the same wrappers (AEC)": aec_loop(null_aec_env, seed),
        "pettingzoo connect_four_v3 raw_env (AEC)": aec_loop(connect_four_v3.raw_env, seed),
        "scopa_v0 raw_env (AEC)": aec_loop(lambda: scopa_v0.raw_env(rules=rules), seed),
    }
    for table in AEC_TABLES:
        aec[f"{table} raw_env (AEC)"] = aec_loop(
            functools.partial(make_aec, table, wrapped=False, rules=rules), seed
        )
    groups: list[dict[str, Runner]] = [engine, aec]
    for n in sizes:
        groups.append({f"batched N={n}": batched_steps(n, rules, seed)})
    for table in tables:
        for n in table_sizes(sizes):
            groups.append({table_case(table, n): batched_steps(n, rules, seed, table)})
    vector_n = vector_env_size(sizes)
    groups.append(
        {f"ScopaVectorEnv N={vector_n} (learner+opponent)": vector_env_steps(vector_n, rules, seed)}
    )
    cases = sum(len(group) for group in groups)
    print(f"scopa bench: {cases} cases x {repeats} repeats x {seconds} s, CPU {cpu}")
    load_before = os.getloadavg()
    measurements = _measure(groups, repeats, seconds, min(SLICE_SECONDS, seconds))
    load_after = os.getloadavg()

    best_n = max(sizes, key=lambda n: measurements[f"batched N={n}"]["wall"]["best"])
    openspiel = measurements["openspiel crazy_eights"]
    batched = measurements[f"batched N={best_n}"]

    ratios = {
        "engine / OpenSpiel crazy_eights": _paired(
            measurements["engine legal_moves+play"], openspiel, 0.5
        ),
        "scopa_v0 AEC / connect_four_v3 AEC": _paired(
            measurements["scopa_v0 (AEC)"], measurements["pettingzoo connect_four_v3 (AEC)"], 3.0
        ),
        "scopa_v0 AEC / null env, same wrappers": _paired(
            measurements["scopa_v0 (AEC)"],
            measurements["null env under the same wrappers (AEC)"],
            0.8,
        ),
        "ceiling: null env / connect_four_v3 AEC, same wrappers": _paired(
            measurements["null env under the same wrappers (AEC)"],
            measurements["pettingzoo connect_four_v3 (AEC)"],
            3.0,
        ),
        "scopa_v0 raw_env / connect_four_v3 raw_env": _paired(
            measurements["scopa_v0 raw_env (AEC)"],
            measurements["pettingzoo connect_four_v3 raw_env (AEC)"],
            3.0,
        ),
        f"batched (N={best_n}) / OpenSpiel crazy_eights": _paired(batched, openspiel, 10.0),
    }
    for table in AEC_TABLES:
        ratios[f"{table} raw_env / scopa_v0 raw_env"] = _paired(
            measurements[f"{table} raw_env (AEC)"],
            measurements["scopa_v0 raw_env (AEC)"],
            AEC_TABLE_TARGET,
        )
    memory = [batched_memory(n, rules, seed) for n in sorted({min(sizes), best_n, max(sizes)})]
    result = {
        "started": started,
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "versions": library_versions(BENCH_LIBRARIES),
        "pinned_cpu": cpu,
        "load_average_1min": [round(load_before[0], 2), round(load_after[0], 2)],
        "repeats": repeats,
        "seconds": seconds,
        "rules": rules,
        "measurements": measurements,
        "ratios": ratios,
        "best_batch_size": best_n,
        "tables": _tables_summary(measurements, tables, sizes),
        "batched_target_met": {
            clock: batched[clock]["best"] >= 1_000_000 for clock in ("wall", "cpu")
        },
        "memory": memory,
    }
    return result
