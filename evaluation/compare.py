"""Two players against the same opponents on the same decks: their difference, paired deck by deck.

Two head-to-head evaluations with the same seed, rules and table play the same decks
(``harness.duplicate_deck`` depends on nothing else). Variants of one player (a search at two
settings, say) score alike on a deck, so the difference of their per-deck points against the
common opponent has a much narrower interval than the two runs' separate intervals suggest:
``prior_weight`` 0.05 and 0.2 of ``ismcts_prior`` against ISMCTS-300 correlate at 0.80 over
600 decks, and their paired difference is -0.119 +- 0.076 where each run alone is +-0.114.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.harness import RUN_FILE, EvaluationError
from evaluation.records import GameRecord, read_csv
from evaluation.stats import mean_ci

#: What two runs must share to have played the same decks.
_SAME_DECKS = ("seed", "rules", "table")


@dataclass(frozen=True)
class PairedComparison:
    """``player_a`` minus ``player_b``, each in points per deal against ``opponent``."""

    player_a: str
    player_b: str
    opponent: str
    decks: int
    points_a: float
    points_b: float
    difference: float
    difference_ci: float
    correlation: float


def deck_points(records: list[GameRecord], player: str, opponent: str) -> dict[int, float]:
    """Per deck (duplicate pair), ``player``'s points minus ``opponent``'s, averaged over the
    deck's games; deals only, whichever side of the pairing each was listed on."""
    games: dict[int, list[int]] = {}
    for r in records:
        if r.kind != "deal":
            continue
        if (r.player_a, r.player_b) == (player, opponent):
            games.setdefault(r.pair, []).append(r.points_a - r.points_b)
        elif (r.player_a, r.player_b) == (opponent, player):
            games.setdefault(r.pair, []).append(r.points_b - r.points_a)
    return {pair: float(np.mean(points)) for pair, points in games.items()}


def paired_comparison(
    records_a: list[GameRecord],
    records_b: list[GameRecord],
    player_a: str,
    player_b: str,
    opponent: str,
) -> PairedComparison:
    """Compare ``player_a`` (in ``records_a``) with ``player_b`` (in ``records_b``) on the
    decks both played against ``opponent``."""
    a = deck_points(records_a, player_a, opponent)
    b = deck_points(records_b, player_b, opponent)
    decks = sorted(a.keys() & b.keys())
    if not decks:
        raise EvaluationError(
            f"no deck was played by both {player_a} and {player_b} against {opponent}"
        )
    x = np.array([a[d] for d in decks])
    y = np.array([b[d] for d in decks])
    difference, ci = mean_ci(x - y)
    return PairedComparison(
        player_a=player_a,
        player_b=player_b,
        opponent=opponent,
        decks=len(decks),
        points_a=float(x.mean()),
        points_b=float(y.mean()),
        difference=difference,
        difference_ci=ci,
        correlation=float(np.corrcoef(x, y)[0, 1]) if x.std() and y.std() else float("nan"),
    )


def compare_runs(run_a: Path, run_b: Path, player: str | None = None) -> list[PairedComparison]:
    """Pair two runs of ``scopa eval`` (their folders) whose players are the same but one:
    that player of each against every player they share, one comparison per shared player.

    Head-to-head runs share one player, the opponent. Round robins and free-for-alls (a
    table of three or more seats, one player a seat) share the rest of the field, and each
    comparison pairs the two players' points against one of its members in the same games.
    ``player`` names the compared player when both runs list the same players, one of them
    playing differently in each (a default or a network changed between the runs).
    Refuses runs that did not play the same decks or whose players differ by more than one.
    """
    identity_a, identity_b = _identity(run_a), _identity(run_b)
    for key in _SAME_DECKS:
        if identity_a[key] != identity_b[key]:
            raise EvaluationError(
                f"{run_a} and {run_b} did not play the same decks: their {key} differs "
                f"({identity_a[key]!r} and {identity_b[key]!r})"
            )
    compared_a, compared_b = _compared(run_a, run_b, identity_a, identity_b, player)
    records_a, records_b = _records(run_a), _records(run_b)
    return [
        paired_comparison(records_a, records_b, compared_a, compared_b, opponent)
        for opponent in identity_a["players"]
        if opponent != compared_a
    ]


def _compared(
    run_a: Path,
    run_b: Path,
    identity_a: dict[str, Any],
    identity_b: dict[str, Any],
    player: str | None,
) -> tuple[str, str]:
    """The player of each run that the comparison sets against the other's."""
    players_a, players_b = identity_a["players"], identity_b["players"]
    if player is not None:
        if player not in players_a or player not in players_b:
            raise EvaluationError(
                f"player {player!r} is not in both runs: {run_a} played {players_a}, "
                f"{run_b} played {players_b}"
            )
        if sorted(players_a) != sorted(players_b):
            raise EvaluationError(
                f"comparing {player!r} with itself needs runs of the same players: {run_a} "
                f"played {players_a}, {run_b} played {players_b}"
            )
        return player, player
    only_a = [p for p in players_a if p not in players_b]
    only_b = [p for p in players_b if p not in players_a]
    if len(players_a) != len(players_b) or len(only_a) != 1 or len(only_b) != 1:
        hint = " (name the one compared with --player)" if not only_a and not only_b else ""
        raise EvaluationError(
            f"the runs must have the same players but one, the two compared: {run_a} played "
            f"{players_a}, {run_b} played {players_b}{hint}"
        )
    return only_a[0], only_b[0]


def _identity(run: Path) -> dict[str, Any]:
    path = run / RUN_FILE
    if not path.is_file():
        raise EvaluationError(
            f"{run} has no {RUN_FILE}: name the folder of a run of `scopa eval` (runs written "
            "before it recorded its decks need running again)"
        )
    try:
        identity = json.loads(path.read_text())
        valid = isinstance(identity["players"], list) and all(k in identity for k in _SAME_DECKS)
    except (ValueError, KeyError, TypeError):
        valid = False
    if not valid:
        raise EvaluationError(f"{path} is not a run's record of its decks")
    return dict(identity)


def _records(run: Path) -> list[GameRecord]:
    rows = read_csv(run / "games.csv")
    if not rows:
        raise EvaluationError(f"{run} has no games.csv with games in it")
    try:
        return [GameRecord.from_row(row) for row in rows]
    except (KeyError, ValueError) as error:
        raise EvaluationError(f"{run}/games.csv is not a games table: {error}") from None
