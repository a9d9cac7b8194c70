"""The ``scopa`` command: subcommand table, lazy imports, and the demo match."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

import scopa_env
from cli import main as cli
from cli.rules_args import (
    add_rules_arguments,
    parse_rule_option,
    rules_from_args,
)
from scopa_env.rules import Rules, describe_rules


def test_help_lists_available_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # as argparse wraps it or not
    for name, command in cli.available_commands().items():
        assert f" {name} {command.help}" in out


def test_version_is_the_one_the_package_states(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"scopa-env {scopa_env.__version__}\n"


def test_help_imports_no_subcommand_module() -> None:
    code = (
        "import sys\n"
        "from cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('torch', 'cli.demo', 'training.train') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_missing_module_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {**cli.COMMANDS, "nope": cli.Command("training.no_such_module", "not there")}
    monkeypatch.setattr(cli, "COMMANDS", table)
    assert "nope" not in cli.available_commands()
    assert "demo" in cli.available_commands()


def test_no_command_is_an_error() -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main([])
    assert exit_info.value.code == 2


@pytest.mark.parametrize("preset", ["scopa", "scopa_a_quindici"])
def test_demo_plays_a_match_to_the_end(preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--seed", "1", "--rules", preset, "--target", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"scopa demo: rules={preset}")
    assert any(line.startswith("deal  1") for line in lines)
    assert " wins " in lines[-1]


def test_demo_takes_rule_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["demo", "--seed", "2", "--rules", "re_bello", "--rule", "napola=true", "--target", "4"]
    assert cli.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("scopa demo: rules=re_bello napola=true target=4")
    assert "napola" in lines[2] and "re_bello" in lines[2]


@pytest.mark.parametrize(
    ("text", "option"),
    [
        ("target=21", ("target", 21)),
        ("fewest_cards_capture=TRUE", ("fewest_cards_capture", True)),
        ("last_play_scopa=off", ("last_play_scopa", False)),
        ("capture_sum=15", ("capture_sum", 15)),
        ("capture_sum=none", ("capture_sum", None)),
        (" napola = yes ", ("napola", True)),
    ],
)
def test_rule_options_are_typed(text: str, option: tuple) -> None:
    assert parse_rule_option(text) == option


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("colour=red", "unknown rule option 'colour'"),
        ("napola", "KEY=VALUE"),
        ("target=eleven", "rule option target takes an integer, got 'eleven'"),
        ("re_bello=2", "rule option re_bello takes true or false, got '2'"),
        ("capture_sum=x", "rule option capture_sum takes an integer or none"),
    ],
)
def test_bad_rule_options_name_the_option(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rule_option(text)


def test_rules_from_the_command_line_and_their_description() -> None:
    def rules(*argv: str) -> Rules:
        parser = argparse.ArgumentParser()
        add_rules_arguments(parser)
        return rules_from_args(parser.parse_args(argv))

    assert rules() == Rules()
    napola = rules("--rules", "napola", "--rule", "target=21", "--rule", "re_bello=true")
    assert napola == Rules(napola=True, re_bello=True, target=21)
    assert rules("--rules", "napola", "--target", "16").target == 16
    with pytest.raises(ValueError, match="disagree"):
        rules("--target", "16", "--rule", "target=21")
    with pytest.raises(ValueError, match="ace_sweep_scopa needs ace_takes_all"):
        rules("--rules", "asso_pigliatutto", "--rule", "ace_takes_all=false")
    assert describe_rules(Rules()) == "scopa (target 11)"
    assert describe_rules(napola) == "napola (target 21, re_bello=true)"
    asso = Rules.preset("asso_pigliatutto", fewest_cards_capture=True)
    assert describe_rules(asso) == "asso_pigliatutto (target 11, fewest_cards_capture=true)"
