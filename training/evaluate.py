"""``scopa eval``: head-to-head and round-robin evaluation of players on duplicate deals.

Every deck is played twice with the seats swapped (duplicate deals), so the luck of the cards
cancels within a pair; the statistics treat each pair as one sample. Decks, the first player and
every player's own randomness come from ``--seed``, so a run is reproducible whatever the number
of worker processes. Games are played through ``scopa_v0`` (``episode="deal"`` with the deck in
the reset options; ``episode="match"`` with the same seed for both matches of a duplicate pair).

``--game scopone`` (or ``scopone_scientifico``) plays four-player Scopone through ``scopone_v0``
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

import argparse
import ast
import csv
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

from scopa_env import scopa_v0, scopone_v0
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import DEAL_KINDS, needs_redeal
from scopa_env.rules import Rules, resolve_rules
from training.rules_args import add_rules_arguments, describe_rules, rules_from_args

Z95 = NormalDist().inv_cdf(0.975)
ELO_MEAN = 1500.0
#: The journal of finished games that ``scopa eval`` keeps in its output folder while it runs.
JOURNAL = "journal.jsonl"
ELO_SCALE = 400.0 / math.log(10.0)


# Players --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerSpec:
    """A player named on the command line: ``name`` or a checkpoint path, plus options.

    Written ``name[:key=value,...]``, e.g. ``ismcts:iterations=400,exploration=0.5``; values
    are Python literals (numbers, booleans, strings).
    """

    label: str
    name: str
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def parse(cls, text: str) -> PlayerSpec:
        name, sep, rest = text.partition(":")
        options: list[tuple[str, Any]] = []
        if sep and rest:
            for item in rest.split(","):
                key, eq, value = item.partition("=")
                if not eq or not key.strip():
                    raise ValueError(f"bad player option {item!r} in {text!r} (use key=value)")
                try:
                    parsed = ast.literal_eval(value.strip())
                except (ValueError, SyntaxError):
                    parsed = value.strip()
                options.append((key.strip(), parsed))
        return cls(label=text, name=name, options=tuple(options))

    def build(self, rules: Rules) -> Any:
        from agents import make_agent  # the players import torch lazily, only when needed

        return make_agent(self.name, rules=rules, **dict(self.options))


_PLAYERS: dict[tuple[PlayerSpec, Rules, tuple[int, int] | None], Any] = {}


def _player(spec: PlayerSpec, rules: Rules) -> Any:
    """One instance per spec and process (checkpoints load once); reset before every game.

    A checkpoint file rewritten in place (as training does before each evaluation) is loaded
    again: the key holds the file's size and modification time. A trained policy runs torch on
    one thread: its network is small, and more threads per process only contend for the cores
    the other workers use (24 ms of CPU a move with torch's default of 2 threads against 2.6 ms
    with one, measured on 2 shared cores).
    """
    from agents.policy import PolicyAgent

    path = Path(spec.name)
    stamp = (path.stat().st_mtime_ns, path.stat().st_size) if path.is_file() else None
    key = (spec, rules, stamp)
    if key not in _PLAYERS:
        _PLAYERS[key] = spec.build(rules)
        if isinstance(_PLAYERS[key], PolicyAgent):
            import torch

            torch.set_num_threads(1)
    return _PLAYERS[key]


# Games ----------------------------------------------------------------------------------------


def duplicate_deck(
    seed: int, pair: int, rules: Rules, game: str = "scopa"
) -> tuple[list[int], int]:
    """The deck and first player of duplicate pair ``pair``: the same for every pairing.

    A deck whose table would be void (``needs_redeal``) is shuffled again, as for a random deal.
    """
    kind = DEAL_KINDS[game]
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


@dataclass
class GameRecord:
    """One game of a duplicate pair, from player A's side."""

    kind: str  # "deal" or "match"
    pairing: int
    player_a: str
    player_b: str
    pair: int
    replica: int  # 0: A in seat 0 (Scopone: seats 0 and 2); 1: the seats swapped
    first_player: int  # seat that led the (first) deal
    points_a: int
    points_b: int
    deals: int
    cpu_seconds_a: float
    cpu_seconds_b: float
    plays_a: int
    plays_b: int
    categories_a: str = ""
    categories_b: str = ""


@dataclass(frozen=True)
class Task:
    kind: Literal["deal", "match"]
    pairing: int
    a: PlayerSpec
    b: PlayerSpec
    pairs: tuple[int, int]  # [start, stop)
    seed: int
    rules: Rules
    game: str = "scopa"  # a deal kind: "scopa", "scopone" or "scopone_scientifico"


def run_task(task: Task) -> list[GameRecord]:
    """Play the duplicate pairs ``task.pairs`` of one pairing (in a worker process)."""
    rules = task.rules
    players = DEAL_KINDS[task.game].players
    if players == 2:
        env = scopa_v0.raw_env(rules=rules, episode=task.kind, reward="points")
    else:
        env = scopone_v0.raw_env(rules=rules, deal=task.game, episode=task.kind, reward="points")
    a, b = _player(task.a, rules), _player(task.b, rules)
    kind_id = 0 if task.kind == "deal" else 1
    records = []
    for pair in range(*task.pairs):
        if task.kind == "deal":
            deck, first = duplicate_deck(task.seed, pair, rules, task.game)
            options: dict[str, Any] = {"deck": deck, "first_player": first}
            env_seed = None
        else:
            first = pair % players
            options = {"first_player": first}
            env_seed = int(np.random.SeedSequence([task.seed, 2, pair]).generate_state(1)[0])
        for replica in (0, 1):
            sides = (a, b) if replica == 0 else (b, a)
            seats = [sides[seat % 2] for seat in range(players)]  # partners sit alternately
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


# Statistics -----------------------------------------------------------------------------------


def mean_ci(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean and half-width of its 95% confidence interval (normal approximation)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    return float(x.mean()), float(Z95 * x.std(ddof=1) / math.sqrt(x.size))


def bradley_terry_elo(
    scores: np.ndarray,
    games: np.ndarray,
    prior_draws: float = 1.0,
    tol: float = 1e-12,
    max_iter: int = 100_000,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood Bradley-Terry ratings on the Elo scale, and their 95% half-widths.

    ``scores[i, j]`` is what player i scored against j (wins plus half the draws) in
    ``games[i, j]`` games. The model is ``P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400))``,
    fitted by Hunter's MM iterations. Each pair that met gets ``prior_draws`` virtual draws, a
    weak prior that keeps a perfect record finite. Ratings are centred on a mean of 1500; the
    intervals come from the inverse Fisher information with that centring.
    """
    scores = np.asarray(scores, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    n = scores.shape[0]
    met = (games + games.T) > 0
    np.fill_diagonal(met, False)
    w = scores + prior_draws / 2 * met
    g = games + games.T + prior_draws * met
    strength = np.ones(n)
    wins = w.sum(axis=1)
    for _ in range(max_iter):
        denom = (g / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = np.where(denom > 0, wins / np.where(denom > 0, denom, 1.0), strength)
        new /= np.exp(np.log(np.maximum(new, 1e-300)).mean())
        if np.max(np.abs(np.log(np.maximum(new, 1e-300)) - np.log(strength))) < tol:
            strength = new
            break
        strength = new
    theta = np.log(np.maximum(strength, 1e-300))
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    info = -g * p * p.T
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(axis=1))
    centre = np.eye(n) - 1.0 / n
    cov = centre @ np.linalg.pinv(info) @ centre
    elo = ELO_MEAN + ELO_SCALE * (theta - theta.mean())
    half = Z95 * ELO_SCALE * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return elo, half


@dataclass
class PairingSummary:
    """The results of one pairing (A against B)."""

    player_a: str
    player_b: str
    deal_pairs: int = 0
    points_per_deal: float = math.nan
    points_per_deal_ci: float = math.nan
    points_a: float = math.nan
    points_b: float = math.nan
    deal_wins: int = 0
    deal_draws: int = 0
    deal_losses: int = 0
    match_pairs: int = 0
    match_win_rate: float = math.nan
    match_win_rate_ci: float = math.nan
    deals_per_match: float = math.nan
    ms_per_move_a: float = math.nan
    ms_per_move_b: float = math.nan


def summarise(records: Sequence[GameRecord], a: str, b: str) -> PairingSummary:
    """Aggregate the games of one pairing; statistics use per-duplicate-pair means."""
    summary = PairingSummary(player_a=a, player_b=b)
    deals = [r for r in records if r.kind == "deal"]
    matches = [r for r in records if r.kind == "match"]
    if deals:
        diffs = _pair_means(deals, lambda r: r.points_a - r.points_b)
        summary.deal_pairs = len(diffs)
        summary.points_per_deal, summary.points_per_deal_ci = mean_ci(diffs)
        summary.points_a = float(np.mean([r.points_a for r in deals]))
        summary.points_b = float(np.mean([r.points_b for r in deals]))
        summary.deal_wins = sum(r.points_a > r.points_b for r in deals)
        summary.deal_draws = sum(r.points_a == r.points_b for r in deals)
        summary.deal_losses = sum(r.points_a < r.points_b for r in deals)
    if matches:
        wins = _pair_means(matches, lambda r: float(r.points_a > r.points_b))
        summary.match_pairs = len(wins)
        summary.match_win_rate, summary.match_win_rate_ci = mean_ci(wins)
        summary.deals_per_match = float(np.mean([r.deals for r in matches]))
    every = list(records)
    if every:
        summary.ms_per_move_a = _ms_per_move(every, "a")
        summary.ms_per_move_b = _ms_per_move(every, "b")
    return summary


def _pair_means(records: Sequence[GameRecord], value: Any) -> np.ndarray:
    by_pair: dict[int, list[float]] = {}
    for r in records:
        by_pair.setdefault(r.pair, []).append(value(r))
    return np.array([np.mean(v) for _, v in sorted(by_pair.items())])


def _ms_per_move(records: Sequence[GameRecord], side: str) -> float:
    seconds = sum(getattr(r, f"cpu_seconds_{side}") for r in records)
    plays = sum(getattr(r, f"plays_{side}") for r in records)
    return 1000.0 * seconds / plays if plays else math.nan


# Running --------------------------------------------------------------------------------------


def make_tasks(
    specs: Sequence[PlayerSpec],
    deals: int,
    matches: int,
    seed: int,
    rules: Rules,
    chunk: int,
    game: str = "scopa",
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
                    Task(kind, pairing, a, b, (start, min(count, start + size)), seed, rules, game)
                )
    return tasks


class Journal:
    """Finished tasks' records, one JSON line per task, so a long evaluation survives a stop.

    The first line identifies the evaluation (players, counts, seed, rules, chunk, game); run
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
                raise ValueError(
                    f"{path} holds another evaluation ({found}); this one is {identity}. "
                    "Choose another --out or delete the file."
                )
            for line in lines[1:]:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:  # a line cut short by the stop
                    continue
                self.done[tuple(entry["task"])] = [GameRecord(**r) for r in entry["records"]]
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(identity) + "\n")

    @staticmethod
    def key(task: Task) -> tuple[Any, ...]:
        return (task.pairing, task.kind, *task.pairs)

    def write(self, task: Task, records: list[GameRecord]) -> None:
        entry = {"task": list(self.key(task)), "records": [asdict(r) for r in records]}
        with self.path.open("a") as file:
            file.write(json.dumps(entry) + "\n")


def run_tasks(
    tasks: Sequence[Task], workers: int, progress: bool = True, journal: Journal | None = None
) -> list[GameRecord]:
    """Run tasks in ``workers`` processes (1: in this process) with a progress bar.

    With a ``journal``, tasks it holds are not played again and each finished task is added.
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
        if workers <= 1:
            for task in todo:
                finished(task, run_task(task))
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(run_task, task): task for task in todo}
                for future in as_completed(futures):
                    finished(futures[future], future.result())
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
    game: str = "scopa",
    journal: Path | None = None,
) -> tuple[list[GameRecord], list[PairingSummary], list[dict[str, Any]]]:
    """Play every pairing of ``players`` on duplicate deals (and matches) and summarise.

    ``game`` is ``"scopa"``, or ``"scopone"``/``"scopone_scientifico"`` for partnerships of
    two copies of each player. ``journal`` is a file that keeps finished games (see
    ``Journal``), so an interrupted evaluation continues where it stopped. Returns the game
    records, one summary per pairing and, for three or more players, the Elo table (else an
    empty list).
    """
    if game not in DEAL_KINDS:
        raise ValueError(f"unknown game {game!r}; choose one of {sorted(DEAL_KINDS)}")
    rules = resolve_rules(rules)
    specs = [PlayerSpec.parse(p) for p in players]
    if len(specs) < 2 or len({s.label for s in specs}) != len(specs):
        raise ValueError(f"need at least two different players, got {list(players)}")
    tasks = make_tasks(specs, deals, matches, seed, rules, chunk, game)
    log = None
    if journal is not None:
        identity = {
            "players": [s.label for s in specs],
            "deals": deals,
            "matches": matches,
            "seed": seed,
            "rules": rules.to_dict(),
            "chunk": chunk,
            "game": game,
        }
        log = Journal(journal, identity)
    records = run_tasks(tasks, workers, progress, log)
    summaries = []
    for pairing, (a, b) in enumerate(combinations(specs, 2)):
        games = [r for r in records if r.pairing == pairing]
        summaries.append(summarise(games, a.label, b.label))
    elo_rows: list[dict[str, Any]] = []
    if len(specs) > 2:
        elo_rows = elo_table([s.label for s in specs], records)
    return records, summaries, elo_rows


def elo_table(labels: Sequence[str], records: Sequence[GameRecord]) -> list[dict[str, Any]]:
    """Bradley-Terry Elo from the deal results of a round-robin."""
    index = {label: i for i, label in enumerate(labels)}
    n = len(labels)
    scores, games = np.zeros((n, n)), np.zeros((n, n))
    for r in records:
        if r.kind != "deal":
            continue
        i, j = index[r.player_a], index[r.player_b]
        result = 1.0 if r.points_a > r.points_b else 0.5 if r.points_a == r.points_b else 0.0
        scores[i, j] += result
        scores[j, i] += 1.0 - result
        games[i, j] += 1
    elo, half = bradley_terry_elo(scores, games)
    order = np.argsort(-elo)
    return [
        {
            "player": labels[i],
            "elo": float(elo[i]),
            "elo_ci": float(half[i]),
            "deals": int(games[i].sum() + games[:, i].sum()),
        }
        for i in order
    ]


# Reports --------------------------------------------------------------------------------------


def _fmt(value: float, ci: float | None = None, digits: int = 3, sign: bool = True) -> str:
    if value is None or math.isnan(value):
        return "-"
    text = f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
    if ci is not None and not math.isnan(ci):
        text += f" ± {ci:.{digits}f}"
    return text


def markdown_report(
    summaries: Sequence[PairingSummary],
    elo_rows: Sequence[dict[str, Any]],
    header: dict[str, Any],
) -> str:
    lines = ["# Evaluation", ""]
    lines += [f"- {key}: `{value}`" for key, value in header.items()]
    lines += [
        "",
        "Points per deal: A's points minus B's, mean over duplicate deals ± 95% CI (normal "
        "approximation on per-pair means). W/D/L: A's deals won, drawn and lost. Match win "
        "rate: A's share of duplicate matches won ± 95% CI."
        + (
            " In Scopone A and B are partnerships of two copies of each player (A in seats 0 "
            "and 2, then with the same deck in seats 1 and 3); results are the partnership's."
            if header.get("game", "scopa") != "scopa"
            else ""
        ),
        "",
        "| A | B | deal pairs | points/deal (A-B) | A pts | B pts | W / D / L "
        "| match pairs | A match win rate | deals/match | A CPU ms/move | B CPU ms/move |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summaries:
        lines.append(
            f"| {s.player_a} | {s.player_b} | {s.deal_pairs} "
            f"| {_fmt(s.points_per_deal, s.points_per_deal_ci)} "
            f"| {_fmt(s.points_a, digits=2, sign=False)} "
            f"| {_fmt(s.points_b, digits=2, sign=False)} "
            f"| {s.deal_wins} / {s.deal_draws} / {s.deal_losses} | {s.match_pairs} "
            f"| {_fmt(s.match_win_rate, s.match_win_rate_ci, sign=False)} "
            f"| {_fmt(s.deals_per_match, digits=1, sign=False)} "
            f"| {_fmt(s.ms_per_move_a, digits=2, sign=False)} "
            f"| {_fmt(s.ms_per_move_b, digits=2, sign=False)} |"
        )
    if elo_rows:
        lines += [
            "",
            "Elo: maximum-likelihood Bradley-Terry fit to all deal results (a draw is half a "
            "win), mean 1500, ± 95% CI.",
            "",
            "| player | Elo | deals |",
            "|---|---:|---:|",
        ]
        for row in elo_rows:
            lines.append(
                f"| {row['player']} | {_fmt(row['elo'], row['elo_ci'], 0, sign=False)} "
                f"| {row['deals']} |"
            )
    return "\n".join(lines) + "\n"


def plot_report(
    summaries: Sequence[PairingSummary], elo_rows: Sequence[dict[str, Any]], path: Path
) -> None:
    """Points per deal per pairing with 95% CIs, and the Elo ratings for a round-robin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if elo_rows else 1
    fig, axes = plt.subplots(
        1, panels, figsize=(6.5 * panels, 1.2 + 0.5 * len(summaries)), squeeze=False
    )
    ax = axes[0][0]
    labels = [f"{s.player_a} vs {s.player_b}" for s in summaries]
    values = [s.points_per_deal for s in summaries]
    errors = [0.0 if math.isnan(s.points_per_deal_ci) else s.points_per_deal_ci for s in summaries]
    y = np.arange(len(summaries))
    ax.barh(y, values, xerr=errors, color="tab:blue", alpha=0.8, capsize=4)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel("points per deal, A - B (95% CI)")
    ax.set_title("duplicate deals")
    if elo_rows:
        ax = axes[0][1]
        y = np.arange(len(elo_rows))
        ax.barh(
            y,
            [r["elo"] - ELO_MEAN for r in elo_rows],
            left=ELO_MEAN,
            xerr=[r["elo_ci"] for r in elo_rows],
            color="tab:green",
            alpha=0.8,
            capsize=4,
        )
        ax.set_yticks(y, [r["player"] for r in elo_rows])
        ax.invert_yaxis()
        ax.set_xlabel("Elo (Bradley-Terry, 95% CI)")
        ax.set_title("round-robin")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(
    out: Path,
    records: Sequence[GameRecord],
    summaries: Sequence[PairingSummary],
    elo_rows: Sequence[dict[str, Any]],
    header: dict[str, Any],
) -> str:
    """Write the CSV files, the Markdown report and the plot; return the Markdown."""
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "games.csv", [asdict(r) for r in records])
    rows = []
    for s in summaries:
        rows.append(asdict(s))
    _write_csv(out / "summary.csv", rows)
    if elo_rows:
        _write_csv(out / "elo.csv", list(elo_rows))
    report = markdown_report(summaries, elo_rows, header)
    (out / "report.md").write_text(report)
    plot_report(summaries, elo_rows, out / "report.png")
    return report


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


# Command line ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "players",
        nargs="+",
        metavar="PLAYER",
        help="two players (head-to-head) or more (round-robin): random, greedy, heuristic, "
        "ismcts, pretrained or a checkpoint path, optionally with options as "
        "name:key=value,... (e.g. ismcts:iterations=400)",
    )
    parser.add_argument(
        "--deals",
        type=int,
        default=200,
        help="duplicate deal pairs per pairing; each deck is played twice (default: 200)",
    )
    parser.add_argument(
        "--matches", type=int, default=0, help="duplicate match pairs per pairing (default: 0)"
    )
    add_rules_arguments(parser)
    parser.add_argument(
        "--game",
        default="scopa",
        choices=sorted(DEAL_KINDS),
        help="scopa (two players, default), or scopone / scopone_scientifico: four players, "
        "each player in a partnership with a copy of itself",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of decks and players")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help=f"worker processes (default: 1; this machine has {os.cpu_count()})",
    )
    parser.add_argument(
        "--chunk",
        type=int,
        default=20,
        help="duplicate deal pairs per task handed to a worker (default: 20)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("runs/eval"), help="output folder (default: runs/eval)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    if args.deals < 0 or args.matches < 0 or args.deals + args.matches == 0:
        raise SystemExit("scopa eval: --deals and --matches must be >= 0, and not both 0")
    try:
        rules = rules_from_args(args)
    except ValueError as error:
        raise SystemExit(f"scopa eval: {error}") from None
    start = time.perf_counter()
    if (args.out / JOURNAL).is_file():
        print(f"scopa eval: continuing from {args.out / JOURNAL}", file=sys.stderr)
    try:
        records, summaries, elo_rows = evaluate(
            args.players,
            deals=args.deals,
            matches=args.matches,
            rules=rules,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            chunk=args.chunk,
            game=args.game,
            journal=args.out / JOURNAL,
        )
    except ValueError as error:
        raise SystemExit(f"scopa eval: {error}") from None
    header = {
        "command": "scopa eval " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        if len(sys.argv) > 1 and sys.argv[1] == "eval"
        else "scopa eval",
        "game": args.game,
        "rules": describe_rules(rules),
        "seed": args.seed,
        "duplicate deal pairs per pairing": args.deals,
        "duplicate match pairs per pairing": args.matches,
        "wall time": f"{time.perf_counter() - start:.0f} s with {args.workers} worker(s)",
    }
    report = write_outputs(args.out, records, summaries, elo_rows, header)
    (args.out / JOURNAL).unlink()
    print(report, end="")
    print(
        f"wrote {args.out}/games.csv, summary.csv, report.md, report.png"
        + (", elo.csv" if elo_rows else "")
    )
    return 0
