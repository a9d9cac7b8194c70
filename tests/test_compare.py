"""Two runs against one opponent, paired deck by deck (``scopa compare``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import agents
from agents.heuristic import HeuristicAgent
from cli import main as cli
from evaluation import players
from evaluation.compare import paired_comparison
from evaluation.harness import RUN_FILE
from evaluation.records import GameRecord, read_csv


def _deals(a: str, b: str, points: list[tuple[int, int]]) -> list[GameRecord]:
    """Two games a deck: deck ``i`` is ``points[2 i]`` and ``points[2 i + 1]`` (A's, B's)."""
    return [
        GameRecord("deal", 0, a, b, i // 2, i % 2, 0, pa, pb, 1, 0.0, 0.0, 18, 18)
        for i, (pa, pb) in enumerate(points)
    ]


def test_the_difference_is_paired_deck_by_deck() -> None:
    # X against O, per deck: (3-1 + 2-0)/2 = 2, (1-1 + 0-0)/2 = 0, (0-2 + 1-1)/2 = -1.
    x = _deals("X", "O", [(3, 1), (2, 0), (1, 1), (0, 0), (0, 2), (1, 1)])
    # Y listed second, against O first: Y's points minus O's are 1, 1, -1.
    y = _deals("O", "Y", [(0, 1), (1, 2), (1, 2), (0, 1), (2, 0), (0, 0)])
    c = paired_comparison(x, y, "X", "Y", "O")
    assert (c.decks, c.points_a, c.points_b) == (3, pytest.approx(1 / 3), pytest.approx(1 / 3))
    # The per-deck differences 1, -1, 0: mean 0, standard deviation 1.
    assert c.difference == pytest.approx(0.0)
    assert c.difference_ci == pytest.approx(1.959964 / math.sqrt(3), rel=1e-5)
    # Deviations (5, -1, -4)/3 and (2, 2, -4)/3: 24 / sqrt(42 * 24).
    assert c.correlation == pytest.approx(24 / math.sqrt(42 * 24))


def test_only_decks_both_played_count() -> None:
    x = _deals("X", "O", [(2, 0), (2, 0), (0, 0), (0, 0)])
    y = _deals("Y", "O", [(1, 0), (1, 0)])
    c = paired_comparison(x, y, "X", "Y", "O")
    assert (c.decks, c.difference) == (1, pytest.approx(1.0))


def _eval(tmp_path, name: str, *args: str) -> str:
    out = tmp_path / name
    assert cli.main(["eval", *args, "--out", str(out), "--no-progress"]) == 0
    return str(out)


def test_scopa_compare_pairs_two_runs_of_scopa_eval(tmp_path, capsys) -> None:
    a = _eval(tmp_path, "a", "greedy", "random", "--deals", "4", "--seed", "5")
    b = _eval(tmp_path, "b", "random", "heuristic", "--deals", "4", "--seed", "5")
    greedy_vs_random, random_vs_heuristic = (
        float(read_csv(Path(r) / "summary.csv")[0]["points_per_deal"]) for r in (a, b)
    )
    capsys.readouterr()
    assert cli.main(["compare", a, b]) == 0
    row = capsys.readouterr().out.splitlines()[-1].split("|")
    assert [cell.strip() for cell in row[1:5]] == ["greedy", "heuristic", "random", "4"]
    # On the same four decks the mean of the differences is the difference of the means:
    # greedy's points per deal against random less heuristic's (its report has random first).
    difference = float(row[7].split("±")[0])
    assert difference == pytest.approx(greedy_vs_random + random_vs_heuristic, abs=1e-3)


def test_runs_on_other_decks_are_refused(tmp_path, capsys) -> None:
    a = _eval(tmp_path, "a", "greedy", "random", "--deals", "2", "--seed", "5")
    b = _eval(tmp_path, "b", "heuristic", "random", "--deals", "2", "--seed", "6")
    capsys.readouterr()
    assert cli.main(["compare", a, b]) != 0
    printed = capsys.readouterr()
    assert "did not play the same decks: their seed differs (5 and 6)" in printed.err
    assert printed.out == ""  # no table header before the refusal


def test_one_name_that_played_differently_is_compared_with_player(
    tmp_path, capsys, monkeypatch
) -> None:
    """Two runs of the same players, ``greedy`` playing as heuristic in the second (a default
    changed between them): ``--player`` pairs the two ``greedy``s."""
    a = _eval(tmp_path, "a", "greedy", "random", "--deals", "4", "--seed", "5")
    reference = _eval(tmp_path, "ref", "heuristic", "random", "--deals", "4", "--seed", "5")
    monkeypatch.setitem(agents.AGENTS, "greedy", HeuristicAgent)
    monkeypatch.setattr(players, "_PLAYERS", {})  # no greedy kept from the first run
    b = _eval(tmp_path, "b", "greedy", "random", "--deals", "4", "--seed", "5")
    capsys.readouterr()
    assert cli.main(["compare", a, b]) != 0
    assert "name the one compared with --player" in capsys.readouterr().err
    assert cli.main(["compare", a, b, "--player", "greedy"]) == 0
    (row,) = capsys.readouterr().out.splitlines()[2:]
    assert cli.main(["compare", a, reference]) == 0
    (expected,) = capsys.readouterr().out.splitlines()[2:]
    assert row.split("|")[3:] == expected.split("|")[3:]  # against random: the same figures
    assert row.split("|")[1:3] == [" greedy ", " greedy "]
    assert cli.main(["compare", a, b, "--player", "heuristic"]) != 0
    assert "player 'heuristic' is not in both runs" in capsys.readouterr().err
    assert cli.main(["compare", a, reference, "--player", "random"]) != 0
    assert "comparing 'random' with itself needs runs of the same players" in (
        capsys.readouterr().err
    )


def test_runs_must_have_the_same_players_but_one(tmp_path, capsys) -> None:
    a = _eval(tmp_path, "a", "greedy", "random", "--deals", "2")
    b = _eval(tmp_path, "b", "heuristic", "alphabeta", "--deals", "2")
    c = _eval(tmp_path, "c", "greedy", "random", "heuristic", "--deals", "2")
    for other in (b, a, c):  # two players differ; none does; not as many players
        assert cli.main(["compare", a, other]) != 0
        assert "must have the same players but one" in capsys.readouterr().err


@pytest.mark.parametrize("table", ["scopa", "scopa_3"])
def test_a_field_is_compared_against_each_player_it_shares(tmp_path, capsys, table) -> None:
    """A round robin (two seats) or a free-for-all (three): the player that differs, against
    each of the others, in the same games of the same decks."""
    common = ("--deals", "3", "--seed", "2", "--table", table)
    a = _eval(tmp_path, "a", "greedy", "random", "heuristic", *common)
    b = _eval(tmp_path, "b", "greedy", "random", "alphabeta:samples=2", *common)
    capsys.readouterr()
    assert cli.main(["compare", a, b]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines()[2:]]
    assert [[cell.strip() for cell in row[1:5]] for row in rows] == [
        ["heuristic", "alphabeta:samples=2", opponent, "3"] for opponent in ("greedy", "random")
    ]
    for row, opponent in zip(rows, ("greedy", "random"), strict=True):
        # The mean of the per-deck points is each run's own head-to-head figure.
        for run, player, cell in ((a, "heuristic", row[5]), (b, "alphabeta:samples=2", row[6])):
            (line,) = (
                r for r in read_csv(Path(run) / "summary.csv")
                if {r["player_a"], r["player_b"]} == {player, opponent}
            )  # fmt: skip
            sign = 1 if line["player_a"] == player else -1
            assert float(cell) == pytest.approx(sign * float(line["points_per_deal"]), abs=1e-3)


def test_a_folder_without_a_run_record_is_named(tmp_path, capsys) -> None:
    a = _eval(tmp_path, "a", "greedy", "random", "--deals", "2")
    assert cli.main(["compare", a, str(tmp_path)]) != 0
    assert f"{tmp_path} has no {RUN_FILE}" in capsys.readouterr().err
    (tmp_path / RUN_FILE).write_text(json.dumps({"players": ["x", "y"]}))
    assert cli.main(["compare", a, str(tmp_path)]) != 0
    assert "is not a run's record of its decks" in capsys.readouterr().err


def test_a_broken_games_table_is_named(tmp_path, capsys) -> None:
    a = _eval(tmp_path, "a", "greedy", "random", "--deals", "2")
    b = _eval(tmp_path, "b", "heuristic", "random", "--deals", "2")
    games = Path(b) / "games.csv"
    games.write_text(games.read_text().replace(",18,", ",eighteen,", 1))
    assert cli.main(["compare", a, b]) != 0
    assert f"{b}/games.csv is not a games table" in capsys.readouterr().err
