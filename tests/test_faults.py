"""Faults: files cut short, runs stopped and resumed, commands interrupted (issue 20).

A stopped run resumed from its last checkpoint must end with the same files as a run that was
never stopped: the same ``evals.csv`` rows, the same ``best.zip``, the same final weights and
final evaluation. A checkpoint cut short is passed over for the newest whole one, with the
reason. Sizes are tiny; every test here is marked slow.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from test_train import TINY

from training.config import ConfigError, validate

pytestmark = pytest.mark.slow

#: Four updates of 128 steps, a checkpoint every two (and one after the warm start), the best
#: periodic evaluation chosen for the final one: every file a resume must get right.
RUN = {
    **TINY,
    "total_timesteps": 512,
    "checkpoint_every": 2,
    "eval": {**TINY["eval"], "final_checkpoint": "best"},
}
RESULTS = ("evals.csv", "final_eval.csv")


def _weights(path: Path) -> dict[str, torch.Tensor]:
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, device="cpu").policy.state_dict()


def assert_same_run(a: Path, b: Path) -> None:
    """The results two run folders must share (timings aside)."""
    for name in RESULTS:
        assert (a / name).read_text() == (b / name).read_text(), name
    for name in ("final.zip", "best.zip"):
        wa, wb = _weights(a / name), _weights(b / name)
        assert all(torch.equal(wa[k], wb[k]) for k in wa), name


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run that was never stopped."""
    from training.train import train

    run = tmp_path_factory.mktemp("finished") / "run"
    train(validate(RUN), run, progress=False)
    return run


def _copy(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    return dest


# Atomic files ---------------------------------------------------------------------------------


def test_a_file_written_atomically_is_the_old_or_the_new_one(tmp_path: Path) -> None:
    from evaluation.records import atomic_path, write_text

    path = tmp_path / "report.md"
    write_text(path, "old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half of the new")
        raise RuntimeError("killed")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary left
    write_text(path, "new")
    assert path.read_text() == "new"


# Checkpoints cut short -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["model.zip", "state.json", "pool_and_rng.pt", "best.zip", "done"])
def test_a_truncated_checkpoint_is_skipped_for_the_newest_whole_one(
    finished: Path, tmp_path: Path, name: str
) -> None:
    from training.checkpoints import latest_checkpoint

    run = _copy(finished, tmp_path / "run")
    newest = run / "checkpoints" / "update_000004"
    if name == "done":
        (newest / name).unlink()  # killed before the marker
    else:
        data = (newest / name).read_bytes()
        (newest / name).write_bytes(data[: len(data) // 2])
    skipped: list[str] = []
    assert latest_checkpoint(run, skipped) == run / "checkpoints" / "update_000002"
    (line,) = skipped
    assert line.startswith("update_000004: ")
    assert (name if name != "done" else "done marker") in line


def test_resume_falls_back_past_a_corrupt_checkpoint_and_ends_as_the_unstopped_run(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As if killed at update 4 while saving: the newest checkpoint is cut short, and the
    run's best.zip and evals.csv are those of update 4, past the checkpoint the resume uses."""
    from cli import main as cli

    run = _copy(finished, tmp_path / "run")
    model = run / "checkpoints" / "update_000004" / "model.zip"
    model.write_bytes(model.read_bytes()[:1000])
    for name in RESULTS[1:] + ("final.zip",):
        (run / name).unlink()
    assert cli.main(["train", "--resume", str(run), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "skipping checkpoint update_000004: model.zip is not a readable zip" in err
    assert_same_run(finished, run)


def test_a_resume_drops_what_came_after_the_checkpoint(finished: Path, tmp_path: Path) -> None:
    """Killed after update 3's evaluation, with the last checkpoint at update 2: no doubled
    rows in evals.csv, and best.zip is the checkpoint's, not the lost update's."""
    from training.train import train

    run = _copy(finished, tmp_path / "run")
    shutil.rmtree(run / "checkpoints" / "update_000004")
    train(validate(RUN), run, resume=True, progress=False)
    rows = (run / "evals.csv").read_text().splitlines()
    assert len(rows) == len(set(rows)) == 1 + 5  # the header, then updates 0 to 4
    assert_same_run(finished, run)


# Overrides on --resume -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("ppo.card_width=32", "ppo.card_width is 8 in the run, 32 asked"),
        ("rules=napola", "rules is scopa (target 11) in the run, napola (target 11) asked"),
        ("ppo.policy=mlp", "ppo.policy is 'card' in the run, 'mlp' asked"),
    ],
)
def test_resume_refuses_overrides_that_contradict_the_checkpoints(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, named: str
) -> None:
    from cli import main as cli

    run = _copy(finished, tmp_path / "run")
    before = (run / "config.yaml").read_text()
    assert cli.main(["train", "--resume", str(run), override]) == 2
    assert named in capsys.readouterr().err
    assert (run / "config.yaml").read_text() == before


def test_resume_takes_an_override_that_fits_and_records_it(finished: Path, tmp_path: Path) -> None:
    from training.config import load_config
    from training.train import train

    run = _copy(finished, tmp_path / "run")
    longer = load_config(run / "config.yaml", ["total_timesteps=640"])
    with pytest.raises(ConfigError, match="ppo.global_width"):
        train(load_config(run / "config.yaml", ["ppo.global_width=4"]), run, resume=True)
    assert train(longer, run, resume=True, progress=False).timesteps == 640
    assert load_config(run / "config.yaml").total_timesteps == 640
