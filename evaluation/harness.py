"""Duplicate-deal evaluation of players, head-to-head and round-robin, at every table.

Every deck is played twice with the seats swapped (duplicate deals), so the luck of the cards
cancels within a pair; the statistics treat each pair as one sample. Decks, the first player and
every player's own randomness come from ``--seed``, so a run is reproducible whatever the number
of worker processes. Games are played through ``scopa_v0`` (``episode="deal"`` with the deck in
the reset options; ``episode="match"`` with the same seed for both matches of a duplicate pair).

Every table of ``scopa_env.tables`` is played (``--table``), through ``make_aec``:

- two sides (``scopa``; partnerships: ``scopa_4``, ``scopa_6``, ``scopone``,
  ``scopone_scientifico``): A and B are sides, each of copies of one player sitting alternately
  (A in the even seats, then with the same deck in the odd ones), and every result below is the
  side's;
- free-for-all (``scopa_3``: as many sides as seats): name one player per seat; each deck is
  played once per rotation of the players round the seats (all three rotations), so every
  player sits in every position on every deck, and the rotations of one deck are one sample.
  Each game is recorded once per pair of players (``GameRecord``: A and B are the pair, the
  replica is the rotation), so the pairings, their points per deal and the Elo table read the
  head-to-head results inside the games; ``evaluation.stats.field_summaries`` gives each
  player's points per deal minus the mean of the others' (the environments' reward) with a
  95% interval over the rotated sets, its deals and matches won (most points alone).

Reported per pairing (player A against player B):

- points per deal: A's points minus B's in a deal, averaged; the 95% confidence interval is a
  normal-approximation interval on the per-pair means (each pair: the mean of its two deals);
- deal wins, draws and losses of A (by points in the deal);
- match win rate of A to the target, on duplicate matches, with the same kind of interval;
- CPU milliseconds per move (card played) of each player, capture picks included;
- for a round-robin (three or more players, a free-for-all too), Elo ratings: a
  maximum-likelihood Bradley-Terry fit to all deal results (a draw counts half a win to each),
  on the Elo scale (400 points = 10:1 odds), centred on a mean of 1500, with 95% intervals
  from the fit's Fisher information; at a free-for-all, where a pair's rotations of one deck
  are not independent results, from refits to the decks drawn with replacement.

Outputs in ``--out``: ``games.csv`` (one row per game; per game and pair of players in a
free-for-all), ``summary.csv`` (one row per pairing), ``elo.csv`` (round-robin), ``field.csv``
(free-for-all: one row per player), ``report.md`` (Markdown tables) and ``report.png`` (a
plot). While it runs, ``journal.jsonl`` there keeps every finished task's games: stopped, the
same command continues where it was (the decks and seeds are fixed, so the results are the
same).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import numpy as np
from threadpoolctl import threadpool_limits

from evaluation.players import PlayerSpec, player_for
from evaluation.progress import progress_bar
from evaluation.records import GameRecord, write_text
from evaluation.stats import (
    DECK_RESAMPLES,
    FieldSummary,
    PairingSummary,
    elo_table,
    field_summaries,
    summarise,
)
from evaluation.workers import open_pool
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import needs_redeal
from scopa_env.environments import make_aec
from scopa_env.errors import ScopaError
from scopa_env.rules import Rules, resolve_rules
from scopa_env.tables import Table, resolve_table


class EvaluationError(ScopaError, ValueError):
    """An evaluation that cannot run as asked: the message names the argument and its value."""


def _check_count(value: Any, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise EvaluationError(f"{name} must be an integer of at least {least}, got {value!r}")


#: The journal of finished games that ``scopa eval`` keeps in its output folder while it runs.
JOURNAL = "journal.jsonl"
#: What an evaluation's folder records of its games (``run_identity``), beside the reports.
RUN_FILE = "run.json"


def duplicate_deck(
    seed: int, pair: int, rules: Rules, table: str = "scopa"
) -> tuple[list[int], int]:
    """The deck and first player of duplicate pair ``pair``: the same for every pairing.

    A deck whose table would be void (``needs_redeal``) is shuffled again, as for a random deal.
    """
    kind = resolve_table(table)
    rng = np.random.default_rng([seed, pair])
    while True:
        deck = rng.permutation(NUM_CARDS).tolist()
        if not needs_redeal(kind.table_of(deck), rules):
            return deck, pair % kind.players


def _game_seeds(
    seed: int, kind: int, pairing: int, pair: int, replica: int, seats: int = 2
) -> list[int]:
    """Seeds of the seats' players for one game, independent of how work is split."""
    return [
        int(s)
        for s in np.random.SeedSequence([seed, kind, pairing, pair, replica]).generate_state(seats)
    ]


def play_game(
    env: Any,
    players: Sequence[Any],
    seeds: Sequence[int],
    options: dict[str, Any],
    env_seed: int | None = None,
) -> tuple[list[float], list[int]]:
    """Play one episode of ``env`` (reset with ``options``); player ``i`` takes seat ``i``.

    Returns each seat's CPU seconds spent acting (``time.process_time``: unlike wall time, not
    inflated by other work on a shared machine) and number of cards played. A player with a
    ``show`` method (``agents.oracle``, which measures what the hidden cards are worth) is shown
    the true deal before each of its moves, outside its time.

    The seats act on one BLAS thread. numpy's idle BLAS threads spin after each product, and
    ``process_time`` counts the spinning against whichever seat acts next: ``alphabeta_value``'s
    batched leaf values doubled its own CPU time a move and ISMCTS-300's beside it (27.9 and
    31.1 ms against 12.4 and 16.0 on one thread, ``scopa eval alphabeta_value ismcts --deals 6
    --seed 3 --workers 1``; the games are the same).
    """
    from agents import reset_agent

    for player, seed in zip(players, seeds, strict=True):
        reset_agent(player, seed)
    env.reset(seed=env_seed, options=options)
    seconds, plays = [0.0] * len(players), [0] * len(players)
    index = {agent: i for i, agent in enumerate(env.possible_agents)}
    with threadpool_limits(limits=1, user_api="blas"):
        while not env.terminations[env.agent_selection]:
            seat = index[env.agent_selection]
            observation = env.observe(env.agent_selection)
            show = getattr(players[seat], "show", None)
            if show is not None:
                show(env.deal)
            start = time.process_time()
            action = players[seat].act(observation)
            seconds[seat] += time.process_time() - start
            plays[seat] += action < NUM_CARDS
            env.step(action)
    return seconds, plays


@dataclass(frozen=True)
class Task:
    kind: Literal["deal", "match"]
    pairing: int
    a: PlayerSpec
    b: PlayerSpec
    pairs: tuple[int, int]  # [start, stop)
    seed: int
    rules: Rules
    table: str = "scopa"  # a table name (``scopa_env.tables.TABLES``)
    #: Free-for-all: the players by seat of the first rotation, and the pairing of each pair
    #: of them (``itertools.combinations`` order); empty for a pairing of two sides.
    field: tuple[PlayerSpec, ...] = ()
    field_pairings: tuple[int, ...] = ()

    @property
    def games(self) -> int:
        """Games the task plays: two a duplicate deck (or match), or one a rotation of the
        players at a free-for-all (each recorded once per pair of players)."""
        return (len(self.field) or 2) * (self.pairs[1] - self.pairs[0])


def _episode(task: Task, pair: int, table: Table) -> tuple[dict[str, Any], int | None, int]:
    """The reset options, environment seed and first player of duplicate ``pair``."""
    if task.kind == "deal":
        deck, first = duplicate_deck(task.seed, pair, task.rules, task.table)
        return {"deck": deck, "first_player": first}, None, first
    first = pair % table.players
    env_seed = int(np.random.SeedSequence([task.seed, 2, pair]).generate_state(1)[0])
    return {"first_player": first}, env_seed, first


def run_task(task: Task) -> list[GameRecord]:
    """Play the duplicate pairs ``task.pairs`` of one pairing (in a worker process)."""
    if task.field:
        return run_field_task(task)
    rules = task.rules
    table = resolve_table(task.table)
    players = table.players
    env = make_aec(table, rules=rules, episode=task.kind, reward="points")
    a, b = player_for(task.a, rules), player_for(task.b, rules)
    kind_id = 0 if task.kind == "deal" else 1
    records = []
    for pair in range(*task.pairs):
        options, env_seed, first = _episode(task, pair, table)
        for replica in (0, 1):
            sides = (a, b) if replica == 0 else (b, a)
            seats = [sides[table.side_of(seat)] for seat in range(players)]
            seeds = _game_seeds(task.seed, kind_id, task.pairing, pair, replica, players)
            seconds, plays = play_game(env, seats, seeds, options, env_seed)
            seat_a = replica  # A's side: its seat, or its partnership in Scopone
            scores = env.match.scores
            record = GameRecord(
                kind=task.kind,
                pairing=task.pairing,
                player_a=task.a.label,
                player_b=task.b.label,
                pair=pair,
                replica=replica,
                first_player=first,
                points_a=scores[seat_a],
                points_b=scores[1 - seat_a],
                deals=env.match.deals_played,
                cpu_seconds_a=sum(seconds[seat_a::2]),
                cpu_seconds_b=sum(seconds[1 - seat_a :: 2]),
                plays_a=sum(plays[seat_a::2]),
                plays_b=sum(plays[1 - seat_a :: 2]),
            )
            if task.kind == "deal":
                breakdown = env.deal.score()
                record.categories_a = _categories(breakdown[seat_a].to_dict())
                record.categories_b = _categories(breakdown[1 - seat_a].to_dict())
            records.append(record)
    return records


def run_field_task(task: Task) -> list[GameRecord]:
    """Play the duplicate decks ``task.pairs`` of a free-for-all, every rotation of the players
    round the seats; one record per game and pair of players (in a worker process)."""
    rules = task.rules
    table = resolve_table(task.table)
    env = make_aec(table, rules=rules, episode=task.kind, reward="points")
    field = [player_for(spec, rules) for spec in task.field]
    k = len(field)
    kind_id = 0 if task.kind == "deal" else 1
    records = []
    for pair in range(*task.pairs):
        options, env_seed, first = _episode(task, pair, table)
        for rotation in range(k):
            seat_of = [(i + rotation) % k for i in range(k)]  # player i's seat
            seats = [field[seat_of.index(seat)] for seat in range(k)]
            seeds = _game_seeds(task.seed, kind_id, task.pairing, pair, rotation, k)
            seconds, plays = play_game(env, seats, seeds, options, env_seed)
            scores = env.match.scores
            breakdown = env.deal.score() if task.kind == "deal" else None
            for pairing, (i, j) in zip(task.field_pairings, combinations(range(k), 2), strict=True):
                a, b = seat_of[i], seat_of[j]
                record = GameRecord(
                    kind=task.kind,
                    pairing=pairing,
                    player_a=task.field[i].label,
                    player_b=task.field[j].label,
                    pair=pair,
                    replica=rotation,
                    first_player=first,
                    points_a=scores[a],
                    points_b=scores[b],
                    deals=env.match.deals_played,
                    cpu_seconds_a=seconds[a],
                    cpu_seconds_b=seconds[b],
                    plays_a=plays[a],
                    plays_b=plays[b],
                )
                if breakdown is not None:
                    record.categories_a = _categories(breakdown[a].to_dict())
                    record.categories_b = _categories(breakdown[b].to_dict())
                records.append(record)
    return records


def _categories(points: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in points.items() if k != "total")


def make_tasks(
    specs: Sequence[PlayerSpec],
    deals: int,
    matches: int,
    seed: int,
    rules: Rules,
    chunk: int,
    table: str = "scopa",
) -> list[Task]:
    """Split every pairing's duplicate deals and matches into tasks of ``chunk`` pairs (at a
    free-for-all table, the one field's)."""
    tasks = []
    kinds: tuple[tuple[Literal["deal", "match"], int], ...] = (("deal", deals), ("match", matches))
    if is_free_for_all(resolve_table(table)):
        field, pairings = tuple(specs), tuple(range(len(specs) * (len(specs) - 1) // 2))
        for kind, count in kinds:
            size = chunk if kind == "deal" else max(1, chunk // 8)
            for start in range(0, count, size):
                stop = min(count, start + size)
                tasks.append(
                    Task(kind, 0, specs[0], specs[1], (start, stop), seed, rules, table, field,
                         pairings)
                )  # fmt: skip
        return tasks
    for pairing, (a, b) in enumerate(combinations(specs, 2)):
        for kind, count in kinds:
            size = chunk if kind == "deal" else max(1, chunk // 8)
            for start in range(0, count, size):
                tasks.append(
                    Task(kind, pairing, a, b, (start, min(count, start + size)), seed, rules, table)
                )
    return tasks


class Journal:
    """Finished tasks' records, one JSON line per task, so a long evaluation survives a stop.

    The first line identifies the evaluation (players, counts, seed, rules, chunk, table); run
    the same evaluation again and the tasks already played are read back instead of replayed.
    A journal of another evaluation is a clear error rather than a silent mix of results.
    """

    def __init__(self, path: Path, identity: dict[str, Any]) -> None:
        self.path = path
        self.done: dict[tuple[Any, ...], list[GameRecord]] = {}
        if path.is_file():
            lines = path.read_text().splitlines()
            found = json.loads(lines[0]) if lines else None
            if found != identity:
                raise EvaluationError(
                    f"{path} holds another evaluation ({found}); this one is {identity}. "
                    "Choose another --out or delete the file."
                )
            whole = lines[:1]
            for line in lines[1:]:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:  # a line cut short by a kill: played again
                    continue
                self.done[tuple(entry["task"])] = [GameRecord(**r) for r in entry["records"]]
                whole.append(line)
            if len(whole) < len(lines):  # so the next line is not glued to the torn one
                write_text(path, "".join(line + "\n" for line in whole))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, json.dumps(identity) + "\n")

    @classmethod
    def existing(cls, path: Path) -> Journal:
        """The journal at ``path``, whichever evaluation it holds."""
        with path.open() as handle:
            return cls(path, json.loads(handle.readline()))

    @property
    def identity(self) -> dict[str, Any]:
        with self.path.open() as handle:
            return json.loads(handle.readline())

    def records(self) -> list[GameRecord]:
        """Every finished game, in the order ``run_tasks`` returns them."""
        records = [r for chunk in self.done.values() for r in chunk]
        records.sort(key=lambda r: (r.pairing, r.kind, r.pair, r.replica))
        return records

    @staticmethod
    def key(task: Task) -> tuple[Any, ...]:
        return (task.pairing, task.kind, *task.pairs)

    def write(self, task: Task, records: list[GameRecord]) -> None:
        entry = {"task": list(self.key(task)), "records": [asdict(r) for r in records]}
        with self.path.open("a") as file:  # one line per task: a kill tears at most the last
            file.write(json.dumps(entry) + "\n")
            file.flush()
            os.fsync(file.fileno())


def run_tasks(
    tasks: Sequence[Task],
    workers: int,
    progress: bool = True,
    journal: Journal | None = None,
    ray: str | None = None,
) -> list[GameRecord]:
    """Run tasks in ``workers`` processes (1: in this process), or on Ray (``ray``: ``"local"``
    or a cluster's address, ``evaluation.ray_backend``), with a progress bar.

    With a ``journal``, tasks it holds are not played again and each finished task is added
    as it finishes. Interrupted (Ctrl-C, SIGTERM), it stops at once: queued tasks are
    cancelled, the workers ended (``evaluation.workers``) and the journal keeps what finished.
    """
    done = [t for t in tasks if journal and Journal.key(t) in journal.done]
    results = [journal.done[Journal.key(t)] for t in done] if journal else []
    todo = [t for t in tasks if not journal or Journal.key(t) not in journal.done]
    games = sum(t.games for t in tasks)
    bar = progress_bar(games, "game", progress, done=sum(t.games for t in done))

    def finished(task: Task, records: list[GameRecord]) -> None:
        results.append(records)
        if journal is not None:
            journal.write(task, records)
        bar.update(task.games)

    try:
        if workers <= 1 and ray is None:
            for task in todo:
                finished(task, run_task(task))
        else:
            with open_pool(workers, ray) as pool:
                for task, records in pool.results(run_task, todo):
                    finished(task, records)
    finally:
        bar.close()
    records = [r for chunk in results for r in chunk]
    records.sort(key=lambda r: (r.pairing, r.kind, r.pair, r.replica))
    return records


def is_free_for_all(table: Table) -> bool:
    """Whether a table seats more than two sides of one player each (``scopa_3``)."""
    return table.sides > 2


def field_report(records: Sequence[GameRecord], players: Sequence[str]) -> list[FieldSummary]:
    """Each player's summary of a free-for-all (``evaluation.stats.field_summaries``)."""
    return field_summaries(records, [PlayerSpec.parse(p).label for p in players])


def evaluate(
    players: Sequence[str],
    deals: int = 200,
    matches: int = 0,
    rules: Rules | str | None = None,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    chunk: int = 20,
    table: str = "scopa",
    journal: Path | None = None,
    ray: str | None = None,
) -> tuple[list[GameRecord], list[PairingSummary], list[dict[str, Any]]]:
    """Play every pairing of ``players`` on duplicate deals (and matches) and summarise.

    ``table`` names the table (``scopa_env.tables``); at a table of partnerships each side is
    copies of one player; at a free-for-all table (``scopa_3``) the players, one per seat, play
    together (``field_report`` adds their summaries). ``journal`` is a file that keeps finished
    games (see ``Journal``), so an interrupted evaluation continues where it stopped. ``ray``
    runs the tasks on Ray (``"local"`` or a cluster's address) with the same results. Returns
    the game records, one summary per pairing and, for three or more players, the Elo table
    (else an empty list).
    """
    kind = resolve_table(table)
    table = kind.name
    rules = resolve_rules(rules)
    for name, value, least in (
        ("deals", deals, 0),
        ("matches", matches, 0),
        ("seed", seed, 0),
        ("workers", workers, 1),
        ("chunk", chunk, 1),
    ):
        _check_count(value, name, least)
    if deals + matches == 0:
        raise EvaluationError("deals and matches are both 0: nothing to play")
    specs = [PlayerSpec.parse(p) for p in players]
    if len(specs) < 2 or len({s.label for s in specs}) != len(specs):
        raise EvaluationError(f"need at least two different players, got {list(players)}")
    if is_free_for_all(kind) and len(specs) != kind.players:
        raise EvaluationError(
            f"{table} is a free-for-all of {kind.players} players, one per seat: name "
            f"{kind.players} players, got {len(specs)}"
        )
    from scopa_env.players import check_table

    for spec in specs:  # every name, option and checkpoint is checked before anything is played
        check_table(player_for(spec, rules), table, spec.label)
    if ray is not None:  # before the journal: a failed command leaves nothing behind
        from evaluation.ray_backend import import_ray

        import_ray()
    tasks = make_tasks(specs, deals, matches, seed, rules, chunk, table)
    log = None
    if journal is not None:
        identity = run_identity(players, deals, matches, seed, rules, chunk, table)
        log = Journal(journal, identity)
    records = run_tasks(tasks, workers, progress, log, ray)
    resample = DECK_RESAMPLES if is_free_for_all(kind) else 0
    return records, *summarise_pairings([s.label for s in specs], records, resample=resample)


def run_identity(
    players: Sequence[str],
    deals: int,
    matches: int,
    seed: int,
    rules: Rules,
    chunk: int,
    table: str,
) -> dict[str, Any]:
    """What makes two evaluations the same games: the journal's identity and a finished run's
    ``run.json`` (which ``evaluation.compare`` reads: the decks depend on seed, rules and table
    only, so runs that share them were played on the same decks)."""
    return {
        "players": [PlayerSpec.parse(p).label for p in players],
        "deals": deals,
        "matches": matches,
        "seed": seed,
        "rules": rules.to_dict(),
        "chunk": chunk,
        "table": resolve_table(table).name,
    }


def summarise_pairings(
    labels: Sequence[str], records: Sequence[GameRecord], elo: bool = True, resample: int = 0
) -> tuple[list[PairingSummary], list[dict[str, Any]]]:
    """One summary per pairing of ``labels`` and, for three or more (and ``elo``), the Elo
    table (``resample``: ``elo_table``'s ``resample_decks``); a pairing without games has an
    empty summary."""
    summaries = []
    for pairing, (a, b) in enumerate(combinations(labels, 2)):
        games = [r for r in records if r.pairing == pairing]
        summaries.append(summarise(games, a, b))
    elo_rows: list[dict[str, Any]] = []
    if elo and len(labels) > 2:
        elo_rows = elo_table(list(labels), list(records), resample)
    return summaries, elo_rows
