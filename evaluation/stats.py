"""Statistics of duplicate-deal results: means with 95% intervals, pairings, Bradley-Terry Elo."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from evaluation.records import GameRecord

Z95 = NormalDist().inv_cdf(0.975)
ELO_MEAN = 1500.0
ELO_SCALE = 400.0 / math.log(10.0)
#: Refits to resampled decks behind a free-for-all's Elo intervals (``elo_table``).
DECK_RESAMPLES = 1000


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


def category_differences(records: Sequence[GameRecord]) -> dict[str, tuple[float, float]]:
    """Where a pairing's points per deal come from: in each scoring category (cards, coins,
    settebello, primiera, scope, and a variant's), A's points less B's per deal, mean over
    duplicate pairs and its 95% half-width, as ``summarise`` gives the whole. The categories
    sum to the whole; a category neither side scored in any deal (a variant that is off) is
    left out."""
    deals = [r for r in records if r.kind == "deal" and r.categories_a]
    sides = {id(r): (_points(r.categories_a), _points(r.categories_b)) for r in deals}
    scored = {name for a, b in sides.values() for name in a if a[name] or b[name]}
    names = [name for name in sides[id(deals[0])][0] if name in scored] if deals else []
    return {
        name: mean_ci(_pair_means(deals, lambda r, n=name: sides[id(r)][0][n] - sides[id(r)][1][n]))
        for name in names
    }


def _points(categories: str) -> dict[str, int]:
    """``GameRecord.categories_a``'s ``name=points`` words as a dict."""
    return {name: int(points) for name, _, points in (w.partition("=") for w in categories.split())}


def _pair_means(records: Sequence[GameRecord], value: Any) -> np.ndarray:
    by_pair: dict[int, list[float]] = {}
    for r in records:
        by_pair.setdefault(r.pair, []).append(value(r))
    return np.array([np.mean(v) for _, v in sorted(by_pair.items())])


def _ms_per_move(records: Sequence[GameRecord], side: str) -> float:
    seconds = sum(getattr(r, f"cpu_seconds_{side}") for r in records)
    plays = sum(getattr(r, f"plays_{side}") for r in records)
    return 1000.0 * seconds / plays if plays else math.nan


def elo_table(
    labels: Sequence[str], records: Sequence[GameRecord], resample_decks: int = 0
) -> list[dict[str, Any]]:
    """Bradley-Terry Elo from the deal results of a round-robin.

    The intervals come from the fit's Fisher information, which counts every result as
    independent. Results that share a deck are not: in a free-for-all each pair of players
    meets on a deck once per rotation (and, in a ladder, once per meeting with a third). With
    ``resample_decks`` > 0 each interval is instead 1.96 standard deviations of the player's
    Elo over that many fits to the decks drawn with replacement (seeded, so a report is
    reproducible).
    """
    index = {label: i for i, label in enumerate(labels)}
    n = len(labels)
    deals = [r for r in records if r.kind == "deal"]
    decks = {pair: k for k, pair in enumerate(sorted({r.pair for r in deals}))}
    scores, games = np.zeros((len(decks), n, n)), np.zeros((len(decks), n, n))
    for r in deals:
        k, i, j = decks[r.pair], index[r.player_a], index[r.player_b]
        result = 1.0 if r.points_a > r.points_b else 0.5 if r.points_a == r.points_b else 0.0
        scores[k, i, j] += result
        scores[k, j, i] += 1.0 - result
        games[k, i, j] += 1
    elo, half = bradley_terry_elo(scores.sum(axis=0), games.sum(axis=0))
    if resample_decks and len(decks) > 1:
        rng = np.random.default_rng(0)
        draws = rng.multinomial(len(decks), np.full(len(decks), 1.0 / len(decks)), resample_decks)
        by_deck = np.stack([scores, games], axis=1)  # a draw of decks weighs these by its counts
        fits = [bradley_terry_elo(*np.tensordot(w, by_deck, 1))[0] for w in draws]
        half = Z95 * np.std(fits, axis=0, ddof=1)
    total = games.sum(axis=0)
    order = np.argsort(-elo)
    return [
        {
            "player": labels[i],
            "elo": float(elo[i]),
            "elo_ci": float(half[i]),
            "deals": int(total[i].sum() + total[:, i].sum()),
        }
        for i in order
    ]


@dataclass
class FieldSummary:
    """One player's results in a free-for-all (every game's other players are its field)."""

    player: str
    deal_sets: int = 0
    points_vs_field: float = math.nan
    points_vs_field_ci: float = math.nan
    points: float = math.nan
    deal_wins: int = 0
    deals: int = 0
    match_sets: int = 0
    match_win_rate: float = math.nan
    match_win_rate_ci: float = math.nan
    ms_per_move: float = math.nan


def field_summaries(records: Sequence[GameRecord], labels: Sequence[str]) -> list[FieldSummary]:
    """Per player of a free-for-all, from its games' records (one per pair of players).

    ``points_vs_field``: its points in a deal minus the mean of the others' (the mean of its
    head-to-head differences), averaged over the rotations of a deck, then over decks with a
    95% interval (each deck's rotations are one sample). A deal or match is won with more
    points than every other player; ``match_win_rate`` is the share of matches won.
    """
    games: dict[tuple[str, int, int], dict[str, list[tuple[int, int]]]] = {}
    for r in records:
        game = games.setdefault((r.kind, r.pair, r.replica), {})
        game.setdefault(r.player_a, []).append((r.points_a, r.points_b))
        game.setdefault(r.player_b, []).append((r.points_b, r.points_a))
    summaries = []
    for label in labels:
        s = FieldSummary(player=label)
        diff: dict[int, list[float]] = {}
        won: dict[tuple[str, int], list[float]] = {}
        points = []
        for (kind, pair, _), game in games.items():
            results = game.get(label)
            if not results:
                continue
            win = float(all(mine > theirs for mine, theirs in results))
            won.setdefault((kind, pair), []).append(win)
            if kind == "deal":
                diff.setdefault(pair, []).append(float(np.mean([m - t for m, t in results])))
                points.append(results[0][0])
        deal_wins = [w for (kind, _), ws in won.items() if kind == "deal" for w in ws]
        match_wins = [
            float(np.mean(ws)) for (kind, _), ws in sorted(won.items()) if kind == "match"
        ]
        if diff:
            s.deal_sets = len(diff)
            s.points_vs_field, s.points_vs_field_ci = mean_ci(
                [float(np.mean(v)) for _, v in sorted(diff.items())]
            )
            s.points = float(np.mean(points))
            s.deal_wins, s.deals = int(sum(deal_wins)), len(deal_wins)
        if match_wins:
            s.match_sets = len(match_wins)
            s.match_win_rate, s.match_win_rate_ci = mean_ci(match_wins)
        s.ms_per_move = _field_ms_per_move(records, label)
        summaries.append(s)
    return summaries


def _field_ms_per_move(records: Sequence[GameRecord], label: str) -> float:
    """CPU ms per card played by ``label``, counting each game once (its first record)."""
    seconds, plays, seen = 0.0, 0, set()
    for r in records:
        for side in ("a", "b"):
            game = (r.kind, r.pair, r.replica)
            if getattr(r, f"player_{side}") == label and game not in seen:
                seen.add(game)
                seconds += getattr(r, f"cpu_seconds_{side}")
                plays += getattr(r, f"plays_{side}")
    return 1000.0 * seconds / plays if plays else math.nan
