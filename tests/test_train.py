"""Training pipeline: config validation, the self-play pool, and a tiny run end to end."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY

from scopa_env.rules import PRESETS, Rules
from training.config import ConfigError, load_config, parse_overrides, validate
from training.selfplay import OpponentPool, Snapshot

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


# Config validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "quick.yaml",
        "full.yaml",
        "full_alphabeta.yaml",
        "expert_iteration_alphabeta_value.yaml",
        "full_ppo.yaml",
        "full_ppo_oracle.yaml",
        "scratch.yaml",
    ],
)
def test_shipped_configs_validate(name: str) -> None:
    config = load_config(CONFIGS / name)
    assert config.name == name.removesuffix(".yaml")


VARIANTS = sorted(set(PRESETS) - {"scopa"})


def test_every_preset_has_a_variant_config() -> None:
    assert sorted(path.stem for path in (CONFIGS / "variants").glob("*.yaml")) == VARIANTS


@pytest.mark.parametrize("name", VARIANTS)
def test_variant_configs_validate_and_take_rule_options(name: str) -> None:
    path = CONFIGS / "variants" / f"{name}.yaml"
    config = load_config(path)
    assert config.name == name
    assert config.resolved_rules() == Rules.preset(name)
    assert config.warm_start.teacher == "heuristic"
    assert config.eval.best_against == "greedy"
    # Dotted overrides change options of the config's preset; a name replaces it.
    changed = load_config(path, ["rules.target=21", "rules.last_play_scopa=true"])
    assert changed.rules == {"preset": name, "target": 21, "last_play_scopa": True}
    assert changed.resolved_rules() == Rules.preset(name, target=21, last_play_scopa=True)
    assert load_config(path, ["rules=scopa"]).resolved_rules() == Rules()


@pytest.mark.parametrize(
    ("data", "key", "reason"),
    [
        ({"n_env": 8}, "n_env", "unknown key"),
        ({"ppo": {"lr": 0.1}}, "ppo.lr", "unknown key"),
        ({"n_envs": "many"}, "n_envs", "integer"),
        ({"n_envs": "64"}, "n_envs", "integer"),
        ({"total_timesteps": 1.5}, "total_timesteps", "integer"),
        ({"ppo": {"gamma": 1.5}}, "ppo.gamma", "less than or equal to 1"),
        ({"ppo": {"learning_rate": -1.0}}, "ppo.learning_rate", "greater than 0"),
        ({"ppo": {"net_arch": [64, 0]}}, "ppo.net_arch", "at least 1"),
        ({"ppo": {"activation": "gelu"}}, "ppo.activation", "'relu' or 'tanh'"),
        ({"reward": "win"}, "reward", "'points' or 'match'"),
        ({"rules": "scopone"}, "rules", "unknown rules preset"),
        ({"rules": {"target": 0}}, "rules", "target"),
        ({"rules": {"preset": "scopone"}}, "rules", "unknown rules preset"),
        ({"rules": {"preset": "napola", "colour": "red"}}, "rules", "unknown rule option"),
        ({"rules": {"preset": "scopa_a_quindici", "ace_takes_all": True}}, "rules", "combined"),
        ({"selfplay": {"opponents": {"random": 0.7}}}, "selfplay.opponents", "sum to 1"),
        ({"selfplay": {"opponents": {"human": 1.0}}}, "selfplay.opponents", "unknown opponent"),
        ({"selfplay": {"opponents": {"snapshot": 1.0}}}, "selfplay.opponents", "or heuristic"),
        ({"eval": {"opponents": ["greedy"], "best_against": "random"}}, "eval", "best_against"),
        (
            {"warm_start": {"teacher": "ismcts", "teacher_options": {"depth": 3}}},
            "warm_start",
            "no option(s) ['depth']",
        ),
        ({"warm_start": {"teacher_options": {"iterations": 3}}}, "warm_start", "no teacher"),
        ({"warm_start": {"workers": 0}}, "warm_start.workers", "greater than or equal to 1"),
        ({"warm_start": {"temperature": 0.5}}, "warm_start", "temperature needs a teacher"),
        (
            {"warm_start": {"teacher": "heuristic", "regret_weight": 3.0}},
            "warm_start",
            "regret_weight needs a teacher that values",
        ),
        (
            {"warm_start": {"teacher": "ismcts", "temperature": 0}},
            "warm_start.temperature",
            "greater than 0",
        ),
        (
            {"eval": {"opponents": ["clone"], "best_against": "clone"}},
            "config",
            "eval opponent 'clone' is the run's warm start, but warm_start.teacher and "
            "warm_start.init_from are null",
        ),
        (
            {"warm_start": {"init_from": "no/such/clone.zip"}},
            "warm_start.init_from",
            "no file no/such/clone.zip",
        ),
        (
            {"ppo": {"policy": "card", "init_temperature": 3}},
            "config",
            "ppo.init_temperature=3 softens the warm start's clone, but warm_start.teacher",
        ),
        (
            {"ppo": {"policy": "mlp", "init_temperature": 3}, "warm_start": {"teacher": "greedy"}},
            "ppo",
            "init_temperature=3 scales the card policy's logit heads, which needs policy: card",
        ),
        ({"ppo": {"init_temperature": 0}}, "ppo.init_temperature", "greater than 0"),
        ({"n_envs": 10, "selfplay": {"groups": 4}}, "config", "multiple of selfplay.groups"),
        ({"n_envs": 8, "ppo": {"n_steps": 8, "batch_size": 128}}, "config", "ppo.batch_size"),
    ],
)
def test_invalid_config_names_the_key(data: dict, key: str, reason: str) -> None:
    with pytest.raises(ConfigError) as error:
        validate(data, "test.yaml")
    message = str(error.value)
    assert f"  {key}: " in message, message
    assert reason in message, message


def test_overrides_are_typed_and_nested(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: base\nppo:\n  n_epochs: 3\n")
    config = load_config(path, ["ppo.learning_rate=1e-4", "seed=7", "rules={napola: true}"])
    assert config.ppo.n_epochs == 3
    assert config.ppo.learning_rate == pytest.approx(1e-4)
    assert config.seed == 7
    assert config.resolved_rules().napola
    with pytest.raises(ConfigError, match="key=value"):
        parse_overrides(["seed"])
    with pytest.raises(ConfigError, match="ppo.n_epochs"):
        load_config(path, ["ppo.n_epochs=two"])


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


# Self-play pool ------------------------------------------------------------------------------


def _weights(value: float) -> dict[str, torch.Tensor]:
    return {"w": torch.full((2,), value)}


def test_pool_samples_as_configured() -> None:
    probs = {"random": 0.1, "greedy": 0.3, "snapshot": 0.4, "latest": 0.2}
    pool = OpponentPool(probs, max_snapshots=3, seed=0)
    for update in (10, 20, 30, 40):
        pool.add_snapshot(update, _weights(update))
    assert [s.update for s in pool.snapshots] == [20, 30, 40]  # oldest dropped

    draws = pool.sample(40_000)
    names = [d if isinstance(d, str) else d.name for d in draws]
    counts = {name: names.count(name) / len(names) for name in set(names)}
    # latest (0.2) plus a third of snapshot (0.4) land on the newest snapshot.
    expected = {
        "random": 0.1,
        "greedy": 0.3,
        "snapshot@20": 0.4 / 3,
        "snapshot@30": 0.4 / 3,
        "snapshot@40": 0.4 / 3 + 0.2,
    }
    assert set(counts) == set(expected)
    for name, p in expected.items():
        assert counts[name] == pytest.approx(p, abs=0.01), name


def test_pool_before_any_snapshot_uses_baselines_only() -> None:
    pool = OpponentPool({"random": 0.25, "greedy": 0.25, "snapshot": 0.5}, 4, seed=1)
    assert pool.effective_probs() == {"random": 0.5, "greedy": 0.5}
    assert set(pool.sample(1000)) == {"random", "greedy"}


def test_pool_snapshots_are_frozen_copies_and_state_round_trips() -> None:
    live = _weights(1.0)
    pool = OpponentPool({"greedy": 0.5, "latest": 0.5}, 2, seed=3)
    pool.add_snapshot(5, live)
    live["w"] += 1.0
    assert torch.equal(pool.snapshots[0].state_dict["w"], torch.ones(2))

    state = pool.state_dict()
    expected = pool.sample(50)
    restored = OpponentPool({"greedy": 0.5, "latest": 0.5}, 2, seed=99)
    restored.load_state_dict(state)
    got = restored.sample(50)
    as_names = [[d if isinstance(d, str) else d.name for d in ds] for ds in (expected, got)]
    assert as_names[0] == as_names[1]
    assert isinstance(got[-1] if not isinstance(got[-1], str) else Snapshot(5, {}), Snapshot)
    assert np.isfinite(restored.effective_probs()["latest"])


def test_pool_start_is_drawn_once_set_and_its_share_waits_on_the_baselines() -> None:
    probs = {"greedy": 0.2, "heuristic": 0.2, "snapshot": 0.2, "start": 0.4}
    pool = OpponentPool(probs, 2, seed=5)
    assert pool.effective_probs() == {"greedy": 0.5, "heuristic": 0.5}
    live = _weights(2.0)
    pool.set_start(live)
    live["w"] += 1.0  # the start is a frozen copy
    # No snapshot yet: its 0.2 goes to the baselines in proportion (0.2 + 0.1 each).
    assert pool.effective_probs() == pytest.approx({"greedy": 0.3, "heuristic": 0.3, "start": 0.4})
    pool.add_snapshot(3, _weights(3.0))
    draws = pool.sample(20_000)
    starts = [d for d in draws if isinstance(d, Snapshot) and d.kind == "start"]
    assert len(starts) / len(draws) == pytest.approx(0.4, abs=0.015)
    assert torch.equal(starts[0].state_dict["w"], torch.full((2,), 2.0))
    restored = OpponentPool(probs, 2, seed=0)
    restored.load_state_dict(pool.state_dict())
    assert restored.start is not None and restored.start.name == "start@0"
    assert torch.equal(restored.start.state_dict["w"], torch.full((2,), 2.0))


# A tiny run end to end -----------------------------------------------------------------------


def _tiny(**changes: object) -> dict:
    return {**TINY, **changes}


def _policy_weights(path: Path) -> dict[str, torch.Tensor]:
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, device="cpu").policy.state_dict()


def _final_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return _policy_weights(run_dir / "final.zip")


def test_tiny_run_checkpoints_resumes_and_loads_into_policy_agent(tmp_path: Path) -> None:
    from training.train import latest_checkpoint, train

    run_dir = tmp_path / "run"
    result = train(validate(_tiny()), run_dir, progress=False)
    assert result.timesteps == 256  # 2 updates of 8 envs x 16 steps
    for name in ("config.yaml", "meta.json", "final.zip", "best.zip", "report.md"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "learning_curve.png").stat().st_size > 0
    assert list((run_dir / "tb").rglob("events.out.tfevents*"))
    checkpoint = latest_checkpoint(run_dir)
    assert checkpoint is not None and checkpoint.name == "update_000002"
    assert "versions" in (run_dir / "meta.json").read_text()
    report = (run_dir / "report.md").read_text()
    assert "steps/s" in report and "| random |" in report
    wall = re.search(r"\| wall time \| ([\d.]+) min: warm start ([\d.]+), training ([\d.]+), "
                     r"periodic evaluation and checkpoints ([\d.]+), final evaluation ([\d.]+)",
                     report)  # fmt: skip
    assert wall is not None
    total, *parts = map(float, wall.groups())
    assert min(parts) >= 0 and sum(parts) == pytest.approx(total, abs=0.25)

    # --resume continues from the last checkpoint up to a longer total.
    longer = validate(_tiny(total_timesteps=384))
    resumed = train(longer, run_dir, resume=True, progress=False)
    assert resumed.timesteps == 384
    assert latest_checkpoint(run_dir).name == "update_000003"  # type: ignore[union-attr]

    # The checkpoint plays through PolicyAgent, masked, in the AEC environment.
    from agents import PolicyAgent
    from scopa_env import scopa_v0

    agent = PolicyAgent(run_dir / "final.zip")
    env = scopa_v0.env(episode="deal")
    env.reset(seed=0)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agent.act(observation)
        env.step(action)
    assert not env.agents


def test_same_seed_and_config_reproduce_the_run(tmp_path: Path) -> None:
    from training.train import train

    quiet = {"every": 0, "final_deals": 0}
    mlp = {**TINY["ppo"], "policy": "mlp", "net_arch": [16]}
    config = validate(_tiny(total_timesteps=128, eval=quiet, ppo=mlp))
    train(config, tmp_path / "a", progress=False)
    train(config, tmp_path / "b", progress=False)
    other = validate(_tiny(seed=4, total_timesteps=128, eval=quiet, ppo=config.ppo.model_dump()))
    train(other, tmp_path / "c", progress=False)
    a, b, c = (_final_weights(tmp_path / name) for name in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_cli_rejects_a_bad_config_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli import main as cli

    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nppo:\n  n_epoch: 3\n")
    assert cli.main(["train", "--config", str(path), "--run-dir", str(tmp_path / "r")]) == 2
    assert "ppo.n_epoch: unknown key" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_cli_refuses_to_train_into_an_existing_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli import main as cli

    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "keep.txt").write_text("an earlier run")
    argv = ["train", "--config", "configs/quick.yaml", "--run-dir", str(run_dir)]
    assert cli.main(argv) == 2
    assert f"run folder {run_dir} already exists; continue it with --resume" in (
        capsys.readouterr().err
    )
    assert [p.name for p in run_dir.iterdir()] == ["keep.txt"]


def test_pool_env_alternates_seats_and_credits_the_learner() -> None:
    from agents.greedy import GreedyAgent
    from agents.random_agent import RandomAgent
    from training.selfplay import PoolVecEnv

    pool = OpponentPool({"random": 1.0}, 1, seed=0)
    baselines = {"random": RandomAgent(seed=1), "greedy": GreedyAgent()}
    env = PoolVecEnv(16, 2, pool, baselines, seed=0, shaping=1.0)
    env.draw_opponents()
    learner = GreedyAgent()
    obs = env.reset()
    seats_seen, returns = set(), []
    for _ in range(120):
        masks = env.action_masks()
        assert masks.any(axis=1).all()  # the learner is to move in every game
        seats_seen.update(env.seat.tolist())
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, masks))
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == obs.shape[1:]
            returns.append(infos[i]["episode"]["r"])
    assert seats_seen == {0, 1}
    assert len(returns) > 60
    assert np.mean(returns) > 0.5  # greedy beats random by about 1.7 points a deal
    assert set(env.take_results()) == {"random"}


def test_heuristic_opponent_plays_whole_deals_in_the_pool() -> None:
    from agents.heuristic import HeuristicAgent
    from agents.random_agent import RandomAgent
    from training.selfplay import PoolVecEnv

    pool = OpponentPool({"heuristic": 1.0}, 1, seed=0)
    baselines = {"random": RandomAgent(seed=1), "heuristic": HeuristicAgent()}
    env = PoolVecEnv(8, 2, pool, baselines, seed=0)
    assert env.draw_opponents() == ["heuristic", "heuristic"]
    learner = RandomAgent(seed=2)
    obs, returns = env.reset(), []
    for _ in range(60):
        obs, _, dones, infos = env.step(learner.act_batch(obs, env.action_masks()))
        returns += [infos[i]["episode"]["r"] for i in np.flatnonzero(dones)]
    assert len(returns) >= 8
    assert np.mean(returns) < -0.5  # the heuristic player beats random by about two points
    assert set(env.take_results()) == {"heuristic"}


def test_tiny_run_on_a_variant_uses_its_rules_everywhere(tmp_path: Path, monkeypatch) -> None:
    """Warm start teacher, pool baselines, training engine and evaluations: all on the config's
    rules (a preset with an option), never the default game."""
    from agents.base import RuleAgent
    from evaluation import harness
    from scopa_env.batched import BatchedScopa
    from training.train import train

    seen: list[tuple[str, Rules]] = []

    def spy(init):
        def wrapped(self, *args, **kwargs):
            init(self, *args, **kwargs)
            seen.append((type(self).__name__, self.rules))

        return wrapped

    monkeypatch.setattr(RuleAgent, "__init__", spy(RuleAgent.__init__))
    monkeypatch.setattr(BatchedScopa, "__init__", spy(BatchedScopa.__init__))
    run_task = harness.run_task
    monkeypatch.setattr(
        harness, "run_task", lambda task: seen.append(("evaluation", task.rules)) or run_task(task)
    )
    rules = {"preset": "scopa_a_quindici", "fewest_cards_capture": True}
    evaluation = {**TINY["eval"], "opponents": ["greedy"], "best_against": "greedy"}
    teacher = {**TINY["warm_start"], "teacher": "heuristic"}
    config = validate(_tiny(rules=rules, eval=evaluation, warm_start=teacher))
    train(config, tmp_path / "run", progress=False)
    expected = Rules.preset("scopa_a_quindici", fewest_cards_capture=True)
    assert {"HeuristicAgent", "GreedyAgent", "BatchedScopa", "evaluation"} <= {k for k, _ in seen}
    assert all(used == expected for _, used in seen), seen
    report = (tmp_path / "run" / "report.md").read_text()
    assert "scopa_a_quindici (target 11, fewest_cards_capture=true)" in report


def test_warm_start_in_workers_is_independent_of_their_number_and_resumes(
    tmp_path: Path,
) -> None:
    """Tasks carry their own seeds, so 1 or 2 workers collect the same data; a finished task
    is read back from its file, not played again."""
    from functools import partial

    from training.train import warm_start_task
    from training.warm_start import collect_in_tasks

    search = {"teacher": "ismcts", "teacher_options": {"iterations": 4}, "task_samples": 64}
    config = validate(_tiny(warm_start={**TINY["warm_start"], **search}))
    make_task = partial(warm_start_task, config)
    one = collect_in_tasks(make_task, 128, 64, 1.0, 1, tmp_path / "one")
    two = collect_in_tasks(make_task, 128, 64, 1.0, 2, tmp_path / "two")
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == [
        "task_0000.npz",
        "task_0001.npz",
    ]
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    obs, masks, actions, returns, values = one
    assert len(obs) == len(masks) == len(actions) == len(returns) == len(values) > 64
    assert masks[np.arange(len(actions)), actions].all()  # the teacher played legal actions
    searched = ~np.isnan(values)
    assert (searched <= masks).all()  # the search valued legal actions only
    assert searched[masks.sum(axis=1) > 1].any(axis=1).mean() > 0.5

    with np.load(tmp_path / "one" / "task_0000.npz") as part:
        marked = {k: part[k] for k in part.files}
    marked["returns"] = np.full_like(marked["returns"], 99.0)
    np.savez(tmp_path / "one" / "task_0000.npz", **marked)
    again = collect_in_tasks(make_task, 128, 64, 1.0, 1, tmp_path / "one")
    assert (again[3][: len(marked["returns"])] == 99.0).all()
    np.testing.assert_array_equal(
        again[3][len(marked["returns"]) :], returns[len(marked["returns"]) :]
    )


def test_the_warm_start_draws_a_bar_of_its_decisions_from_those_saved(
    tmp_path: Path, capsys
) -> None:
    from functools import partial

    from agents.greedy import GreedyAgent
    from training.selfplay import PoolVecEnv
    from training.train import warm_start_task
    from training.warm_start import collect, collect_in_tasks

    config = validate(_tiny(warm_start={**TINY["warm_start"], "task_samples": 64}))
    make_task = partial(warm_start_task, config)
    collect_in_tasks(make_task, 128, 64, 1.0, 1, tmp_path, show_progress=True)
    assert "warm start: 100%" in capsys.readouterr().err
    (tmp_path / "task_0001.npz").unlink()
    collect_in_tasks(make_task, 128, 64, 1.0, 1, tmp_path, show_progress=True)
    err = capsys.readouterr().err
    assert "warm start:  50%" in err and "128/128" in err  # the saved task counted at once
    collect_in_tasks(make_task, 128, 64, 1.0, 1, tmp_path)
    assert capsys.readouterr().err == ""

    pool = OpponentPool({"greedy": 1.0}, 1, seed=0)
    env = PoolVecEnv(16, 2, pool, {"greedy": GreedyAgent()}, seed=0)
    collect(env, GreedyAgent(), samples=640, gamma=1.0, show_progress=True)
    assert "640/640" in capsys.readouterr().err


def test_a_run_stopped_in_its_warm_start_resumes_from_the_saved_tasks(tmp_path: Path) -> None:
    from training.train import latest_checkpoint, train

    workers = {**TINY["warm_start"], "workers": 1, "task_samples": 128}
    config = validate(_tiny(warm_start=workers))
    run_dir = tmp_path / "run"
    train(config, run_dir, progress=False)
    tasks = sorted((run_dir / "warm_start").glob("task_*.npz"))
    assert [p.name for p in tasks] == ["task_0000.npz", "task_0001.npz"]
    shutil.rmtree(run_dir / "checkpoints")  # as if it had stopped before the first update
    (run_dir / "meta.json").unlink()  # or as a folder of another run's tasks and config
    stamps = [p.stat().st_mtime_ns for p in tasks]
    resumed = train(config, run_dir, resume=True, progress=False)
    assert resumed.timesteps == 256 and (run_dir / "report.md").is_file()
    assert [p.stat().st_mtime_ns for p in tasks] == stamps
    assert latest_checkpoint(run_dir).name == "update_000002"  # type: ignore[union-attr]


def test_a_runs_bars_end_full_at_the_steps_it_takes(tmp_path: Path, capsys) -> None:
    from training.train import train

    result = train(validate(_tiny(total_timesteps=200)), tmp_path / "run")
    assert result.timesteps == 256  # PPO finishes the rollout that passes the total
    shown = capsys.readouterr().err.replace("\n", "\r").split("\r")
    assert any(line.startswith("warm start: 100%") for line in shown)
    assert any(line.startswith("tiny: 100%") and "256/256" in line for line in shown)


def test_warm_start_too_small_to_finish_an_episode_is_a_clear_error() -> None:
    from agents.greedy import GreedyAgent
    from agents.random_agent import RandomAgent
    from training.selfplay import PoolVecEnv
    from training.warm_start import collect

    pool = OpponentPool({"random": 1.0}, 1, seed=0)
    env = PoolVecEnv(16, 2, pool, {"random": RandomAgent(seed=1)}, seed=0)
    with pytest.raises(ValueError, match="warm_start.samples=64 .* too few to finish"):
        collect(env, GreedyAgent(), samples=64, gamma=1.0)


def test_a_run_from_scratch_is_evaluated_from_its_random_network(tmp_path: Path) -> None:
    """The learning curve opens with the starting point, warm start or not."""
    from evaluation.records import read_csv
    from training.train import train

    config = validate(_tiny(warm_start={"teacher": None}, total_timesteps=128))
    train(config, tmp_path / "run", progress=False)
    rows = read_csv(tmp_path / "run" / "evals.csv")
    assert [(r["update"], r["timesteps"]) for r in rows] == [("0", "0"), ("1", "128")]
    assert not (tmp_path / "run" / "clone.zip").exists()


def test_init_from_starts_ppo_from_a_saved_clone_and_refuses_another_network(
    tmp_path: Path,
) -> None:
    """``warm_start.init_from``: PPO starts from the saved weights, and nothing is collected."""
    from training.train import train

    quiet = {"every": 0, "final_deals": 0}
    first = tmp_path / "first"
    train(validate(_tiny(total_timesteps=128, eval=quiet)), first, progress=False)
    saved = first / "clone.zip"
    start = {"teacher": "greedy", "init_from": str(saved)}
    run = tmp_path / "run"
    config = validate(_tiny(seed=4, total_timesteps=128, eval=quiet, warm_start=start))
    train(config, run, progress=False)  # another seed: a fresh clone would differ
    clone, theirs = (_policy_weights(path) for path in (run / "clone.zip", saved))
    assert all(torch.equal(clone[k], theirs[k]) for k in theirs)
    assert not (run / "warm_start").exists()
    assert f"started from `{saved}`" in (run / "report.md").read_text()

    wider = {**TINY["ppo"], "card_width": 16}
    other = validate(_tiny(total_timesteps=128, eval=quiet, warm_start=start, ppo=wider))
    with pytest.raises(ConfigError, match=r"init_from: .*clone.zip holds a different network"):
        train(other, tmp_path / "other", progress=False)


def test_a_run_with_start_in_its_pool_plays_its_clone_unsoftened(tmp_path: Path) -> None:
    from training.checkpoints import RunState

    quiet = {"every": 0, "final_deals": 0}
    probs = {**TINY["selfplay"], "opponents": {"random": 0.5, "start": 0.5}}
    soft = {**TINY["ppo"], "init_temperature": 4.0}
    from training.train import latest_checkpoint, train

    run = tmp_path / "run"
    config = _tiny(total_timesteps=128, eval=quiet, selfplay=probs, ppo=soft)
    train(validate(config), run, progress=False)
    pool = OpponentPool({"random": 0.5, "start": 0.5}, 1, seed=0)
    RunState.load(latest_checkpoint(run), pool)  # type: ignore[arg-type]
    clone = _policy_weights(run / "clone.zip")
    assert pool.start is not None
    assert all(torch.equal(pool.start.state_dict[k], clone[k]) for k in clone)
    # PPO started from the clone with its logit heads divided by 4 (the update-0 checkpoint).
    started = _policy_weights(run / "checkpoints" / "update_000000" / "model.zip")
    heads = [f"mlp_extractor.{h}_head.{p}" for h in ("play", "pick") for p in ("weight", "bias")]
    assert all(torch.equal(started[k], clone[k] / 4) for k in heads)
    assert all(torch.equal(started[k], clone[k]) for k in clone if k not in heads)


@pytest.mark.parametrize("shared", [True, False])
def test_a_frozen_snapshot_plays_the_policys_own_masked_choice(shared: bool) -> None:
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from training.selfplay import FrozenPolicy

    torch.manual_seed(0)
    policy = MaskableActorCriticPolicy(
        spaces.Box(-1.0, 1.0, (6,), np.float32),
        spaces.Discrete(5),
        lambda _: 1e-3,
        share_features_extractor=shared,
    )
    obs = np.random.default_rng(0).uniform(-1, 1, (64, 6)).astype(np.float32)
    masks = np.random.default_rng(1).integers(0, 2, (64, 5)).astype(bool)
    masks[:, 0] = True
    expected, _ = policy.predict(obs, deterministic=True, action_masks=masks)
    np.testing.assert_array_equal(
        FrozenPolicy(policy, seed=0, greedy=True).act_batch(obs, masks), expected
    )
    sampled = FrozenPolicy(policy, seed=0).act_batch(obs, masks)
    assert masks[np.arange(64), sampled].all()


def test_a_run_without_periodic_evaluation_draws_no_empty_curve(tmp_path: Path) -> None:
    """With ``eval.every: 0`` there is no curve to draw: the report says so, and neither the
    run nor the exported agent holds an empty plot (an earlier export's curve is removed)."""
    from training.train import train

    export = tmp_path / "agent"
    export.mkdir()
    (export / "learning_curve.png").write_bytes(b"an earlier run's curve")
    run = tmp_path / "run"
    quiet = {"every": 0, "final_deals": 0}
    config = _tiny(total_timesteps=128, eval=quiet, export_to=str(export), export_overwrite=True)
    train(validate(config), run, progress=False)
    assert not (run / "learning_curve.png").exists()
    assert not (export / "learning_curve.png").exists()
    for report in (run / "report.md", export / "README.md"):
        text = report.read_text()
        assert "None: this run has no periodic evaluation (`eval.every: 0`)." in text
        assert "learning_curve.png" not in text
