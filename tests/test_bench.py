"""``scopa bench`` runs end to end on tiny budgets and writes its JSON and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.speed import AEC_TABLES, table_case
from cli import main as cli
from scopa_env.tables import TABLES


def test_bench_writes_json_and_markdown(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    out = tmp_path / "bench"
    argv = ["bench", "--quick", "--repeats", "1", "--seconds", "0.01", "--batch-sizes", "1,16"]
    assert cli.main([*argv, "--no-pin", "--out", str(out)]) == 0
    result = json.loads((out / "bench.json").read_text())
    names = set(result["measurements"])
    assert {"openspiel crazy_eights", "scopa_v0 (AEC)", "batched N=16"} <= names
    assert {f"{table} raw_env (AEC)" for table in AEC_TABLES} <= names
    assert result["ratios"]["scopa_3 raw_env / scopa_v0 raw_env"]["target"] == 0.9
    assert all(
        m[clock]["best"] > 0 for m in result["measurements"].values() for clock in ("wall", "cpu")
    )
    assert set(result["ratios"]) == {
        "engine / OpenSpiel crazy_eights",
        "scopa_v0 AEC / connect_four_v3 AEC",
        "ceiling: null env / connect_four_v3 AEC, same wrappers",
        "scopa_v0 raw_env / connect_four_v3 raw_env",
        "scopa_v0 AEC / null env, same wrappers",
        *(f"{table} raw_env / scopa_v0 raw_env" for table in AEC_TABLES),
        f"batched (N={result['best_batch_size']}) / OpenSpiel crazy_eights",
    }
    assert result["memory"][0]["state_bytes_per_game"] <= 1024
    table = (out / "bench.md").read_text()
    assert "| batched N=16 |" in table and "Best batch size" in table
    # Every table, at the largest batch size asked for, beside the two-player figure.
    assert set(result["tables"]) == set(TABLES)
    for name, row in result["tables"].items():
        assert row["best_batch_size"] == (result["best_batch_size"] if name == "scopa" else 16)
        measured = result["measurements"][table_case(name, row["best_batch_size"])]
        for clock in ("wall", "cpu"):
            assert row[clock]["best"] == measured[clock]["best"] > 0
            two = result["tables"]["scopa"][clock]["best"]
            assert row[clock]["ratio"] == pytest.approx(row[clock]["best"] / two)
            assert row["target_met"][clock] == (row[clock]["best"] >= 1_000_000)
        assert f"| {name} | {row['best_batch_size']} |" in table


def test_bench_measures_the_tables_asked_for(tmp_path: Path) -> None:
    from benchmark.speed import table_sizes

    assert table_sizes((1, 64, 1024, 4096)) == (1024, 4096)
    assert table_sizes((1, 16)) == (16,)
    with pytest.raises(ValueError, match="unknown tables"):
        cli.main(["bench", "--tables", "scopa_5", "--no-pin", "--out", str(tmp_path)])


def test_null_env_is_a_valid_aec_env_with_scopas_shapes() -> None:
    """The ceiling is only meaningful if the do-nothing env is a real AEC env of our shape."""
    from pettingzoo.test import api_test

    from benchmark.speed import null_aec_env
    from scopa_env import scopa_v0

    env = null_aec_env()
    api_test(env, num_cycles=50)
    ours = scopa_v0.env()
    for agent in ours.possible_agents:
        assert env.observation_space(agent) == ours.observation_space(agent)
        assert env.action_space(agent) == ours.action_space(agent)
