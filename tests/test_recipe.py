"""``scopa recipe``: a config of ``scopa`` commands run in order (``cli/recipe.py``)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import play_deals

from agents import GreedyAgent
from agents.seat_value import SeatEnsemble, SeatValue, load_seat_network
from cli.main import main
from cli.recipe import JOURNAL
from evaluation.players import PlayerSpec
from scopa_env.rules import resolve_rules

REPOSITORY = Path(__file__).resolve().parents[1]

#: The shipped recipe's shape at a few seconds a step: a cheap search's decisions, the
#: last-round network, a seat network, a round of DAgger rolled in with both, the refit and
#: the mean of the two seat networks.
TINY = """
name: tiny
steps:
  - name: LR
    run: >-
      train --config configs/expert_iteration_alphabeta_value.yaml --collect-only seed=7
      warm_start.teacher=alphabeta "warm_start.teacher_options={samples: 2, depth: 1}"
      warm_start.samples=400 warm_start.task_samples=200 warm_start.workers=1
  - name: last_round
    run: last-round --tasks {LR}/warm_start --epochs 1 --width 16 --layers 1
  - name: SV0
    run: seat-value --tasks {LR}/warm_start --epochs 1 --width 16 --layers 1
  - name: D1
    run: >-
      train --config configs/dagger_seat_value.yaml --collect-only warm_start.teacher=alphabeta
      "warm_start.teacher_options={samples: 2, depth: 1}"
      "warm_start.rollin_options={network: {SV0}, value: {last_round}}"
      warm_start.samples=400 warm_start.task_samples=200 warm_start.workers=1
  - name: SV1
    run: >-
      seat-value --tasks {LR}/warm_start {D1}/warm_start --init {SV0} --epochs 1 --width 16
      --layers 1
  - name: ensemble
    run: seat-ensemble {SV0} {SV1}
agent: seat_value:network={ensemble},value={last_round}
"""


def _recipe(tmp_path: Path, text: str = TINY) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return path


def _stamps(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPOSITORY)  # the recipes name configs/ as the READMEs' commands do


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny recipe, run to its end once: (the recipe, its folder)."""
    root = tmp_path_factory.mktemp("recipe")
    recipe, run_dir = _recipe(root), root / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPOSITORY)
        assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    return recipe, run_dir


def test_the_shipped_recipe_is_checked_whole_and_names_what_the_readmes_run(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run_dir = tmp_path / "run"
    recipe = REPOSITORY / "configs" / "pretrained.yaml"
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--dry-run"]) == 0
    assert not run_dir.exists()
    out = capsys.readouterr().out.splitlines()
    commands = [shlex.split(line)[1:] for line in out if line.startswith("scopa ")]
    steps = [line.split()[1] for line in out if line.startswith("# ") and "(to do)" in line]
    assert len(commands) == len(steps) == 16
    assert steps[-1] == "ensemble"
    assert commands[-1][:4] == [
        "seat-ensemble",
        *(str(run_dir / f"{name}.pt") for name in ("PK", "W256", "P128")),
    ]
    assert (
        out[-1] == f"seat_value:network={run_dir / 'ensemble.pt'},value={run_dir / 'last_round.pt'}"
    )
    dagger = [c for c in commands if "configs/dagger_seat_value.yaml" in c]
    assert [c[-1] for c in dagger] == [str(run_dir / name) for name in ("D1", "D2", "D3")]
    rolled_in = [next(w for w in c if w.startswith("warm_start.rollin_options")) for c in dagger]
    assert rolled_in == [
        f"warm_start.rollin_options={{network: {run_dir / net}.pt, value: "
        f"{run_dir / 'last_round.pt'}}}"
        for net in ("SV0", "SV1", "SV3")
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("seat-ensemble {SV0} {SV1}", "seat-ensemble {SV0} {SV2}"), "refers to {SV2}"),
        (("name: SV1", "name: SV0"), "two steps are named SV0"),
        (("seat-ensemble {SV0}", "ensemble {SV0}"), "step ensemble runs 'ensemble'"),
        (("seat-ensemble {SV0} {SV1}", "seat-ensemble {SV0} --out x.pt"), "gives --out"),
        (
            (
                "value --tasks {LR}/warm_start --epochs 1",
                "value --tasks {LR}/warm_start --epochs one",
            ),
            "step SV0 (seat-value): scopa seat-value: error: argument --epochs",
        ),
        (("warm_start.workers=1\n  - name: last", "warm_start.wrkers=1\n  - name: last"), "wrkers"),
        (("agent: seat_value", "agnet: seat_value"), "agnet"),
        (("run: seat-ensemble {SV0} {SV1}", "run: ' '"), "step ensemble runs no command"),
        (("name: SV1", "name: 1SV"), "steps.4.name"),
        (("{ensemble},value", "{elsewhere},value"), "agent refers to {elsewhere}"),
    ],
)
def test_a_mistake_anywhere_stops_the_recipe_before_its_first_step(
    change: tuple[str, str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    old, new = change
    assert old in TINY
    recipe, run_dir = _recipe(tmp_path, TINY.replace(old, new, 1)), tmp_path / "run"
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 2
    assert message in capsys.readouterr().err
    assert not run_dir.exists()


def test_until_names_a_step_and_a_broken_journal_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    recipe, run_dir = _recipe(tmp_path), tmp_path / "run"
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--until", "SV9"]) == 2
    assert "--until SV9: the steps are LR, last_round, SV0, D1, SV1, ensemble" in (
        capsys.readouterr().err
    )
    run_dir.mkdir()
    (run_dir / JOURNAL).write_text("[1, 2]")
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 2
    assert f"{run_dir / JOURNAL} is not a recipe's journal" in capsys.readouterr().err
    assert sorted(p.name for p in run_dir.iterdir()) == [JOURNAL]


@pytest.mark.slow
def test_the_recipe_makes_the_player_it_names(made: tuple[Path, Path]) -> None:
    _, run_dir = made
    journal = json.loads((run_dir / JOURNAL).read_text())
    assert [entry["done"] for entry in journal.values()] == [True] * 6
    agent = f"seat_value:network={run_dir / 'ensemble.pt'},value={run_dir / 'last_round.pt'}"
    player = PlayerSpec.parse(agent).build(resolve_rules("scopa"))
    members = [SeatValue.load(run_dir / f"{name}.pt") for name in ("SV0", "SV1")]
    assert isinstance(player.net, SeatEnsemble)
    for loaded, saved in zip(player.net.networks, members, strict=True):
        assert all(torch.equal(loaded.state_dict()[k], v) for k, v in saved.state_dict().items())
    assert play_deals({"player_0": player, "player_1": GreedyAgent()}, range(2))


@pytest.mark.slow
def test_a_step_is_the_command_typed_alone(made: tuple[Path, Path], tmp_path: Path) -> None:
    _, run_dir = made
    line = json.loads((run_dir / JOURNAL).read_text())["SV1"]["command"]
    assert line[-2:] == ["--out", str(run_dir / "SV1.pt")]
    alone = tmp_path / "SV1.pt"
    typed = subprocess.run(
        [sys.executable, "-m", "cli.main", *line[:-1], str(alone)], capture_output=True, check=False
    )
    assert typed.returncode == 0, typed.stderr
    ours, theirs = SeatValue.load(run_dir / "SV1.pt"), SeatValue.load(alone)
    assert all(torch.equal(v, theirs.state_dict()[k]) for k, v in ours.state_dict().items())


@pytest.mark.slow
def test_a_made_recipe_is_left_alone_and_a_changed_one_refused(
    made: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    recipe, run_dir = made
    before = _stamps(run_dir)
    capsys.readouterr()
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert out.count(": done\n") == 6
    assert _stamps(run_dir) == before
    changed = _recipe(tmp_path, TINY.replace("--epochs 1 --width 16", "--epochs 2 --width 16", 1))
    assert main(["recipe", str(changed), "--run-dir", str(run_dir)]) == 2
    assert "step last_round of" in capsys.readouterr().err
    assert _stamps(run_dir) == before


@pytest.mark.slow
def test_a_stopped_recipe_carries_on_to_what_an_unstopped_one_made(
    made: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Stopped in the DAgger round after its first task: the same command runs the round on
    from its saved task (``train --resume``), then the steps after it, to the same files. The
    steps before the round are the made recipe's, copied with their journal entries."""
    recipe, whole = made
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copytree(whole / "LR", run_dir / "LR")
    for name in ("last_round.pt", "SV0.pt"):
        shutil.copy2(whole / name, run_dir / name)
    before = json.loads((whole / JOURNAL).read_text().replace(str(whole), str(run_dir)))
    (run_dir / JOURNAL).write_text(json.dumps({k: before[k] for k in ("LR", "last_round", "SV0")}))
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--until", "D1"]) == 0
    out = capsys.readouterr().out
    assert out.count(": done\n") == 3 and "stopped after D1" in out  # LR to SV0 not run again
    journal = json.loads((run_dir / JOURNAL).read_text())
    assert list(journal) == ["LR", "last_round", "SV0", "D1"]
    journal["D1"]["done"] = False
    (run_dir / JOURNAL).write_text(json.dumps(journal))
    tasks = sorted((run_dir / "D1" / "warm_start").glob("task_*.npz"))
    assert len(tasks) == 2
    tasks[1].unlink()
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    assert f"D1: scopa train --resume {run_dir / 'D1'} --collect-only" in capsys.readouterr().out
    for name in ("D1/warm_start/" + tasks[1].name, "ensemble.pt"):
        a, b = run_dir / name, whole / name
        if name.endswith(".npz"):
            with np.load(a) as x, np.load(b) as y:
                assert all(
                    np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind == "f") for k in x.files
                )
        else:
            rules = resolve_rules("scopa")
            ours, theirs = load_seat_network(a, rules), load_seat_network(b, rules)
            assert all(torch.equal(v, theirs.state_dict()[k]) for k, v in ours.state_dict().items())


def test_a_fit_that_ended_unrecorded_is_done_and_one_with_its_saved_fit_is_carried_on(
    made: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _, whole = made
    run_dir = tmp_path / "run"
    shutil.copytree(whole, run_dir)
    recipe = _recipe(tmp_path)
    moved = (run_dir / JOURNAL).read_text().replace(str(whole), str(run_dir))
    journal = json.loads(moved)
    journal["ensemble"]["done"] = False
    (run_dir / JOURNAL).write_text(json.dumps(journal))
    before = _stamps(run_dir)
    capsys.readouterr()
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    assert "ensemble: done (it ended before the journal recorded it)" in capsys.readouterr().out
    assert {k: v for k, v in _stamps(run_dir).items() if k != JOURNAL} == {
        k: v for k, v in before.items() if k != JOURNAL
    }
    # A fit whose saved epochs are still beside its file was stopped before it ended: run on.
    journal = json.loads((run_dir / JOURNAL).read_text())
    journal["SV1"]["done"] = False
    (run_dir / JOURNAL).write_text(json.dumps(journal))
    shutil.copy(run_dir / "SV1.pt", run_dir / "SV1.fit.pt")  # not a saved fit: fit again
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    assert "SV1: scopa seat-value" in capsys.readouterr().out
    assert not (run_dir / "SV1.fit.pt").exists()


def test_a_step_begun_by_another_command_is_forgotten_if_it_left_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    recipe, run_dir = _recipe(tmp_path), tmp_path / "run"
    run_dir.mkdir()
    begun = {"LR": {"command": ["train", "--config", "other.yaml"], "done": False}}
    (run_dir / JOURNAL).write_text(json.dumps(begun))
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--dry-run"]) == 0
    assert "# LR (to do)\n" in capsys.readouterr().out
    (run_dir / "LR").mkdir()
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "step LR was begun by another command, scopa train --config other.yaml" in err
    assert f"left {run_dir / 'LR'}: remove it" in err
    begun["LR"]["done"] = True
    (run_dir / JOURNAL).write_text(json.dumps(begun))
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--dry-run"]) == 2
    assert f"step LR of {run_dir} was made by another command" in capsys.readouterr().err


def test_a_value_step_writes_its_folder_the_agent_names(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    recipe = _recipe(
        tmp_path,
        "name: value\nsteps:\n  - name: V\n    run: value --config configs/deal_value.yaml "
        "deals=40 chunk=20 epochs=1 workers=1 holdout_every=2\n"
        "agent: alphabeta_value:value={V}/deal_value.npz,samples=2\n",
    )
    run_dir = tmp_path / "run"
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    agent = f"alphabeta_value:value={run_dir / 'V' / 'deal_value.npz'},samples=2"
    assert f"the agent is {agent}" in capsys.readouterr().out
    player = PlayerSpec.parse(agent).build(resolve_rules("scopa"))
    assert play_deals({"player_0": player, "player_1": GreedyAgent()}, range(1))
    # Stopped after the step's command ended but before the journal said so: recorded done.
    journal = json.loads((run_dir / JOURNAL).read_text())
    journal["V"]["done"] = False
    (run_dir / JOURNAL).write_text(json.dumps(journal))
    before = _stamps(run_dir / "V")
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir)]) == 0
    assert "V: done (it ended before the journal recorded it)" in capsys.readouterr().out
    assert _stamps(run_dir / "V") == before
    assert json.loads((run_dir / JOURNAL).read_text())["V"]["done"] is True
    broken = _recipe(tmp_path, recipe.read_text().replace("deals=40", "dels=40"))
    assert main(["recipe", str(broken), "--run-dir", str(tmp_path / "other")]) == 2
    assert "step V: invalid config configs/deal_value.yaml" in capsys.readouterr().err


def _readme_commands(path: Path) -> dict[str, list[str]]:
    """The ``scopa`` commands of a README's code blocks, by the folder or file they write."""
    lines, commands = path.read_text().splitlines(), {}
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("scopa ") or not line.startswith("    "):
            continue
        text = line
        while text.endswith("\\"):
            i += 1
            text = text[:-1] + lines[i]
        words = shlex.split(text)[1:]
        written = words[words.index("--run-dir" if "--run-dir" in words else "--out") + 1]
        commands[written.removesuffix(".pt")] = words
    return commands


def test_the_shipped_recipe_runs_the_commands_its_readme_records(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The seat networks' recorded commands are the recipe's steps, word for word, but for
    the one difference the recipe's comments give: a DAgger round rolls in with the recipe's
    own last-round network."""
    run_dir = tmp_path / "run"
    recipe = REPOSITORY / "configs" / "pretrained.yaml"
    assert main(["recipe", str(recipe), "--run-dir", str(run_dir), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    steps = {
        line.split()[1]: shlex.split(out[i + 1])[1:]
        for i, line in enumerate(out)
        if line.startswith("# ") and "(to do)" in line
    }
    recorded = _readme_commands(REPOSITORY / "agents" / "pretrained_seat_value" / "README.md")
    assert sorted(recorded) == ["AV", "D1", "D2", "SV0", "SV1", "SV2"]
    own = f", value: {run_dir / 'last_round.pt'}"
    for name, words in recorded.items():
        ours = [w.replace(own, "").replace(f"{run_dir}/", "") for w in steps[name]]
        assert sorted(ours) == sorted(words), name
