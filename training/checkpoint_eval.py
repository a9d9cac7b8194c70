"""Checkpoints evaluated by the harness against the configured opponents, as table rows."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from training.config import TrainConfig


def evaluate_checkpoint(
    path: Path,
    config: TrainConfig,
    deals: int,
    matches: int = 0,
    progress: bool = False,
    final: bool = False,
) -> list[dict[str, Any]]:
    """Duplicate-deal evaluation of a checkpoint against each configured opponent.

    Uses the evaluation harness (``evaluation.harness``), one head-to-head per opponent on the
    same seeded decks. One row per opponent: points per deal with its 95% interval, deal
    record, and the match win rate when ``matches`` duplicate matches are played.
    """
    clone = path.parent / "clone.zip"  # the run folder's warm start, opponent ``clone``
    with tempfile.TemporaryDirectory() as tmp:
        # A fresh file name for every evaluation: the harness caches its players by name.
        unique = Path(tmp) / f"{path.stem}-{uuid.uuid4().hex[:8]}.zip"
        shutil.copyfile(path, unique)
        return _evaluate_rows(unique, config, deals, matches, progress, final, clone)


def _evaluate_rows(
    path: Path,
    config: TrainConfig,
    deals: int,
    matches: int,
    progress: bool,
    final: bool,
    clone: Path,
) -> list[dict[str, Any]]:
    from evaluation.harness import evaluate, field_report, is_free_for_all

    rows = []
    opponents = config.eval.opponents
    if final and config.eval.final_opponents is not None:
        opponents = config.eval.final_opponents
    table = config.resolved_table()
    field = is_free_for_all(table)
    for opponent in opponents:
        player = opponent
        if opponent == "clone":
            if not clone.is_file():
                raise FileNotFoundError(
                    f"eval opponent 'clone' is {clone}, which does not exist (a run saves it "
                    "after its warm start)"
                )
            player = str(clone)
        # A free-for-all seats the checkpoint with copies of the opponent (told apart by seed).
        others = [player, *(f"{player}:seed={i}" for i in range(1, table.players - 1))]
        players = [str(path), *(others if field else others[:1])]
        records, (summary, *_), _ = evaluate(
            players,
            deals=deals,
            matches=matches,
            rules=config.resolved_rules(),
            seed=config.eval.seed,
            workers=config.eval.workers if final else 1,
            progress=progress,
            table=table.name,
        )
        if field:  # its points per deal minus the mean of the others', its deals won alone
            rows.append(_field_row(opponent, field_report(records, players)[0]))
            continue
        ppd, ci = summary.points_per_deal, summary.points_per_deal_ci
        rows.append(
            {
                "opponent": opponent,
                "deals": summary.deal_pairs,
                "points_per_deal": ppd,
                "ci95": ci,
                "ci_low": ppd - ci,
                "ci_high": ppd + ci,
                "deal_wins": summary.deal_wins,
                "deal_draws": summary.deal_draws,
                "deal_losses": summary.deal_losses,
                "matches": summary.match_pairs,
                "match_win_rate": summary.match_win_rate if summary.match_pairs else None,
                "match_win_rate_ci": summary.match_win_rate_ci if summary.match_pairs else None,
            }
        )
    return rows


def _field_row(opponent: str, field: Any) -> dict[str, Any]:
    ppd, ci = field.points_vs_field, field.points_vs_field_ci
    return {
        "opponent": opponent,
        "deals": field.deal_sets,
        "points_per_deal": ppd,
        "ci95": ci,
        "ci_low": ppd - ci,
        "ci_high": ppd + ci,
        "deal_wins": field.deal_wins,
        "deal_draws": "-",  # a free-for-all deal is won alone or not won
        "deal_losses": field.deals - field.deal_wins,
        "matches": field.match_sets,
        "match_win_rate": field.match_win_rate if field.match_sets else None,
        "match_win_rate_ci": field.match_win_rate_ci if field.match_sets else None,
    }


def eval_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of evaluation rows."""
    if not rows:
        return "(no final evaluation)"
    lines = [
        "| opponent | duplicate deals | points per deal | 95% CI | deals won / drawn / lost "
        "| matches won (95% CI) |",
        "| --- | ---: | ---: | --- | --- | ---: |",
    ]
    for r in rows:
        matches = ""
        if r.get("match_win_rate") not in (None, ""):
            matches = (
                f"{100 * float(r['match_win_rate']):.1f}% ± "
                f"{100 * float(r['match_win_rate_ci']):.1f} of {r['matches']}"
            )
        lines.append(
            f"| {r['opponent']} | {r['deals']} | {r['points_per_deal']:+.3f} | "
            f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] | "
            f"{r['deal_wins']} / {r['deal_draws']} / {r['deal_losses']} | {matches} |"
        )
    return "\n".join(lines)
