"""The report of an evaluation: CSV files, Markdown tables and a plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.records import GameRecord, atomic_path, write_csv, write_text
from evaluation.stats import ELO_MEAN, FieldSummary, PairingSummary, category_differences


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
    fields: Sequence[FieldSummary] = (),
    categories: Sequence[dict[str, tuple[float, float]]] = (),
) -> str:
    """The report's Markdown; ``categories``: each pairing's ``category_differences``."""
    lines = ["# Evaluation", ""]
    lines += [f"- {key}: `{value}`" for key, value in header.items()]
    if fields:
        lines += [
            "",
            "Free-for-all: every deck is played once per rotation of the players round the "
            "seats. Points per deal vs the field: the player's points minus the mean of the "
            "others', mean over decks (each deck's rotations one sample) ± 95% CI. Deals and "
            "matches won: with more points than every other player.",
            "",
            "| player | decks | points/deal vs field | points/deal | deals won "
            "| match decks | match win rate | CPU ms/move |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for f in fields:
            lines.append(
                f"| {f.player} | {f.deal_sets} | {_fmt(f.points_vs_field, f.points_vs_field_ci)} "
                f"| {_fmt(f.points, digits=2, sign=False)} | {f.deal_wins} / {f.deals} "
                f"| {f.match_sets} | {_fmt(f.match_win_rate, f.match_win_rate_ci, sign=False)} "
                f"| {_fmt(f.ms_per_move, digits=2, sign=False)} |"
            )
    lines += [
        "",
        (
            "Head to head inside the free-for-all games: A's points minus B's in the same "
            "deal, mean over decks (each deck's rotations one sample) ± 95% CI; W/D/L: A's "
            "deals with more, as many and fewer points than B; match win rate: A's share of "
            "the matches A finished ahead of B."
            if fields
            else "Points per deal: A's points minus B's, mean over duplicate deals ± 95% CI "
            "(normal approximation on per-pair means). W/D/L: A's deals won, drawn and lost. "
            "Match win rate: A's share of duplicate matches won ± 95% CI."
        )
        + (
            " A and B are partnerships of copies of each player sitting alternately (A in the "
            "even seats, then with the same deck in the odd ones); results are the side's."
            if header.get("table", "scopa") != "scopa" and not fields
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
    lines += _category_table(summaries, categories)
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


def _category_table(
    summaries: Sequence[PairingSummary], categories: Sequence[dict[str, tuple[float, float]]]
) -> list[str]:
    names = list(dict.fromkeys(name for pairing in categories for name in pairing))
    if not names:
        return []
    lines = [
        "",
        "Where the points come from: A's points minus B's per deal in each scoring category, "
        "mean over duplicate deals ± 95% CI; the categories sum to points/deal.",
        "",
        "| A | B | " + " | ".join(names) + " |",
        "|---|---|" + "---:|" * len(names),
    ]
    for s, pairing in zip(summaries, categories, strict=True):
        if pairing:
            cells = [_fmt(*pairing[n]) if n in pairing else "-" for n in names]
            lines.append(f"| {s.player_a} | {s.player_b} | " + " | ".join(cells) + " |")
    return lines


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
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)


def write_outputs(
    out: Path,
    records: Sequence[GameRecord],
    summaries: Sequence[PairingSummary],
    elo_rows: Sequence[dict[str, Any]],
    header: dict[str, Any],
    fields: Sequence[FieldSummary] = (),
) -> str:
    """Write the CSV files, the Markdown report and the plot; return the Markdown.

    ``fields``: a free-for-all's per-player summaries, also written to ``field.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "games.csv", [asdict(r) for r in records])
    rows = []
    for s in summaries:
        rows.append(asdict(s))
    write_csv(out / "summary.csv", rows)
    if elo_rows:
        write_csv(out / "elo.csv", list(elo_rows))
    if fields:
        write_csv(out / "field.csv", [asdict(f) for f in fields])
    categories = [
        category_differences([r for r in records if r.pairing == pairing])
        for pairing in range(len(summaries))
    ]
    report = markdown_report(summaries, elo_rows, header, fields, categories)
    write_text(out / "report.md", report)
    plot_report(summaries, elo_rows, out / "report.png")
    return report
