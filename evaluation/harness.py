"""``scopa eval``: head-to-head and round-robin evaluation of players on duplicate deals.

Every deck is played twice with the seats swapped (duplicate deals), so the luck of the cards
cancels within a pair; the statistics treat each pair as one sample. Decks, the first player and
every player's own randomness come from ``--seed``, so a run is reproducible whatever the number
of worker processes. Games are played through ``scopa_v0`` (``episode="deal"`` with the deck in
the reset options; ``episode="match"`` with the same seed for both matches of a duplicate pair).

``--table scopone`` (or ``scopone_scientifico``) plays four-player Scopone through ``scopone_v0``
instead: A and B are partnerships, two copies of each player sitting alternately (A in seats 0
and 2, then, with the same deck, in seats 1 and 3), and every result below is the partnership's.

Reported per pairing (player A against player B):

- points per deal: A's points minus B's in a deal, averaged; the 95% confidence interval is a
  normal-approximation interval on the per-pair means (each pair: the mean of its two deals);
- deal wins, draws and losses of A (by points in the deal);
- match win rate of A to the target, on duplicate matches, with the same kind of interval;
- CPU milliseconds per move (card played) of each player, capture picks included;
- for a round-robin, Elo ratings: a maximum-likelihood Bradley-Terry fit to all deal results
  (a draw counts half a win to each), on the Elo scale (400 points = 10:1 odds), centred on a
  mean of 1500, with 95% intervals from the fit's Fisher information.

Outputs in ``--out``: ``games.csv`` (one row per game), ``summary.csv`` (one row per pairing),
``elo.csv`` (round-robin), ``report.md`` (Markdown tables) and ``report.png`` (a plot). While
it runs, ``journal.jsonl`` there keeps every finished task's games: stopped, the same command
continues where it was (the decks and seeds are fixed, so the results are the same).
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

from evaluation.players import PlayerSpec, check_seat, player_for
from evaluation.records import GameRecord, write_text
from evaluation.stats import PairingSummary, elo_table, summarise
from evaluation.workers import open_pool
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import needs_redeal
from scopa_env.environments import make_aec
from scopa_env.errors import ScopaError
from scopa_env.rules import Rules, resolve_rules
from scopa_env.tables import resolve_table


class EvaluationError(ScopaError, ValueError):
    """An evaluation that cannot run as asked: the message names the argument and its value."""


def _check_count(value: Any, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise EvaluationError(f"{name} must be an integer of at least {least}, got {value!r}")


#: The journal of finished games that ``scopa eval`` keeps in its output folder while it runs.
JOURNAL = "journal.jsonl"


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
    inflated by other work on a shared machine) and number of cards played.
    """
    from agents import reset_agent

    for player, seed in zip(players, seeds, strict=True):
        reset_agent(player, seed)
    env.reset(seed=env_seed, options=options)
    seconds, plays = [0.0] * len(players), [0] * len(players)
    index = {agent: i for i, agent in enumerate(env.possible_agents)}
    while not env.terminations[env.agent_selection]:
        seat = index[env.agent_selection]
        observation = env.observe(env.agent_selection)
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


def run_task(task: Task) -> list[GameRecord]:
    """Play the duplicate pairs ``task.pairs`` of one pairing (in a worker process)."""
    rules = task.rules
    table = resolve_table(task.table)
    players = table.players
    env = make_aec(table, rules=rules, episode=task.kind, reward="points")
    a, b = player_for(task.a, rules), player_for(task.b, rules)
    kind_id = 0 if task.kind == "deal" else 1
    records = []
    for pair in range(*task.pairs):
        if task.kind == "deal":
            deck, first = duplicate_deck(task.seed, pair, rules, task.table)
            options: dict[str, Any] = {"deck": deck, "first_player": first}
            env_seed = None
        else:
            first = pair % players
            options = {"first_player": first}
            env_seed = int(np.random.SeedSequence([task.seed, 2, pair]).generate_state(1)[0])
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
    """Split every pairing's duplicate deals and matches into tasks of ``chunk`` pairs."""
    tasks = []
    for pairing, (a, b) in enumerate(combinations(specs, 2)):
        kinds: tuple[tuple[Literal["deal", "match"], int], ...] = (
            ("deal", deals),
            ("match", matches),
        )
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
    from tqdm import tqdm

    results = [
        journal.done[Journal.key(t)] for t in tasks if journal and Journal.key(t) in journal.done
    ]
    todo = [t for t in tasks if not journal or Journal.key(t) not in journal.done]
    games = sum(2 * (t.pairs[1] - t.pairs[0]) for t in tasks)
    bar = tqdm(total=games, unit="game", disable=not progress, dynamic_ncols=True)
    bar.update(sum(len(r) for r in results))

    def finished(task: Task, records: list[GameRecord]) -> None:
        results.append(records)
        if journal is not None:
            journal.write(task, records)
        bar.update(len(records))

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
    copies of one player. ``journal`` is a file that keeps finished games (see
    ``Journal``), so an interrupted evaluation continues where it stopped. ``ray`` runs the
    tasks on Ray (``"local"`` or a cluster's address) with the same results. Returns the game
    records, one summary per pairing and, for three or more players, the Elo table (else an
    empty list).
    """
    table = resolve_table(table).name
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
    for spec in specs:  # every name, option and checkpoint is checked before anything is played
        check_seat(spec, player_for(spec, rules), table, rules)
    if ray is not None:  # before the journal: a failed command leaves nothing behind
        from evaluation.ray_backend import import_ray

        import_ray()
    tasks = make_tasks(specs, deals, matches, seed, rules, chunk, table)
    log = None
    if journal is not None:
        identity = {
            "players": [s.label for s in specs],
            "deals": deals,
            "matches": matches,
            "seed": seed,
            "rules": rules.to_dict(),
            "chunk": chunk,
            "table": table,
        }
        log = Journal(journal, identity)
    records = run_tasks(tasks, workers, progress, log, ray)
    summaries = []
    for pairing, (a, b) in enumerate(combinations(specs, 2)):
        games = [r for r in records if r.pairing == pairing]
        summaries.append(summarise(games, a.label, b.label))
    elo_rows: list[dict[str, Any]] = []
    if len(specs) > 2:
        elo_rows = elo_table([s.label for s in specs], records)
    return records, summaries, elo_rows
