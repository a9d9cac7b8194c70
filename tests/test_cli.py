"""The ``scopa`` command: subcommand table, lazy imports, and the demo match."""

from __future__ import annotations

import subprocess
import sys

import pytest

from training import cli


def test_help_lists_available_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name, command in cli.available_commands().items():
        assert name in out
        assert command.help in out


def test_help_imports_no_subcommand_module() -> None:
    code = (
        "import sys\n"
        "from training.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('torch', 'training.demo', 'training.train') if m in sys.modules]\n"
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
