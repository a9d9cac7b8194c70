"""The strength ladder: every listed player against every other on duplicate deals, one Elo fit.

A ladder is a config (``configs/ladder.yaml``: the players, duplicate deal pairs per pairing,
seed, rules, table) played by ``run_ladder`` (``scopa ladder``). Each pairing is played like
``scopa eval A B`` (``evaluation.harness``: the same decks for every pairing, seats swapped
within a pair) and kept in its own journal, ``pairings/*.jsonl`` in the output folder, that is
never deleted: run the ladder again with a player added and only that player's pairings are
played; with more deals, only the missing decks; stopped, only what had not finished. A
pairing's file is named by its two players, its seed, rules, table and chunk, and the
fingerprint of any checkpoint a player loads (``pretrained`` after a new agent ships is a new
player), so a changed pairing is played afresh rather than mixed with old games. A rule
player's code is not fingerprinted: after changing one, delete its pairings' files.

At a free-for-all table (``scopa_3``: three players, each for itself) players meet as many at
a time as there are seats: every set of three of the config's players is a meeting, played like
``scopa eval A B C --table scopa_3`` (each deck once per rotation of the three round the seats)
with its own journal, and each game counts once per pair of players in it, so a pairing's
results gather every game its two players shared, whoever sat with them.

The report (``ladder.md``, ``ladder.csv``, ``matrix.csv``, ``pairings.csv``, ``games.csv``,
``ladder.png``) ranks the players by Elo (``evaluation.stats.elo_table``, a Bradley-Terry fit to
every deal of every pairing, with 95% intervals: from the fit's information, or at a
free-for-all, whose results share decks, from refits to resampled decks), with each player's
points per deal against the field (the mean over opponents of its points minus theirs, per
deck, then over decks with a 95% interval) and CPU milliseconds a move over all its games; the
matrix holds each pairing's points per deal; the plot shows Elo against CPU time a move on a
log axis.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any, cast

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from evaluation.harness import (
    EvaluationError,
    Journal,
    Task,
    is_free_for_all,
    make_tasks,
    run_tasks,
)
from evaluation.players import PlayerSpec, player_for
from evaluation.records import GameRecord, atomic_path, write_csv, write_text
from evaluation.report import _fmt
from evaluation.stats import DECK_RESAMPLES, PairingSummary, elo_table, mean_ci, summarise
from scopa_env.rules import Rules, describe_rules, resolve_rules
from scopa_env.tables import resolve_table

#: The folder of the pairings' journals inside a ladder's output folder.
PAIRINGS = "pairings"


class LadderError(EvaluationError):
    """A ladder that cannot run as asked: a bad config, player or output folder."""


class LadderConfig(BaseModel):
    """One ladder: who plays, on how many duplicate decks, under which rules and at which table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Players as ``scopa eval`` names them (``name[:key=value,...]`` or a checkpoint path).
    players: list[str] = Field(min_length=2)
    #: Duplicate decks per pairing (each played twice, the seats swapped), or per meeting at a
    #: free-for-all table (each played once per rotation of its players round the seats).
    deals: int = Field(100, ge=1)
    #: Seed of the decks and the players' randomness.
    seed: int = Field(0, ge=0)
    #: Duplicate pairs per task: the unit a journal keeps and a worker plays.
    chunk: int = Field(10, ge=1)
    #: A rules preset name or a mapping of options (``scopa_env.rules.resolve_rules``).
    rules: str | dict[str, Any] = "scopa"
    #: A table name (``scopa_env.tables.TABLES``): two sides meet in pairings, the
    #: free-for-all's players in meetings of as many as it has seats.
    table: str = "scopa"

    @field_validator("players")
    @classmethod
    def _distinct_players(cls, players: list[str]) -> list[str]:
        seen: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
        for text in players:
            spec = PlayerSpec.parse(text)  # a bad option is a PlayerError (a ValueError)
            if not spec.name:
                raise ValueError(f"player {text!r} has no name")
            if (spec.name, spec.options) in seen:
                raise ValueError(f"player {text!r} is listed twice")
            seen.add((spec.name, spec.options))
        return players

    @field_validator("rules")
    @classmethod
    def _valid_rules(cls, rules: str | dict[str, Any]) -> str | dict[str, Any]:
        resolve_rules(rules)
        return rules

    @field_validator("table")
    @classmethod
    def _known_table(cls, table: str) -> str:
        resolve_table(table)
        return table

    @model_validator(mode="after")
    def _enough_players(self) -> LadderConfig:
        seats = self.meeting_size()
        if len(self.players) < seats:
            raise ValueError(
                f"{self.table} is a free-for-all of {seats} players, one per seat: a ladder "
                f"there needs at least {seats} players, got {len(self.players)}"
            )
        return self

    def meeting_size(self) -> int:
        """Players in one game: two sides, or every seat of a free-for-all."""
        table = resolve_table(self.table)
        return table.players if is_free_for_all(table) else 2

    def resolved_rules(self) -> Rules:
        return resolve_rules(self.rules)


def ladder_config(data: Any, source: str = "(given)") -> LadderConfig:
    """A ``LadderConfig`` from a mapping, or ``LadderError`` naming every bad key."""
    if not isinstance(data, dict):
        raise LadderError(f"invalid ladder config {source}: the top level must be a mapping")
    try:
        return LadderConfig.model_validate(data, strict=True)
    except ValidationError as error:
        lines = [f"invalid ladder config {source}:"]
        for err in error.errors():
            key = ".".join(str(part) for part in err["loc"]) or "config"
            message = err["msg"].removeprefix("Value error, ")
            lines.append(
                f"  {key}: {'unknown key' if err['type'] == 'extra_forbidden' else message}"
            )
        raise LadderError("\n".join(lines)) from None


def load_ladder_config(path: Path, overrides: dict[str, Any] | None = None) -> LadderConfig:
    """Read a ladder's YAML file; ``overrides`` replace its top-level keys (``deals``...)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise LadderError(f"ladder config {path} does not exist") from None
    except yaml.YAMLError as error:
        raise LadderError(f"ladder config {path} is not valid YAML: {error}") from None
    if data is not None and not isinstance(data, dict):
        raise LadderError(f"invalid ladder config {path}: the top level must be a mapping")
    source = str(path) + (" with overrides" if overrides else "")
    return ladder_config({**(data or {}), **(overrides or {})}, source)


@dataclass
class LadderRow:
    """One player's line of the ladder."""

    player: str
    elo: float
    elo_ci: float
    points_vs_field: float
    points_vs_field_ci: float
    ms_per_move: float
    deals: int


@dataclass
class LadderResult:
    rows: list[LadderRow]  # by Elo, strongest first
    summaries: list[PairingSummary]  # one per pair of players, in config order
    records: list[GameRecord]  # one per game, or per game and pair of players in a free-for-all
    games: int  # games in the journals
    played: int  # of which this call played (the rest came from the journals)
    complete: bool  # every meeting has all its deals


def _fingerprint(player: Any) -> str | None:
    """A short hash of the checkpoint file a player loads (``path``: a network player's, or the
    network a search plays with), if it loads one."""
    path = getattr(player, "path", None)
    if path is None or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_")[:40] or "player"


@dataclass(frozen=True)
class _Meeting:
    """Players who play one another's games: a pairing of two sides, or a free-for-all's field."""

    players: tuple[PlayerSpec, ...]  # sorted by label
    identity: dict[str, Any]
    #: Free-for-all: the id of each pair of its players (``itertools.combinations`` order), the
    #: pairing its games' records belong to, whichever meeting played them.
    pair_ids: tuple[int, ...] = ()

    @property
    def id(self) -> int:
        """A stable number for the meeting: its tasks' key and its players' seed stream."""
        return _id(self.identity)

    @property
    def file(self) -> str:
        return "__".join(_slug(p.label) for p in self.players) + f"-{self.id:08x}.jsonl"


def _id(identity: dict[str, Any]) -> int:
    return zlib.crc32(json.dumps(identity, sort_keys=True).encode())


class _Journals:
    """The pairings' journals as the one journal ``run_tasks`` reads and writes.

    A task's key starts with its pairing's id, so one ``done`` table serves every pairing and
    each finished task goes to its own pairing's file.
    """

    def __init__(self, journals: dict[int, Journal]) -> None:
        self.journals = journals
        self.done = {key: rec for j in journals.values() for key, rec in j.done.items()}

    def write(self, task: Task, records: list[GameRecord]) -> None:
        self.journals[task.pairing].write(task, records)
        self.done[Journal.key(task)] = records


def _meetings(config: LadderConfig, rules: Rules) -> list[_Meeting]:
    """Every meeting of the config's players, each one's labels in sorted order (the order in
    the config changes no file); checks every player can be built and seated."""
    from scopa_env.players import check_table

    specs = [PlayerSpec.parse(p) for p in config.players]
    prints = {}
    for spec in specs:
        player = player_for(spec, rules)
        check_table(player, config.table, spec.label)
        prints[spec.label] = _fingerprint(player)

    def identity(players: tuple[PlayerSpec, ...]) -> dict[str, Any]:
        return {
            "players": [p.label for p in players],
            "checkpoints": [prints[p.label] for p in players],
            "seed": config.seed,
            "rules": rules.to_dict(),
            "chunk": config.chunk,
            "table": config.table,
        }

    size = config.meeting_size()
    meetings = []
    for group in combinations(specs, size):
        players = tuple(sorted(group, key=lambda s: s.label))
        pair_ids = tuple(_id(identity(pair)) for pair in combinations(players, 2))
        meetings.append(_Meeting(players, identity(players), pair_ids if size > 2 else ()))
    return meetings


def _pairs(config: LadderConfig) -> list[tuple[str, str]]:
    """Every pair of the config's players by label, each in sorted order, as records name them."""
    labels = [PlayerSpec.parse(p).label for p in config.players]
    return [(a, b) if a < b else (b, a) for a, b in combinations(labels, 2)]


def ladder_tasks(config: LadderConfig, out: Path) -> tuple[list[Task], _Journals, list[_Meeting]]:
    """The tasks of every meeting, and the journals in ``out/pairings`` that hold the done ones.

    The tasks go round the meetings a chunk of decks at a time, so a ladder stopped part-way
    has played every meeting on about as many decks (``deals=N`` then reports the first N).
    """
    rules = config.resolved_rules()
    meetings = _meetings(config, rules)
    tasks, journals = [], {}
    for m in meetings:
        journals[m.id] = Journal(Path(out) / PAIRINGS / m.file, m.identity)
        for task in make_tasks(m.players, config.deals, 0, config.seed, rules, config.chunk,
                               config.table):  # fmt: skip
            tasks.append(replace(task, pairing=m.id, field_pairings=m.pair_ids))
    order = {m.id: i for i, m in enumerate(meetings)}
    tasks.sort(key=lambda t: (t.pairs[0], order[t.pairing]))  # a round of decks at a time
    return tasks, _Journals(journals), meetings


def run_ladder(
    config: LadderConfig, out: Path, workers: int = 1, progress: bool = False
) -> LadderResult:
    """Play the pairings of ``config`` not yet in ``out``'s journals, then rank every player.

    Interrupted, it raises ``KeyboardInterrupt`` with the journals keeping every finished task;
    ``ladder_result`` then reports what they hold.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise LadderError(f"workers must be an integer of at least 1, got {workers!r}")
    tasks, journals, _ = ladder_tasks(config, out)
    todo = [t for t in tasks if Journal.key(t) not in journals.done]
    run_tasks(tasks, workers, progress, cast(Journal, journals))
    return _result(config, tasks, journals, sum(t.games for t in todo))


def ladder_result(config: LadderConfig, out: Path) -> LadderResult:
    """The ladder as far as ``out``'s journals hold it, playing nothing (a partial report)."""
    tasks, journals, _ = ladder_tasks(config, out)
    return _result(config, tasks, journals, 0)


def _result(
    config: LadderConfig, tasks: Sequence[Task], journals: _Journals, played: int
) -> LadderResult:
    done = [t for t in tasks if Journal.key(t) in journals.done]
    records = [r for t in done for r in journals.done[Journal.key(t)]]
    records.sort(key=lambda r: (r.pairing, r.kind, r.pair, r.replica))
    by_pair: dict[tuple[str, str], list[GameRecord]] = {}
    for r in records:
        by_pair.setdefault((r.player_a, r.player_b), []).append(r)
    summaries = [summarise(by_pair.get((a, b), []), a, b) for a, b in _pairs(config)]
    met = {r.player_a for r in records} | {r.player_b for r in records}
    labels = [label for label in config.players if label in met]
    rows = []
    if records:
        field = field_points(records, labels)
        resample = DECK_RESAMPLES if config.meeting_size() > 2 else 0
        for elo in elo_table(labels, records, resample):
            label = elo["player"]
            rows.append(LadderRow(label, elo["elo"], elo["elo_ci"], *field[label], elo["deals"]))
    return LadderResult(
        rows, summaries, records, sum(t.games for t in done), played, len(done) == len(tasks)
    )


def field_points(
    records: Sequence[GameRecord], labels: Sequence[str]
) -> dict[str, tuple[float, float, float]]:
    """Per player: points per deal against the field with its 95% interval, CPU ms a move.

    A deck's value for a player is the mean, over the opponents it met on that deck, of its
    points minus theirs (each pairing's two games of the deck averaged), so every opponent
    weighs the same; the interval is over decks, which are common to every pairing.
    """
    diffs: dict[tuple[str, str, int], list[float]] = {}
    seconds = dict.fromkeys(labels, 0.0)
    plays = dict.fromkeys(labels, 0)
    for r in records:
        sides = ((r.player_a, r.player_b, 1, "a"), (r.player_b, r.player_a, -1, "b"))
        for me, them, sign, side in sides:
            diffs.setdefault((me, them, r.pair), []).append(sign * (r.points_a - r.points_b))
            seconds[me] += getattr(r, f"cpu_seconds_{side}")
            plays[me] += getattr(r, f"plays_{side}")
    per_deck: dict[str, dict[int, list[float]]] = {label: {} for label in labels}
    for (me, _, pair), values in diffs.items():
        per_deck[me].setdefault(pair, []).append(float(np.mean(values)))
    field = {}
    for label in labels:
        decks = [float(np.mean(v)) for _, v in sorted(per_deck[label].items())]
        mean, ci = mean_ci(decks)
        ms = 1000.0 * seconds[label] / plays[label] if plays[label] else math.nan
        field[label] = (mean, ci, ms)
    return field


def matrix(result: LadderResult) -> dict[str, dict[str, float]]:
    """``matrix[a][b]``: a's points per deal against b (minus b's against a); NaN unplayed."""
    labels = [row.player for row in result.rows] or sorted(
        {s.player_a for s in result.summaries} | {s.player_b for s in result.summaries}
    )
    table = {a: dict.fromkeys(labels, math.nan) for a in labels}
    for s in result.summaries:
        if s.player_a in table and s.player_b in table:
            table[s.player_a][s.player_b] = s.points_per_deal
            table[s.player_b][s.player_a] = -s.points_per_deal
    return table


def markdown(result: LadderResult, header: dict[str, Any]) -> str:
    """The ladder's table and its matrix of points per deal, as Markdown."""
    lines = ["# Strength ladder", ""]
    lines += [f"- {key}: `{value}`" for key, value in header.items()]
    lines += [
        "",
        "Elo: Bradley-Terry fit to every deal of every pairing (at a free-for-all table, to "
        "each pair of players in each game; a draw is half a win), mean 1500, ± 95% CI (at a "
        "free-for-all table, from refits to the decks drawn with replacement). Points per deal "
        "vs field: the player's points minus its opponent's, averaged over its opponents on "
        "each deck, then over decks ± 95% CI. CPU ms a move: over all its games.",
        "",
        "| player | Elo | points/deal vs field | CPU ms/move | deals |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in result.rows:
        lines.append(
            f"| {row.player} | {_fmt(row.elo, row.elo_ci, 0, sign=False)} "
            f"| {_fmt(row.points_vs_field, row.points_vs_field_ci, 2)} "
            f"| {_fmt(row.ms_per_move, digits=2, sign=False)} | {row.deals} |"
        )
    table = matrix(result)
    names = list(table)
    lines += [
        "",
        "Points per deal of the row's player against the column's (duplicate deals; each "
        "pairing's 95% CI is in pairings.csv).",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for a in names:
        cells = ["" if a == b else _fmt(round(table[a][b], 2) + 0.0, digits=2) for b in names]
        lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: Where a point's label may go, in points from the point: right above, right below, then
#: left, then further out, joined to its point by a line; the first free place is taken.
_LABEL_PLACES = [(5, 7), (5, -13), (-5, 7), (-5, -13)] + [
    (dx, dy) for dy in (20, -26, 32, -38, 44, -50) for dx in (14, -14)
]


def _label_points(fig: Any, ax: Any, points: list[tuple[str, float, float]]) -> None:
    """Label each point where its text stays inside the axes and overlaps no other label and no
    point (the axes are laid out first, so that the boxes measured are those drawn); a point
    with no free place keeps the first."""
    from matplotlib.transforms import Bbox

    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    centres = ax.transData.transform([(x, y) for _, x, y in points])
    placed = [Bbox.from_bounds(cx - 4, cy - 4, 8, 8) for cx, cy in centres]  # the points

    def annotate(name: str, xy: tuple[float, float], place: tuple[int, int], lead: bool) -> Any:
        line = {"arrowstyle": "-", "color": "0.6", "lw": 0.6, "shrinkA": 0, "shrinkB": 3}
        return ax.annotate(name, xy, textcoords="offset points", xytext=place, fontsize=8,
                           ha="left" if place[0] > 0 else "right",
                           arrowprops=line if lead else None)  # fmt: skip

    def text_box(name: str, xy: tuple[float, float], place: tuple[int, int]) -> Any:
        text = annotate(name, xy, place, lead=False)
        box = text.get_window_extent(renderer)
        text.remove()
        return box

    def free(box: Any) -> bool:
        inside = (
            frame.x0 <= box.x0 <= box.x1 <= frame.x1 and frame.y0 <= box.y0 <= box.y1 <= frame.y1
        )
        return inside and not any(box.overlaps(other) for other in placed)

    for name, x, y in sorted(points, key=lambda point: point[1]):
        spots = (p for p in _LABEL_PLACES if free(text_box(name, (x, y), p)))
        place = next(spots, _LABEL_PLACES[0])
        placed.append(text_box(name, (x, y), place))
        annotate(name, (x, y), place, lead=abs(place[1]) > 13)  # one set apart is joined to it


def plot(result: LadderResult, path: Path, table: str = "scopa") -> None:
    """Elo (95% CI) against CPU ms a move on a log axis, one labelled point per player."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    xs = [row.ms_per_move for row in result.rows]
    ys = [row.elo for row in result.rows]
    errs = [0.0 if math.isnan(row.elo_ci) else row.elo_ci for row in result.rows]
    ax.errorbar(xs, ys, yerr=errs, fmt="o", color="tab:blue", ecolor="tab:gray", capsize=4)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.margins(x=0.2, y=0.08)
    ax.set_xlabel("CPU ms a move (log scale)")
    ax.set_ylabel("Elo (Bradley-Terry, 95% CI)")
    ax.set_title(f"strength ladder at {table}: duplicate deals, every pairing")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    _label_points(fig, ax, [(row.player, row.ms_per_move, row.elo) for row in result.rows])
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


def describe(config: LadderConfig) -> dict[str, Any]:
    """The lines of a report's header that say what was played."""
    size = config.meeting_size()
    per = (
        "duplicate deal pairs per pairing"
        if size == 2
        else f"duplicate decks per meeting of {size}"
    )
    return {
        "players": ", ".join(config.players),
        "table": config.table,
        "rules": describe_rules(config.resolved_rules()),
        "seed": config.seed,
        per: config.deals,
    }


def write_ladder(out: Path, result: LadderResult, header: dict[str, Any]) -> str:
    """Write ``ladder.md``, ``ladder.csv``, ``matrix.csv``, ``pairings.csv``, ``games.csv`` and
    ``ladder.png`` in ``out``; return the Markdown."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "ladder.csv", [asdict(row) for row in result.rows])
    write_csv(out / "matrix.csv", [{"player": a, **row} for a, row in matrix(result).items()])
    write_csv(out / "pairings.csv", [asdict(s) for s in result.summaries])
    write_csv(out / "games.csv", [asdict(r) for r in result.records])
    text = markdown(result, header)
    write_text(out / "ladder.md", text)
    if result.rows:
        plot(result, out / "ladder.png", str(header.get("table", "scopa")))
    return text
