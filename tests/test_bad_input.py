"""Bad input, layer by layer: each mistake is its own error type, names the bad value and
changes nothing; on the command line it is one line on stderr and exit status 2.

Every case below was a traceback, a silent coercion or a silent default before (issue 20).
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import assert_same, snapshot

from agents import make_agent
from cli import main as cli
from evaluation.harness import EvaluationError, evaluate
from scopa_env import scopa_v0, scopone_v0
from scopa_env.batched import BatchedScopa
from scopa_env.engine import Deal
from scopa_env.errors import (
    CheckpointError,
    EnvironmentArgumentError,
    IllegalMoveError,
    PlayerError,
    PositionError,
    ResetNeededError,
    RulesError,
    ScopaError,
    TableError,
    UnknownPlayerError,
)
from scopa_env.rules import Rules, resolve_rules
from scopa_env.single_agent import ScopaSingleAgentEnv
from scopa_env.tables import resolve_table
from scopa_env.vector_env import ScopaVecEnv, ScopaVectorEnv
from training.config import ConfigError, parse_overrides, validate

ROOT = Path(__file__).resolve().parents[1]
DECK = list(range(40))


def _not_a_checkpoint(folder: Path) -> Path:
    path = folder / "notes.zip"
    path.write_text("not a zip")
    return path


# The game -----------------------------------------------------------------------------------

DEAL_MOVES = [
    ((0.9, []), "0.9"),
    (("0", []), "'0'"),
    ((True, []), "True"),
    ((0, [1.5]), "1.5"),
    ((0, "12"), "'1'"),
    ("0", "'0'"),
]


@pytest.mark.parametrize(("move", "named"), DEAL_MOVES, ids=[repr(m) for m, _ in DEAL_MOVES])
def test_a_move_of_the_wrong_type_is_refused_not_coerced(move: Any, named: str) -> None:
    deal = Deal.from_deck(DECK)
    before = deal.to_dict()
    with pytest.raises(IllegalMoveError) as error:
        deal.play(move)
    assert named in str(error.value)
    assert deal.to_dict() == before


GAME_CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("float deck", lambda: Deal.from_deck([float(c) for c in DECK]), PositionError, "0.0"),
    ("string deck", lambda: Deal.from_deck([str(c) for c in DECK]), PositionError, "'0'"),
    ("float seat", lambda: Deal.from_deck(DECK, first_player=1.0), PositionError, "1.0"),
    ("bool seat", lambda: Deal.from_deck(DECK, first_player=True), PositionError, "True"),
    (
        "float scope",
        lambda: Deal.from_position([[0], [1]], [2], scope=[0.5, 0]),
        PositionError,
        "0.5",
    ),
    ("float target", lambda: Rules(target=11.0), RulesError, "11.0"),
    ("string option", lambda: Rules(napola="yes"), RulesError, "'yes'"),
    ("unknown preset", lambda: resolve_rules("scopa_vecchia"), RulesError, "scopa_vecchia"),
    ("unknown option", lambda: resolve_rules({"colour": 1}), RulesError, "colour"),
    ("unknown table", lambda: resolve_table("briscola"), TableError, "briscola"),
    ("env argument", lambda: scopa_v0.env(foo=1), EnvironmentArgumentError, "foo"),
    ("env episode", lambda: scopa_v0.raw_env(episode="hand"), EnvironmentArgumentError, "hand"),
    (
        "scopone deal",
        lambda: scopone_v0.raw_env(deal="tressette"),
        EnvironmentArgumentError,
        "tressette",
    ),  # fmt: skip
    (
        "reset seat",
        lambda: scopa_v0.raw_env().reset(options={"first_player": 1.0}),
        EnvironmentArgumentError,
        "1.0",
    ),  # fmt: skip
    (
        "reset deck",
        lambda: scopa_v0.raw_env().reset(options={"deck": [str(c) for c in DECK]}),
        PositionError,
        "'0'",
    ),  # fmt: skip
    ("float players", lambda: scopa_v0.env(players=2.0), TableError, "2.0"),
    ("players and table", lambda: scopa_v0.env(players=3, table="scopa_4"), TableError, "scopa_4"),
    ("scopone in scopa_v0", lambda: scopa_v0.env(table="scopone"), TableError, "scopone"),
    ("single seat", lambda: ScopaSingleAgentEnv(seat=1.0), EnvironmentArgumentError, "1.0"),
    (
        "single render mode",
        lambda: ScopaSingleAgentEnv(render_mode="gif"),
        EnvironmentArgumentError,
        "gif",
    ),  # fmt: skip
    ("single opponent", lambda: ScopaSingleAgentEnv(opponent=42), PlayerError, "42"),
    ("vector seat", lambda: ScopaVecEnv(4, seat=3), EnvironmentArgumentError, "3"),
    ("vector opponent", lambda: ScopaVectorEnv(4, opponent=42), PlayerError, "42"),
    (
        "single opponent's table",
        lambda: ScopaSingleAgentEnv(opponent="alphabeta_value", table="scopa_4"),
        PlayerError,
        "alphabeta_value plays two-player Scopa only",
    ),  # fmt: skip
    (
        "single opponent's network",
        lambda: ScopaSingleAgentEnv(opponent="pretrained_scopa_4"),
        TableError,
        "pretrained_scopa_4 was trained for the 'scopa_4' table, not 'scopa'",
    ),  # fmt: skip
    (
        "vector opponent's network",
        lambda: ScopaVectorEnv(4, table="scopone", opponent=make_agent("pretrained_scopa_6")),
        TableError,
        "policy was trained for the 'scopa_6' table, not 'scopone'",
    ),  # fmt: skip
    (
        "vector opponent's table",
        lambda: ScopaVectorEnv(4, table="scopa_6", opponent=make_agent("seat_value").act_batch),
        PlayerError,
        "seat_value plays two-player Scopa only",
    ),  # fmt: skip
    ("batched games", lambda: BatchedScopa(2.5), EnvironmentArgumentError, "2.5"),
    ("batched bool games", lambda: BatchedScopa(True), EnvironmentArgumentError, "True"),
    ("batched episode", lambda: BatchedScopa(2, episode="hand"), EnvironmentArgumentError, "hand"),
    ("batched reward", lambda: BatchedScopa(2, reward="win"), EnvironmentArgumentError, "win"),
    ("batched seed", lambda: BatchedScopa(2, seed=1.5), EnvironmentArgumentError, "1.5"),
    ("vector games", lambda: ScopaVecEnv(2.5), EnvironmentArgumentError, "2.5"),
    ("vector episode", lambda: ScopaVecEnv(2, episode="hand"), EnvironmentArgumentError, "hand"),
    ("vector seed", lambda: ScopaVecEnv(2, seed=True), EnvironmentArgumentError, "True"),
    ("step before reset", lambda: scopa_v0.raw_env().step(0), ResetNeededError, "reset"),
    ("last before reset", lambda: scopa_v0.raw_env().last(), ResetNeededError, "reset"),
    (
        "observe before reset",
        lambda: scopa_v0.raw_env().observe("player_0"),
        ResetNeededError,
        "reset",
    ),
    ("unknown player", lambda: make_agent("nobody"), UnknownPlayerError, "nobody"),
    ("string option", lambda: make_agent("ismcts", iterations="abc"), PlayerError, "'abc'"),
    ("bool count", lambda: make_agent("ismcts", iterations=True), PlayerError, "True"),
    ("unknown option", lambda: make_agent("ismcts", bogus=1), PlayerError, "bogus"),
    ("zero iterations", lambda: make_agent("ismcts", iterations=0), PlayerError, "0"),
    (
        "missing checkpoint",
        lambda: make_agent("nowhere/model.zip"),
        CheckpointError,
        "nowhere/model.zip",
    ),  # fmt: skip
    ("unparsable override", lambda: parse_overrides(["n_envs=[1"]), ConfigError, "[1"),
    ("string count", lambda: validate({"n_envs": "8"}), ConfigError, "n_envs"),
    ("unknown key", lambda: validate({"n_env": 8}), ConfigError, "n_env"),
    ("chunk", lambda: evaluate(["greedy", "random"], deals=1, chunk=0), EvaluationError, "chunk"),
    (
        "workers",
        lambda: evaluate(["greedy", "random"], deals=1, workers=0),
        EvaluationError,
        "workers",
    ),  # fmt: skip
    ("float deals", lambda: evaluate(["greedy", "random"], deals=1.5), EvaluationError, "1.5"),
    ("nothing to play", lambda: evaluate(["greedy", "random"], deals=0), EvaluationError, "0"),
    (
        "negative seed",
        lambda: evaluate(["greedy", "random"], deals=1, seed=-1),
        EvaluationError,
        "-1",
    ),  # fmt: skip
    ("one player", lambda: evaluate(["greedy", "greedy"], deals=1), EvaluationError, "greedy"),
]


@pytest.mark.parametrize(
    ("make", "kind", "named"), [c[1:] for c in GAME_CASES], ids=[c[0] for c in GAME_CASES]
)
def test_each_mistake_has_its_type_and_names_the_value(
    make: Callable[[], Any], kind: type[Exception], named: str
) -> None:
    with pytest.raises(kind) as error:
        make()
    assert isinstance(error.value, ScopaError)
    assert isinstance(error.value, ValueError | RuntimeError)
    assert named in str(error.value)


def test_a_bad_checkpoint_file_is_a_checkpoint_error(tmp_path: Path) -> None:
    path = _not_a_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match="notes.zip is not a loadable"):
        make_agent(path)


@pytest.mark.parametrize("action", [0.9, "4", True, None, 80, -1])
def test_a_bad_action_leaves_the_environment_as_it_was(action: Any) -> None:
    env = scopa_v0.raw_env()
    env.reset(seed=0)
    before = snapshot(env)
    with pytest.raises(IllegalMoveError, match=repr(action).replace("(", r"\(")):
        env.step(action)
    assert_same(before, snapshot(env))


BAD_SEEDS = [1.5, True, np.bool_(False), "1", -1, np.float64(2.0)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_a_seed_that_is_not_a_non_negative_integer_is_refused_by_every_environment(
    seed: Any,
) -> None:
    """NumPy raised its own TypeError for 1.5 and took True as 1; each reset now refuses it
    with the value named, and the environment plays on as it was."""
    aec = scopa_v0.raw_env()
    aec.reset(seed=0)
    before = snapshot(aec)
    single = ScopaSingleAgentEnv()
    single.reset(seed=0)
    batched = BatchedScopa(2, seed=0)
    batched.reset(seed=0)
    state, rng = copy.deepcopy(batched.state), batched.rng.bit_generator.state
    gym_vector = ScopaVectorEnv(2)
    sb3_vector = ScopaVecEnv(2)
    for reset in (
        aec.reset,
        scopone_v0.raw_env().reset,
        single.reset,
        batched.reset,
        gym_vector.reset,
        sb3_vector.batch.reset,  # where SB3's seed(...) arrives at the next reset()
    ):
        with pytest.raises(EnvironmentArgumentError, match=re.escape(repr(seed))):
            reset(seed=seed)
    with pytest.raises(EnvironmentArgumentError, match=re.escape(repr(seed))):
        gym_vector.reset(seed=[0, seed])  # Gymnasium's per-environment seeds
    assert_same(before, snapshot(aec))
    assert batched.rng.bit_generator.state == rng
    for name, value in vars(state).items():
        np.testing.assert_array_equal(getattr(batched.state, name), value, err_msg=name)


def test_the_wrapped_environment_refuses_a_float_action_before_ours_sees_it() -> None:
    """PettingZoo's own wrapper asserts on ``step(0.9)`` (its AssertionError, not ours, as the
    README says); the raw environment under it refuses it with IllegalMoveError."""
    env = scopa_v0.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError):
        env.step(0.9)
    raw = env.unwrapped
    before = snapshot(raw)
    with pytest.raises(IllegalMoveError, match="0.9"):
        raw.step(0.9)
    assert_same(before, snapshot(raw))


# The command line ---------------------------------------------------------------------------


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = cli.main(argv)
    except SystemExit as stop:  # argparse's own refusal of a bad option
        code = int(stop.code or 0)
    return code, capsys.readouterr().err


def _two_seat_checkpoint() -> str:
    return str(ROOT / "agents" / "pretrained_v5" / "model.zip")


CLI_CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    ("missing zip", lambda d: ["eval", str(d / "gone.zip"), "random"], "gone.zip"),
    ("option value", lambda d: ["eval", "ismcts:iterations=abc", "random"], "'abc'"),
    ("unknown option", lambda d: ["eval", "ismcts:bogus=1", "random"], "bogus"),
    ("not a checkpoint", lambda d: ["eval", str(_not_a_checkpoint(d)), "random"], "notes.zip"),
    ("misspelt player", lambda d: ["eval", "greedy", "rnadom"], "rnadom"),
    (
        "table",
        lambda d: ["eval", _two_seat_checkpoint(), "random", "--table", "scopone"],
        "scopone",
    ),  # fmt: skip
    (
        "two-player search",
        lambda d: ["eval", "alphabeta_value", "random", "--table", "scopa_4"],
        "alphabeta_value plays two-player Scopa only",
    ),  # fmt: skip
    (
        "two-player option",
        lambda d: ["eval", "alphabeta:infer=True", "greedy", "random", "--table", "scopa_3"],
        "alphabeta:infer=True plays two-player Scopa only",
    ),  # fmt: skip
    (
        "base player's table",
        lambda d: ["eval", "last_round", "random", "--table", "scopone"],
        "last_round's base player was trained for the 'scopa' table",
    ),  # fmt: skip
    ("chunk", lambda d: ["eval", "greedy", "random", "--chunk", "-1"], "-1"),
    ("workers", lambda d: ["eval", "greedy", "random", "--workers", "0"], "'0'"),
    ("nothing to play", lambda d: ["eval", "greedy", "random", "--deals", "0"], "0"),
    (
        "rules",
        lambda d: [
            "eval",
            "greedy",
            "random",
            "--rules",
            "scopa_a_quindici",
            "--rule",
            "ace_takes_all=true",
        ],
        "capture_sum=15",
    ),  # fmt: skip
    ("opponent", lambda d: ["play", "--opponent", "nobody"], "nobody"),
    (
        "partner's table",
        lambda d: ["play", "--table", "scopa_4", "--partner", "pretrained"],
        "pretrained plays two-player Scopa only",
    ),  # fmt: skip
    ("demo seed", lambda d: ["demo", "--seed", "-1"], "-1"),
    ("bench rules", lambda d: ["bench", "--rules", "nope"], "nope"),
    ("bench repeats", lambda d: ["bench", "--repeats", "0"], "'0'"),
    ("bench seconds", lambda d: ["bench", "--seconds", "0"], "'0'"),
    (
        "override",
        lambda d: ["train", "--config", str(ROOT / "configs/quick.yaml"), "n_envs=[1"],
        "[1",
    ),  # fmt: skip
    (
        "teacher's table",
        lambda d: [
            "train",
            "--config",
            str(ROOT / "configs/dagger_seat_value.yaml"),
            "table=scopa_6",
        ],
        "warm_start.rollin=seat_value plays two-player Scopa only",
    ),  # fmt: skip
    (
        "collected teacher's table",
        lambda d: [
            "train",
            "--config",
            str(ROOT / "configs/expert_iteration_alphabeta_value.yaml"),
            "--collect-only",
            "table=scopa_4",
        ],
        "warm_start.teacher=alphabeta_value plays two-player Scopa only",
    ),  # fmt: skip
    (
        "rllib opponent's table",
        lambda d: [
            "train",
            "--config",
            str(ROOT / "configs/rllib_quick.yaml"),
            "table=scopone",
            "opponents=[snapshot, seat_search]",
        ],
        "opponent seat_search plays two-player Scopa only",
    ),  # fmt: skip
    (
        "rllib override value",
        lambda d: ["train", "--config", str(ROOT / "configs/rllib_quick.yaml"), "hidden=[64,"],
        "override 'hidden=[64,': '[64,' is not a YAML value",
    ),  # fmt: skip
    (
        "rllib override type",
        lambda d: ["train", "--config", str(ROOT / "configs/rllib_quick.yaml"), "iterations=ten"],
        "iterations: Input should be a valid integer",
    ),  # fmt: skip
    (
        "override key",
        lambda d: ["train", "--config", str(ROOT / "configs/quick.yaml"), "ppo.n_epoch=2"],
        "ppo.n_epoch",
    ),  # fmt: skip
]


@pytest.mark.parametrize(
    ("argv", "named"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_the_command_line_prints_one_line_and_exits_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: Callable[[Path], list[str]],
    named: str,
) -> None:
    args = argv(tmp_path)
    out = tmp_path / "out"
    if args[0] in ("eval", "bench"):
        args += ["--out", str(out)]
    if args[0] == "train":
        args += ["--run-dir", str(out)]
    before = _files(tmp_path)
    code, err = _run(args, capsys)
    assert code == 2
    # One line (argparse adds its usage above; a config lists each bad key below).
    (message,) = [line for line in err.splitlines() if line.startswith(f"scopa {args[0]}: ")]
    assert named in err and "Traceback" not in err
    assert _files(tmp_path) == before  # nothing written: no journal, no run folder
    assert not out.exists()


def test_resume_without_a_checkpoint_and_an_existing_run_dir_are_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("name: stopped\nn_envs: 8\nselfplay: {groups: 2}\n")
    before = _files(tmp_path)
    code, err = _run(["train", "--resume", str(run)], capsys)
    assert code == 2 and f"{run} has no complete checkpoint" in err
    assert _files(tmp_path) == before

    config = tmp_path / "taken.yaml"
    config.write_text(f"name: taken\nrun_dir: {run}\nn_envs: 8\nselfplay: {{groups: 2}}\n")
    before = _files(tmp_path)
    code, err = _run(["train", "--config", str(config)], capsys)
    assert code == 2 and f"run folder {run} already exists" in err
    assert _files(tmp_path) == before


def test_an_rllib_run_folder_is_neither_reused_nor_resumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before Ray starts: a folder that exists, ``--resume`` of an RLlib run with no
    checkpoint, and an override on ``--resume`` that would change what it learns."""
    rllib = ROOT / "configs" / "rllib_quick.yaml"
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(rllib.read_text())
    before = _files(tmp_path)
    code, err = _run(["train", "--config", str(rllib), "--run-dir", str(run)], capsys)
    assert code == 2 and f"run folder {run} already exists; choose another --run-dir" in err
    code, err = _run(["train", "--resume", str(run)], capsys)
    assert code == 2 and f"{run} has no complete checkpoint to resume from" in err
    assert "Traceback" not in err
    code, err = _run(["train", "--resume", str(run), "learning_rate=0.5"], capsys)
    assert code == 2 and "learning_rate is 0.0001 in the run, 0.5 asked" in err
    assert _files(tmp_path) == before


def test_the_shipped_policy_network_is_replaced_only_on_purpose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export_to: agents/pretrained_v5`` is the repository's folder from any working directory,
    and a run that would overwrite it is refused before it starts."""
    from training.config import load_config

    shipped = ROOT / "agents" / "pretrained_v5"
    monkeypatch.chdir(tmp_path)
    config = load_config(ROOT / "configs" / "full.yaml")
    assert config.export_dir() == shipped
    before = _files(shipped)
    argv = ["train", "--config", str(ROOT / "configs" / "full.yaml"), "--run-dir", "run"]
    code, err = _run(argv, capsys)
    assert code == 2 and "export_overwrite=true" in err and str(shipped) in err
    assert _files(shipped) == before and not (tmp_path / "run").exists()
    load_config(ROOT / "configs" / "full.yaml", ["export_overwrite=true"]).check_export()


def test_a_failed_evaluation_leaves_no_journal_to_block_the_corrected_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["--deals", "1", "--out", str(tmp_path), "--no-progress"]
    assert _run(["eval", "greedy", "rnadom", *out], capsys)[0] == 2
    assert not (tmp_path / "journal.jsonl").exists()
    assert _run(["eval", "greedy", "random", *out], capsys)[0] == 0
    assert (tmp_path / "games.csv").is_file()


def test_a_failed_evaluation_leaves_no_empty_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default ``--out runs/eval`` and its parent ``runs/`` are gone again after a mistake."""
    monkeypatch.chdir(tmp_path)
    assert _run(["eval", "greedy", "rnadom", "--deals", "1", "--no-progress"], capsys)[0] == 2
    assert list(tmp_path.iterdir()) == []


def test_every_error_type_is_a_scopa_error() -> None:
    for kind in (RulesError, TableError, PlayerError, CheckpointError, PositionError, ConfigError,
                 EvaluationError, EnvironmentArgumentError):  # fmt: skip
        assert issubclass(kind, ScopaError) and issubclass(kind, ValueError)
