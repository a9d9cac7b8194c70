"""An RLlib run stopped and resumed ends as the run that never stopped, bit for bit (issue 20).

At every checkpoint the run restarts from a state of its seed and the iteration alone (the
env runners' games, names and random streams, the learner's), in the unstopped run and in a
resumed one, and the checkpoint carries what RLlib's leaves out (PPO's KL coefficients). So
the resumed run's ``metrics.csv`` and every weight of its modules equal the unstopped run's.
One Ray start serves both cases (it is a third of the cost); runs are tiny.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaluation.records import read_csv

pytestmark = pytest.mark.slow

#: Three-iteration segments would do; these are the smallest that still cross a checkpoint
#: with games in progress and a snapshot refresh (iteration 3) off the checkpoints.
RUN = {
    "engine": "rllib", "name": "tiny", "seed": 3, "iterations": 5, "num_env_runners": 0,
    "module": "mlp", "hidden": [16], "opponents": ["random", "snapshot"],
    "train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1, "torch_threads": 1,
    "snapshot_every": 3, "checkpoint_every": 2, "final_deals": 0,
}  # fmt: skip


@pytest.fixture(scope="module")
def ray_session() -> Any:
    """One local Ray of three CPUs (two env runners and the learner) for every run here."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.rllib")
    from evaluation.ray_backend import connect

    started = connect("local", 3)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def _config(folder: Path, **changes: Any) -> Path:
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump({**RUN, **changes}, sort_keys=False))
    return path


def _train(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from cli import main as cli

    code = cli.main(["train", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_same_run(a: Path, b: Path) -> None:
    """The same metrics rows, and every tensor of ``main`` and the snapshot equal."""
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule

    assert (a / "metrics.csv").read_text() == (b / "metrics.csv").read_text()
    for module in ("main", "snapshot"):
        where = Path("checkpoint", "learner_group", "learner", "rl_module", module)
        wa = RLModule.from_checkpoint(a / where).state_dict()
        wb = RLModule.from_checkpoint(b / where).state_dict()
        assert wa.keys() == wb.keys() and wa
        different = [k for k in wa if not torch.equal(wa[k], wb[k])]
        assert different == [], f"{module}: {different}"


def test_rllib_runs_stopped_and_resumed_end_as_the_unstopped_ones(
    ray_session: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """One test, so that the cases share one Ray start whatever the test distribution."""
    stopped_by_sigint_and_resumed_from_an_older_checkpoint(
        tmp_path / "in_process", capsys, monkeypatch
    )
    resumed_with_two_env_runners(tmp_path / "two_runners", capsys)


def stopped_by_sigint_and_resumed_from_an_older_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Sampling in this process. SIGINT just after iteration 4's checkpoint: exit 130, a
    partial summary, the metrics of iterations 1-4. That checkpoint then cut short, the resume
    falls back to iteration 2, says why, and plays 3-5 again: the same rows and weights as
    the run that never stopped."""
    import training.rllib_train as rllib_train
    from training.checkpoints import manifest_problem

    tmp_path.mkdir()
    config = _config(tmp_path)
    unstopped, run = tmp_path / "unstopped", tmp_path / "run"
    assert _train(["--config", str(config), "--run-dir", str(unstopped)], capsys)[0] == 0

    save, saves = rllib_train.save_rllib_checkpoint, []

    def save_then_stop(*args: Any, **kwargs: Any) -> Path:
        saves.append(save(*args, **kwargs))
        if len(saves) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, handled by the command
        return saves[-1]

    monkeypatch.setattr(rllib_train, "save_rllib_checkpoint", save_then_stop)
    code, _, err = _train(["--config", str(config), "--run-dir", str(run)], capsys)
    monkeypatch.undo()
    assert code == 130, err
    assert err.splitlines()[-1].endswith(
        f"the run keeps its checkpoint at iteration 4: continue it with scopa train --resume {run}"
    )
    assert (run / "summary.txt").read_text().startswith("PARTIAL: stopped after iteration 4 of 5")
    assert [r["iteration"] for r in read_csv(run / "metrics.csv")] == ["1", "2", "3", "4"]
    assert not (run / "checkpoint").exists() and not (run / ".lock").exists()

    state = max((run / "checkpoints" / "iteration_000004").rglob("*.pkl"), key=os.path.getsize)
    state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    code, out, err = _train(["--resume", str(run)], capsys)
    assert code == 0, err[-3000:]
    assert "skipping checkpoint iteration_000004: algo/" in err
    assert f"resuming {run} at iteration 2 " in out
    rows = read_csv(run / "metrics.csv")
    assert [r["iteration"] for r in rows] == ["1", "2", "3", "4", "5"]
    steps = [int(r["env_steps"]) for r in rows]
    assert steps == sorted(set(steps)) and steps[0] >= 200
    summary = (run / "summary.txt").read_text()
    assert summary.startswith(f"5 iterations, {steps[-1]:,} env steps")
    assert "resumed at iteration 2" in summary and "PARTIAL" not in summary
    kept = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert kept == ["iteration_000004", "iteration_000005"]
    assert all(manifest_problem(run / "checkpoints" / name) is None for name in kept)
    assert (run / "checkpoint" / "rllib_checkpoint.json").is_file()
    assert_same_run(unstopped, run)


def resumed_with_two_env_runners(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two env runners (Ray actors): the unstopped run's folder as a kill just before the
    checkpoint of iteration 4 would have left it (rows 3 and 4 written, that checkpoint and the
    final one not), resumed from iteration 2: the same rows and weights again."""
    tmp_path.mkdir()
    config = _config(tmp_path, iterations=4, num_env_runners=2)
    unstopped, run = tmp_path / "unstopped", tmp_path / "run"
    assert _train(["--config", str(config), "--run-dir", str(unstopped)], capsys)[0] == 0
    shutil.copytree(unstopped, run)
    for folder in ("checkpoints/iteration_000004", "checkpoint"):
        shutil.rmtree(run / folder)
    code, out, err = _train(["--resume", str(run)], capsys)
    assert code == 0, err[-3000:]
    assert f"resuming {run} at iteration 2 " in out
    assert_same_run(unstopped, run)
