"""The strength ladder (``evaluation.ladder``, ``scopa ladder``): pairings (or a free-for-all's
meetings) journaled one by one, so an extended ladder plays only what is new; one Elo fit; the
field's points; its errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import cli.main as cli
from evaluation.ladder import (
    PAIRINGS,
    LadderConfig,
    LadderError,
    LadderResult,
    field_points,
    ladder_config,
    ladder_result,
    ladder_tasks,
    load_ladder_config,
    matrix,
    run_ladder,
)
from evaluation.records import GameRecord, read_csv
from evaluation.stats import DECK_RESAMPLES, elo_table
from scopa_env.errors import ScopaError, UnknownPlayerError

THREE = ["random", "greedy", "heuristic"]


def _ladder(players: list[str], deals: int = 2, **more: object) -> LadderConfig:
    return ladder_config({"players": players, "deals": deals, "chunk": 1} | more)


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LadderResult]:
    out = tmp_path_factory.mktemp("ladder")
    return out, run_ladder(_ladder(THREE), out)


def test_a_ladder_plays_every_pairing_and_writes_its_files(
    three: tuple[Path, LadderResult],
) -> None:
    out, result = three
    assert result.played == 3 * 2 * 2  # three pairings, two decks, each played twice
    assert result.complete and len(result.records) == 12
    assert sorted(row.player for row in result.rows) == sorted(THREE)
    for row in result.rows:
        assert row.deals == 2 * 2 * 2  # two opponents, two decks, two games each
        assert row.ms_per_move > 0 and not math.isnan(row.elo_ci)
    elos = [row.elo for row in result.rows]
    assert elos == sorted(elos, reverse=True) and sum(elos) == pytest.approx(1500 * 3)
    fisher = {row["player"]: row["elo_ci"] for row in elo_table(THREE, result.records)}
    assert all(row.elo_ci == fisher[row.player] for row in result.rows)  # two sides: the fit's
    assert len(list((out / PAIRINGS).glob("*.jsonl"))) == 3
    table = matrix(result)
    for a in THREE:
        assert math.isnan(table[a][a])
        for b in THREE:
            if a != b:
                assert table[a][b] == -table[b][a]


def test_an_extended_ladder_plays_only_the_new_pairings(
    three: tuple[Path, LadderResult], tmp_path: Path
) -> None:
    out, first = three
    for item in (out / PAIRINGS).iterdir():  # a copy: the fixture's folder stays as it was
        (tmp_path / PAIRINGS).mkdir(exist_ok=True)
        (tmp_path / PAIRINGS / item.name).write_bytes(item.read_bytes())
    fourth = [*THREE, "heuristic:reply_weight=0.0"]
    result = run_ladder(_ladder(fourth), tmp_path)
    assert result.played == 3 * 2 * 2  # its three pairings only
    assert len(result.records) == 6 * 2 * 2
    old = {(r.player_a, r.player_b, r.pair, r.replica): r for r in first.records}
    kept = [r for r in result.records if (r.player_a, r.player_b, r.pair, r.replica) in old]
    assert len(kept) == 12 and all(
        r == old[r.player_a, r.player_b, r.pair, r.replica] for r in kept
    )
    # The same players in another order: nothing to play. Two more decks: only those.
    assert run_ladder(_ladder(fourth[::-1]), tmp_path).played == 0
    assert run_ladder(_ladder(fourth, deals=4), tmp_path).played == 6 * 2 * 2


def test_the_tasks_go_round_every_pairing_a_chunk_of_decks_at_a_time(tmp_path: Path) -> None:
    tasks, _, pairings = ladder_tasks(_ladder(THREE, deals=5, chunk=2), tmp_path)
    assert [t.pairs for t in tasks] == [(0, 2)] * 3 + [(2, 4)] * 3 + [(4, 5)] * 3
    assert [t.pairing for t in tasks[:3]] == [p.id for p in pairings]
    assert len({p.id for p in pairings}) == 3


def test_the_clearly_stronger_player_ranks_first(tmp_path: Path) -> None:
    result = run_ladder(_ladder(["random", "heuristic"], deals=6), tmp_path)
    assert [row.player for row in result.rows] == ["heuristic", "random"]
    top, bottom = result.rows
    assert top.elo > 1500 > bottom.elo and top.elo - 1500 == pytest.approx(1500 - bottom.elo)
    assert top.points_vs_field == pytest.approx(-bottom.points_vs_field)
    assert top.points_vs_field > 1.0  # random throws away about two points a deal
    assert matrix(result)["heuristic"]["random"] == top.points_vs_field


FOUR = [*THREE, "heuristic:reply_weight=0.0"]


@pytest.fixture(scope="module")
def free_for_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LadderResult]:
    out = tmp_path_factory.mktemp("ladder_scopa_3")
    return out, run_ladder(_ladder(FOUR, table="scopa_3"), out)


def test_a_free_for_all_ladder_plays_every_three_players_together(
    free_for_all: tuple[Path, LadderResult],
) -> None:
    """At ``scopa_3`` each set of three players is a meeting: four players make four meetings,
    each of two decks played once per rotation; a game counts once per pair of players."""
    out, result = free_for_all
    assert result.complete and result.played == result.games == 4 * 2 * 3
    assert len(result.records) == 4 * 2 * 3 * 3
    assert len(list((out / PAIRINGS).glob("*.jsonl"))) == 4
    assert sorted(row.player for row in result.rows) == sorted(FOUR)
    for row in result.rows:
        assert row.deals == 3 * 2 * 2 * 3  # three opponents, each met in two meetings
    assert len(result.summaries) == 6
    for summary in result.summaries:  # a pair of players meets in two of the four meetings
        pair = (summary.player_a, summary.player_b)
        games = [r for r in result.records if (r.player_a, r.player_b) == pair]
        assert len(games) == 2 * 2 * 3 and len({r.pairing for r in games}) == 1
        assert summary.deal_pairs == 2
        assert summary.deal_wins + summary.deal_draws + summary.deal_losses == len(games)
    table = matrix(result)
    assert all(table[a][b] == -table[b][a] for a in FOUR for b in FOUR if a != b)
    # A pair's games on a deck are not independent results: the Elo intervals resample decks.
    resampled = elo_table(FOUR, result.records, resample_decks=DECK_RESAMPLES)
    fisher = {row["player"]: row["elo_ci"] for row in elo_table(FOUR, result.records)}
    for row, expected in zip(result.rows, resampled, strict=True):
        assert (row.player, row.elo, row.elo_ci) == tuple(
            expected[k] for k in ("player", "elo", "elo_ci")
        )
        assert row.elo_ci != fisher[row.player]
    assert run_ladder(_ladder(FOUR[::-1], table="scopa_3"), out).played == 0


def test_a_meeting_plays_the_games_scopa_eval_plays(
    free_for_all: tuple[Path, LadderResult],
) -> None:
    """The rule players are deterministic, so the meeting of greedy and the two heuristic
    players plays, deck by deck and rotation by rotation, the games of ``scopa eval`` with
    them on the same decks (the field in the meeting's order, by label)."""
    from evaluation.harness import Journal, make_tasks, run_tasks
    from evaluation.players import PlayerSpec
    from scopa_env.rules import resolve_rules

    out, _ = free_for_all
    field = sorted(["greedy", "heuristic", "heuristic:reply_weight=0.0"])
    _, _, meetings = ladder_tasks(_ladder(FOUR, table="scopa_3"), out)
    (meeting,) = [m for m in meetings if [p.label for p in m.players] == field]
    met = Journal.existing(out / PAIRINGS / meeting.file).records()
    specs = [PlayerSpec.parse(p) for p in field]
    tasks = make_tasks(specs, 2, 0, 0, resolve_rules("scopa"), 1, "scopa_3")
    alone = run_tasks(tasks, 1, progress=False)
    assert len(met) == len(alone) == 2 * 3 * 3

    def games(records: list[GameRecord]) -> dict[tuple[str, str, int, int], tuple[int, int]]:
        return {
            (r.player_a, r.player_b, r.pair, r.replica): (r.points_a, r.points_b) for r in records
        }

    assert games(met) == games(alone)


def _game(
    a: str, b: str, pair: int, replica: int, points: tuple[int, int], cpu: tuple[float, float]
) -> GameRecord:
    return GameRecord("deal", 0, a, b, pair, replica, 0, *points, 1, *cpu, 18, 18)


def test_points_against_the_field_average_the_opponents_on_each_deck() -> None:
    records = [
        _game("X", "Y", 0, 0, (5, 2), (0.018, 0.036)),  # X-Y on deck 0: +3, +1
        _game("X", "Y", 0, 1, (4, 3), (0.018, 0.036)),
        _game("X", "Y", 1, 0, (2, 1), (0.018, 0.036)),  # deck 1: +1, +1
        _game("X", "Y", 1, 1, (3, 2), (0.018, 0.036)),
        _game("X", "Z", 0, 0, (1, 1), (0.018, 0.0)),  # X-Z on deck 0: 0, -2
        _game("X", "Z", 0, 1, (2, 4), (0.018, 0.0)),
        _game("X", "Z", 1, 0, (4, 1), (0.018, 0.0)),  # deck 1: +3, +1
        _game("X", "Z", 1, 1, (3, 2), (0.018, 0.0)),
        _game("Y", "Z", 0, 0, (3, 3), (0.036, 0.036)),  # Y-Z on deck 0: 0, +2
        _game("Y", "Z", 0, 1, (3, 1), (0.036, 0.036)),
        _game("Y", "Z", 1, 0, (0, 2), (0.036, 0.036)),  # deck 1: -2, 0
        _game("Y", "Z", 1, 1, (2, 2), (0.036, 0.036)),
    ]
    field = field_points(records, ["X", "Y", "Z"])
    # X: deck 0 mean(+2, -1) = 0.5, deck 1 mean(+1, +2) = 1.5; the mean 1.0, the interval
    # 1.96 * std([0.5, 1.5]) / sqrt(2) = 1.96 * 0.5.
    assert field["X"][0] == pytest.approx(1.0)
    assert field["X"][1] == pytest.approx(1.959964 * 0.5, rel=1e-5)
    assert field["Y"][0] == pytest.approx((-0.5 - 1.0) / 2)  # deck 0 mean(-2, +1), deck 1 (-1, -1)
    assert field["Z"][0] == pytest.approx((0.0 - 0.5) / 2)  # deck 0 mean(+1, -1), deck 1 (-2, +1)
    # CPU ms a move: X 0.018 s for 18 moves a game; Y 0.036 s; Z 0.144 s over 8 games of 18.
    assert [field[p][2] for p in "XYZ"] == pytest.approx([1.0, 2.0, 1.0])


def test_the_command_writes_the_ladder_and_reports_from_the_journals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "ladder.yaml"
    config.write_text("players: [random, greedy, heuristic]\ndeals: 1\nchunk: 1\n")
    out = tmp_path / "out"
    assert cli.main(["ladder", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    assert "played 6 games (0 from the journals)" in capsys.readouterr().out
    for name in ("ladder.md", "ladder.csv", "matrix.csv", "pairings.csv", "games.csv"):
        assert (out / name).stat().st_size > 0
    assert (out / "ladder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob(".*tmp*"))  # written whole, nothing left half-way
    rows = read_csv(out / "ladder.csv")
    assert sorted(r["player"] for r in rows) == ["greedy", "heuristic", "random"]
    assert len(read_csv(out / "games.csv")) == 6
    assert cli.main(["ladder", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    assert "played 0 games (6 from the journals)" in capsys.readouterr().out
    assert len(ladder_result(load_ladder_config(config), out).records) == 6
    identity = json.loads((next((out / PAIRINGS).iterdir())).read_text().splitlines()[0])
    assert identity["seed"] == 0 and identity["table"] == "scopa"


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"players": ["random", "greedy", "random"]}, "listed twice"),
        ({"players": ["random"]}, "players"),
        ({"players": THREE, "deals": 0}, "deals"),
        ({"players": THREE, "deals": "many"}, "deals"),
        ({"players": THREE, "deals": True}, "deals"),
        ({"players": ["random", "greedy"], "table": "scopa_3"}, "at least 3 players"),
        ({"players": THREE, "table": "bridge"}, "unknown table"),
        ({"players": THREE, "rules": "chess"}, "rules"),
        ({"players": THREE, "games": 3}, "unknown key"),
        ({"players": ["random", "ismcts:iterations"]}, "key=value"),
    ],
)
def test_a_bad_ladder_is_refused_naming_the_problem(data: dict, words: str) -> None:
    with pytest.raises(LadderError, match=words):
        ladder_config(data)


def test_an_unknown_player_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(UnknownPlayerError, match="no_such_player"):
        run_ladder(_ladder(["random", "no_such_player"]), tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("yaml", "args", "words"),
    [
        ("players: [random, nobody]\n", [], "unknown player 'nobody'"),
        ("players: [random, random]\n", [], "listed twice"),
        ("players: [random, greedy]\n", ["deals=-3"], "deals"),
        ("players: [random, greedy\n", [], "not valid YAML"),
    ],
)
def test_the_command_exits_with_status_2_on_a_bad_ladder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml: str, args: list[str], words: str
) -> None:
    config = tmp_path / "ladder.yaml"
    config.write_text(yaml)
    out = tmp_path / "out"
    assert cli.main(["ladder", "--config", str(config), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scopa ladder: ") and words in err
    assert not out.exists()
    assert issubclass(LadderError, ScopaError)


@pytest.mark.parametrize("name", ["guided", "rollout", "ismcts_prior"])
def test_a_search_is_told_apart_by_the_network_it_plays_with(name: str) -> None:
    """A journal must not pass off games played with one network as another's: a search that
    plays with a network is fingerprinted by that network's checkpoint."""
    from agents import make_agent
    from evaluation.ladder import _fingerprint

    shipped, previous = (make_agent(name, network=n) for n in ("pretrained_v5", "pretrained_v4"))
    assert _fingerprint(shipped) == _fingerprint(make_agent("pretrained_v5"))
    assert _fingerprint(previous) == _fingerprint(make_agent("pretrained_v4"))
    assert _fingerprint(shipped) != _fingerprint(previous)


def test_a_seat_value_player_is_told_apart_by_its_network() -> None:
    """The shipped agent is the seat-value player of the shipped ensemble: its journals are
    those of ``seat_value:network=ensemble``, not of the single network's."""
    from agents import make_agent
    from evaluation.ladder import _fingerprint

    shipped = _fingerprint(make_agent("pretrained"))
    assert shipped is not None
    assert shipped == _fingerprint(make_agent("seat_value", network="ensemble"))
    assert shipped != _fingerprint(make_agent("seat_value"))


LADDERS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("ladder*.yaml"))


@pytest.mark.parametrize("path", LADDERS, ids=lambda path: path.name)
def test_the_shipped_ladders_validate(path: Path, tmp_path: Path) -> None:
    """Each ladder the README runs loads, and every player of it sits at its table."""
    config = load_ladder_config(path)
    assert len(config.players) >= 6 and config.deals >= 35
    tasks, _, meetings = ladder_tasks(config, tmp_path)
    assert len(meetings) == math.comb(len(config.players), config.meeting_size()) and tasks


def test_the_plot_labels_crowded_players_apart() -> None:
    """Players of about the same time and Elo (the policy networks beside ``alphabeta``) get
    labels that overlap neither each other nor a point, each inside the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from evaluation.ladder import _label_points

    points = [(f"player_{i}", 1.2 + 0.05 * i, 1518.0 + i) for i in range(5)]
    points += [("far", 50.0, 1400.0)]
    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    ax.plot([x for _, x, _ in points], [y for _, _, y in points], "o")
    ax.set_xscale("log")
    ax.margins(x=0.2, y=0.08)
    fig.tight_layout()
    _label_points(fig, ax, points)
    renderer = fig.canvas.get_renderer()
    labels = list(ax.texts)
    assert sorted(label.get_text() for label in labels) == sorted(name for name, _, _ in points)
    for label in labels:
        label.update_positions(renderer)
    boxes = [Text.get_window_extent(label, renderer) for label in labels]  # the text alone
    frame = ax.get_window_extent(renderer)
    centres = ax.transData.transform([(x, y) for _, x, y in points])
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1
        assert not any(box.overlaps(other) for other in boxes[i + 1 :])
        assert not any(box.contains(cx, cy) for cx, cy in centres)
    plt.close(fig)
