"""Ray as the engine of the parallel work (issue 19): same results wherever the tasks ran.

One Ray cluster for the whole module, made with Ray's own multi-node test utility: a head node
and a worker node on this machine (``ray.cluster_utils.Cluster``), one CPU each, so the tasks
spread over both. Every test compares a Ray run with a run in this process or the local pool:
identical game records and warm-start decisions, tasks seen on both nodes, a worker killed
mid-run retried without changing a figure. Ray's start-up costs seconds, so it is started once.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluation.harness import JOURNAL, evaluate
from scopa_env.errors import TableError
from training.config import validate

pytestmark = pytest.mark.slow

PLAYERS = ["random", "greedy"]
#: Ten tasks of two duplicate pairs, played by the harness.
EVAL = {"deals": 20, "chunk": 2, "seed": 5}


def played(records: list[Any]) -> list[dict[str, Any]]:
    """Game records without the CPU time spent, which no two runs share."""
    return [{**asdict(r), "cpu_seconds_a": 0, "cpu_seconds_b": 0} for r in records]


def figures(summaries: list[Any]) -> list[dict[str, Any]]:
    return [{**asdict(s), "ms_per_move_a": 0, "ms_per_move_b": 0} for s in summaries]


def games_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as file:
        return [
            {k: v for k, v in row.items() if not k.startswith("cpu_")}
            for row in csv.DictReader(file)
        ]


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluation.ray_backend import RayUnavailableError, import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as if not installed
    with pytest.raises(RayUnavailableError, match="'distributed' extra"):
        import_ray()


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A head and a worker node of one CPU each, joined by this process; ended after."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    nodes.add_node(num_cpus=1)
    try:
        nodes.wait_for_nodes()
        _join(nodes)
        # The helpers below travel to the workers by value: this file is not a package.
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        yield nodes
    finally:
        ray.shutdown()
        nodes.shutdown()
        assert _ray_processes_left() == [], "Ray processes outlived the cluster"


def _ray_processes_left(wait_s: float = 20.0) -> list[str]:
    """The command lines of this process's descendants that are Ray's, once they had time to
    exit."""
    import time

    import psutil

    deadline = time.monotonic() + wait_s
    while True:
        left = []
        for child in psutil.Process().children(recursive=True):
            try:
                line = " ".join(child.cmdline())
            except psutil.Error:  # exited meanwhile
                continue
            if "ray" in line and child.status() != psutil.STATUS_ZOMBIE:
                left.append(line)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def _join(nodes: Any) -> None:
    import ray

    from evaluation.ray_backend import _pythonpath

    ray.init(
        address=nodes.address,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": _pythonpath()}},
    )


def _noted(folder: str, function: Any, item: Any) -> Any:
    """``function(item)``, leaving a file named after the Ray node that ran it."""
    from evaluation.ray_backend import node_id

    node = Path(folder) / node_id()
    node.mkdir(parents=True, exist_ok=True)
    (node / f"{os.getpid()}-{id(item)}-{np.random.default_rng().integers(1 << 62)}").touch()
    return function(item)


def _dies_once(marker: str, function: Any, item: Any) -> Any:
    """The first call anywhere kills its own worker process (SIGKILL); the others run."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return function(item)
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def _nodes_that_ran(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if any(p.iterdir())}


def _cluster_nodes() -> set[str]:
    import ray

    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}


@pytest.fixture(scope="module")
def local_records() -> list[Any]:
    """The evaluation played in this process: what every Ray run must give."""
    records, _, _ = evaluate(PLAYERS, **EVAL)
    return records


def test_an_evaluation_across_two_nodes_equals_the_local_one(
    cluster: Any, local_records: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evaluation.harness as harness

    pool = evaluate(PLAYERS, **EVAL, workers=2)[1]  # the local pool's figures
    monkeypatch.setattr(
        harness, "run_task", functools.partial(_noted, str(tmp_path), harness.run_task)
    )
    records, summaries, _ = evaluate(PLAYERS, **EVAL, ray=cluster.address)
    assert played(records) == played(local_records)
    assert figures(summaries) == figures(pool)
    assert _nodes_that_ran(tmp_path) == _cluster_nodes()
    assert len(_cluster_nodes()) == 2


def test_a_killed_worker_is_retried_and_the_journal_keeps_every_task_once(
    cluster: Any, local_records: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evaluation.harness as harness

    marker = tmp_path / "killed"
    monkeypatch.setattr(
        harness, "run_task", functools.partial(_dies_once, str(marker), harness.run_task)
    )
    journal = tmp_path / JOURNAL
    records, _, _ = evaluate(PLAYERS, **EVAL, ray=cluster.address, journal=journal)
    assert marker.is_file()  # a worker did die
    assert played(records) == played(local_records)
    lines = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert sorted(tuple(e["task"]) for e in lines) == [
        (0, "deal", s, s + 2) for s in range(0, 20, 2)
    ]


def test_a_journal_of_finished_tasks_is_continued_on_ray(
    cluster: Any, local_records: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evaluation.harness as harness

    journal = tmp_path / JOURNAL
    evaluate(PLAYERS, **{**EVAL, "deals": 8}, journal=journal)  # four tasks, then a longer run
    head = journal.read_text().splitlines()
    identity = {**json.loads(head[0]), "deals": 20}
    journal.write_text("\n".join([json.dumps(identity), *head[1:]]) + "\n")
    ran = tmp_path / "ran"
    monkeypatch.setattr(harness, "run_task", functools.partial(_noted, str(ran), harness.run_task))
    records, _, _ = evaluate(PLAYERS, **EVAL, ray=cluster.address, journal=journal)
    assert played(records) == played(local_records)
    assert sum(len(list(p.iterdir())) for p in ran.iterdir()) == 6  # only the tasks not held


def _warm_config() -> Any:
    return validate(
        {
            "name": "ray",
            "seed": 3,
            "n_envs": 4,
            "ppo": {"n_steps": 16, "batch_size": 64, "card_width": 8, "global_width": 16},
            "warm_start": {"teacher": "greedy", "samples": 384, "task_samples": 64, "workers": 2},
            "selfplay": {"groups": 2, "opponents": {"random": 0.5, "greedy": 0.5}},
        }
    )


def _assert_same_decisions(a: Any, b: Any) -> None:
    for field in a._fields:
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None and y is None) or np.array_equal(x, y), field


def test_a_warm_start_across_two_nodes_with_a_killed_worker_makes_the_same_decisions(
    cluster: Any, tmp_path: Path
) -> None:
    from training.train import warm_start_task
    from training.warm_start import collect_in_tasks

    config = _warm_config()
    make_task = functools.partial(warm_start_task, config)
    local = collect_in_tasks(make_task, 384, 64, 1.0, 2, tmp_path / "local")  # the local pool
    marker, ran = tmp_path / "killed", tmp_path / "ran"
    on_ray = functools.partial(
        _noted, str(ran), functools.partial(_dies_once, str(marker), make_task)
    )
    remote = collect_in_tasks(on_ray, 384, 64, 1.0, 2, tmp_path / "ray", ray=cluster.address)
    assert marker.is_file()
    _assert_same_decisions(local, remote)
    assert len(list((tmp_path / "ray").glob("task_*.npz"))) == 6
    assert _nodes_that_ran(ran) == _cluster_nodes()


def test_scopa_eval_joins_a_cluster_by_its_address(cluster: Any, tmp_path: Path) -> None:
    """The command starts its own connection (Ray not yet initialised here) and ends it."""
    import ray

    from cli import main as cli

    ray.shutdown()
    try:
        out_ray, out_local = tmp_path / "ray", tmp_path / "local"
        argv = ["eval", *PLAYERS, "--deals", "6", "--chunk", "2", "--no-progress"]
        assert cli.main([*argv, "--ray", cluster.address, "--out", str(out_ray)]) == 0
        assert not ray.is_initialized()
        assert cli.main([*argv, "--out", str(out_local)]) == 0
        assert games_csv(out_ray / "games.csv") == games_csv(out_local / "games.csv")
    finally:
        _join(cluster)


def test_a_local_session_starts_its_own_ray_beside_a_running_cluster(cluster: Any) -> None:
    """``local`` never joins the cluster another process started last (Ray's default for an
    init without an address), so two test workers or a researcher's ``ray start`` cannot
    capture it."""
    import subprocess

    script = (
        "import ray\n"
        "from evaluation.ray_backend import connect\n"
        "assert connect('local', 2)\n"
        "print(ray.get_runtime_context().gcs_address)\n"
        "ray.shutdown()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] != cluster.address


# RLlib's multi-agent environment ----------------------------------------------------------


@pytest.mark.parametrize("table", ["scopa", "scopa_3", "scopone", "scopa_6"])
def test_the_rllib_environment_is_turn_based_and_credits_each_side_its_points(table: str) -> None:
    pytest.importorskip("ray.rllib")
    from scopa_env.integrations.rllib import ScopaMultiAgentEnv, side_module

    # RLlib's own checker steps an unmasked sampled action, which a masked game refuses.
    env = ScopaMultiAgentEnv({"table": table})
    kind = env.table
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=2)
    totals = dict.fromkeys(env.agents, 0.0)
    steps = 0
    while True:
        (agent,) = obs  # only the agent to act observes
        assert agent == env.aec.agent_selection
        assert env.observation_spaces[agent].contains(obs[agent])
        legal = np.flatnonzero(obs[agent]["action_mask"])
        assert legal.size and (legal == env.aec.legal_actions()).all()
        obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(legal))})
        for name, reward in rewards.items():
            totals[name] += reward
        steps += 1
        if terminated["__all__"]:
            break
        assert not truncated["__all__"]
    assert obs == {}
    # Each seat's rewards add up to its side's points minus the mean of the other sides'.
    points = [s.total for s in env.aec.deal.score()]
    for seat, agent in enumerate(env.agents):
        side = kind.side_of(seat)
        others = [p for s, p in enumerate(points) if s != side]
        assert totals[agent] == pytest.approx(points[side] - sum(others) / len(others))
        assert side_module(agent, kind) == f"side_{side}"
    assert steps >= kind.players * kind.hand_size


def test_warm_start_ray_needs_workers_and_is_kept_as_given() -> None:
    from training.config import ConfigError, load_config

    assert load_config("configs/full.yaml", ["warm_start.ray=auto"]).warm_start.ray == "auto"
    with pytest.raises(ConfigError, match="set workers"):
        load_config("configs/quick.yaml", ["warm_start.ray=local"])


def test_rllib_episodes_credit_each_seat_its_points_on_its_own_last_move() -> None:
    """RLlib's own episode bookkeeping, fed the environment's steps: a seat's deal points,
    paid while another seat acts, land on that seat's last transition and nowhere else."""
    pytest.importorskip("ray.rllib")
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    from scopa_env.integrations.rllib import ScopaMultiAgentEnv

    env = ScopaMultiAgentEnv({"table": "scopone"})
    episode = MultiAgentEpisode(
        observation_space=env.observation_spaces, action_space=env.action_spaces
    )
    obs, infos = env.reset(seed=4)
    episode.add_env_reset(observations=obs, infos=infos)
    rng = np.random.default_rng(0)
    moves = dict.fromkeys(env.agents, 0)
    done = False
    while not done:
        (agent,) = obs
        action = {agent: int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))}
        moves[agent] += 1
        obs, rewards, ended, cut, infos = env.step(action)
        episode.add_env_step(obs, action, rewards, infos, terminateds=ended, truncateds=cut)
        done = ended["__all__"]
    points = [s.total for s in env.aec.deal.score()]  # Scopone: two sides of two seats
    assert moves == dict.fromkeys(env.agents, 9)  # nine cards a seat, one round (RULES.md 8)
    for seat, agent in enumerate(env.agents):
        rewards = episode.agent_episodes[agent].get_rewards()
        assert len(rewards) == 9
        assert list(rewards[:-1]) == [0.0] * 8
        assert rewards[-1] == pytest.approx(points[seat % 2] - points[1 - seat % 2])


def _card_module(card: dict[str, int]) -> Any:
    from agents.rllib_module import CardNetRLModule
    from scopa_env.integrations.rllib import ScopaMultiAgentEnv

    env = ScopaMultiAgentEnv()
    agent = env.agents[0]
    module = CardNetRLModule(
        observation_space=env.observation_spaces[agent],
        action_space=env.action_spaces[agent],
        model_config=card,
    )
    return env, module


def _positions(env: Any, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``count`` positions of random play."""
    rng = np.random.default_rng(6)
    obs, _ = env.reset(seed=6)
    rows, masks = [], []
    while len(rows) < count:
        if not obs:
            obs, _ = env.reset()
        (agent,) = obs
        rows.append(obs[agent]["observations"])
        masks.append(obs[agent]["action_mask"])
        obs = env.step({agent: int(rng.choice(np.flatnonzero(masks[-1])))})[0]
    return np.stack(rows), np.stack(masks)


def test_the_card_module_computes_what_the_sb3_card_policy_it_loads_computes() -> None:
    pytest.importorskip("ray.rllib")
    import torch
    from gymnasium import spaces

    from agents.card_policy import CardPolicy

    card = {"card_width": 8, "global_width": 16}
    env, module = _card_module(card)
    torch.manual_seed(0)
    space = env.observation_spaces[env.agents[0]]["observations"]
    policy = CardPolicy(space, spaces.Discrete(80), lambda _: 1e-3, **card)
    module.load_card_policy(policy)
    obs, masks = _positions(env, 12)
    batch = {"obs": {"observations": torch.as_tensor(obs), "action_mask": torch.as_tensor(masks)}}
    with torch.no_grad():
        logits = module.forward_train(batch)["action_dist_inputs"]
        values = module.compute_values(batch)
        sb3 = policy.get_distribution(torch.as_tensor(obs), action_masks=masks > 0)
        sb3_values = policy.predict_values(torch.as_tensor(obs)).flatten()
    legal = torch.as_tensor(masks > 0)
    log_probs = torch.log_softmax(logits, dim=1)
    assert torch.allclose(log_probs[legal], sb3.distribution.logits[legal], atol=1e-5)
    assert float(log_probs[~legal].exp().max()) == 0.0  # an illegal action is never drawn
    assert torch.allclose(values, sb3_values, atol=1e-6)


def test_a_player_module_plays_the_players_moves() -> None:
    pytest.importorskip("ray.rllib")
    import torch

    from agents import make_agent
    from agents.rllib_module import PlayerRLModule
    from scopa_env.integrations.rllib import ScopaMultiAgentEnv

    env = ScopaMultiAgentEnv()
    agent = env.agents[0]
    module = PlayerRLModule(
        observation_space=env.observation_spaces[agent],
        action_space=env.action_spaces[agent],
        model_config={"player": "greedy"},
    )
    obs, masks = _positions(env, 30)
    batch = {"obs": {"observations": torch.as_tensor(obs), "action_mask": torch.as_tensor(masks)}}
    greedy = make_agent("greedy")
    wanted = [
        greedy.act({"observation": o, "action_mask": m.astype(np.int8)})
        for o, m in zip(obs, masks, strict=True)
    ]
    assert module.forward_inference(batch)["actions"].tolist() == wanted


def test_the_rllib_config_refuses_what_it_cannot_run() -> None:
    from training.config import ConfigError
    from training.rllib_train import RLlibRunConfig, load_rllib_config

    quick = load_rllib_config(Path("configs/rllib_quick.yaml"), ["warm_start.samples=512"])
    assert quick.module == "card" and quick.warm_start.samples == 512
    assert quick.warm_start.teacher == "greedy"  # the rest of the section is kept
    with pytest.raises(ConfigError, match="set module: card"):
        load_rllib_config(Path("configs/rllib_quick.yaml"), ["module=mlp"])
    with pytest.raises(ValueError, match="'grumpy' is neither 'snapshot' nor a player"):
        RLlibRunConfig(engine="rllib", opponents=["random", "grumpy"])
    with pytest.raises(ValueError, match="not \\['width'\\]"):
        RLlibRunConfig(engine="rllib", module="card", card={"width": 8})


def test_a_tiny_rllib_run_with_two_env_runners_on_two_nodes_loads_into_the_harness(
    cluster: Any, tmp_path: Path
) -> None:
    import torch

    from agents import make_agent
    from evaluation.ray_backend import node_id
    from training.rllib_train import LEARNER, ppo_config, refresh_snapshot

    config = ppo_config(
        "scopa", num_env_runners=2, train_batch_size=200, minibatch_size=100, num_epochs=1,
        hidden=(16,),
    )  # fmt: skip
    algorithm = config.build_algo()
    try:
        nodes = algorithm.env_runner_group.foreach_env_runner(
            lambda _: node_id(), local_env_runner=False
        )
        assert sorted(nodes) == sorted(_cluster_nodes())  # one runner on each node
        result = algorithm.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 200
        refresh_snapshot(algorithm)
        main = algorithm.get_module(LEARNER).get_state()
        snapshot = algorithm.get_module("snapshot").get_state()
        assert all(
            torch.equal(torch.as_tensor(main[k]), torch.as_tensor(snapshot[k])) for k in main
        )
        checkpoint = algorithm.save(str(tmp_path / "rllib")).checkpoint.path
    finally:
        algorithm.stop()
    player = make_agent(f"rllib:{checkpoint}")
    records, summaries, _ = evaluate([str(checkpoint), "random"], deals=2)
    assert len(records) == 4 and summaries[0].player_a == str(checkpoint)
    journal = tmp_path / "journal.jsonl"  # at another table: refused before the journal
    shapes = r"reads observations of shape \(373,\), but the 'scopa_4' table gives \(546,\)"
    with pytest.raises(TableError, match=shapes):
        evaluate([str(checkpoint), "random"], deals=2, table="scopa_4", journal=journal)
    assert not journal.exists()
    shape = player.module.observation_space["observations"].shape
    obs = {"observation": np.zeros(shape, np.float32), "action_mask": np.eye(80, dtype=np.int8)[7]}
    assert player.act(obs) == 7  # the only legal action


def test_scopa_train_with_the_card_network_and_a_warm_start_on_the_cluster(
    cluster: Any, tmp_path: Path, capsys: Any
) -> None:
    """The quick config made tiny: the clone (its collection's bar ending full), one PPO
    iteration against greedy and the snapshot on two env runners, the checkpoints played by
    the harness."""
    from agents import make_agent
    from training.rllib_train import load_rllib_config, train_rllib

    tiny = [
        "iterations=1", "num_env_runners=2", "train_batch_size=200", "minibatch_size=100",
        "num_epochs=1", "card={card_width: 8, global_width: 16}", "opponents=[greedy, snapshot]",
        "warm_start.samples=512", "warm_start.envs=16", "warm_start.epochs=1", "final_deals=2",
    ]  # fmt: skip
    config = load_rllib_config(Path("configs/rllib_quick.yaml"), tiny)
    summary = train_rllib(config, tmp_path / "run", progress=True)
    assert "warm start: 100%" in capsys.readouterr().err
    assert "decisions of greedy cloned" in summary and "1 iterations" in summary
    assert "against random over 2 duplicate deals" in summary
    for name in ("checkpoint", "checkpoint_warm"):
        player = make_agent(f"rllib:{tmp_path / 'run' / name}")
        assert type(player.module).__name__ == "CardNetRLModule"
