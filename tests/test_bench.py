"""``scopa bench`` runs end to end on tiny budgets and writes its JSON and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.speed import AEC_TABLES, table_case
from cli import main as cli
from scopa_env.errors import TableError
from scopa_env.tables import TABLES


def test_bench_writes_json_and_markdown(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    out = tmp_path / "bench"
    argv = ["bench", "--quick", "--repeats", "1", "--seconds", "0.01", "--batch-sizes", "1,16"]
    assert cli.main([*argv, "--no-pin", "--out", str(out)]) == 0
    result = json.loads((out / "bench.json").read_text())
    names = set(result["measurements"])
    assert {"openspiel crazy_eights", "scopa_v0 (AEC)", "batched N=16"} <= names
    assert "ScopaVectorEnv N=16 (learner+opponent)" in names
    assert {f"{table} raw_env (AEC)" for table in AEC_TABLES} <= names
    assert result["ratios"]["scopa_3 raw_env / scopa_v0 raw_env"]["target"] == 0.9
    for r in result["ratios"].values():
        assert all(r[clock]["paired_median"] > 0 for clock in ("wall", "cpu"))
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
    assert "| Ratio | target | wall best | wall median | wall paired |" in table
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


def test_bench_measures_the_tables_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmark.speed import benchmark, table_sizes

    assert table_sizes((1, 64, 1024, 4096)) == (1024, 4096)
    assert table_sizes((1, 16)) == (16,)
    with pytest.raises(SystemExit) as stop:  # argparse's refusal: one line, no traceback
        cli.main(["bench", "--tables", "scopa_4,scopa_5", "--no-pin", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert "argument --tables: unknown table 'scopa_5'; choose one of ['scopa'," in (
        capsys.readouterr().err
    )
    assert not any(tmp_path.iterdir())
    with pytest.raises(TableError, match="unknown table 'scopa_5'"):
        benchmark(tables=("scopa_5",))


def test_the_vector_env_runs_at_the_largest_size_up_to_4096_or_at_4096() -> None:
    """``--batch-sizes 16384`` alone measures the vector environment at 4096."""
    from benchmark.speed import vector_env_size

    assert vector_env_size((1, 16)) == 16
    assert vector_env_size((1, 4096, 8192)) == 4096
    assert vector_env_size((16384,)) == 4096
    assert vector_env_size((8192, 2048, 16384)) == 2048


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


def test_cases_of_a_group_take_turns_in_slices_backward_on_odd_repeats() -> None:
    """0.3 s a case in slices of 0.1 s: a, b, a, b, a, b, then b first; each slice's own
    decisions and seconds make the rates (a does 100 decisions a second, b 50)."""
    from benchmark.speed import _measure

    calls: list[tuple[str, float]] = []

    def runner(name: str, rate: float):  # type: ignore[no-untyped-def]
        def run(budget: float) -> tuple[int, float]:
            calls.append((name, budget))
            return round(rate * budget), budget

        return run

    group = {"a": runner("a", 100), "b": runner("b", 50)}
    alone = {"c": runner("c", 10)}
    m = _measure([group, alone], 2, 0.3, 0.1)
    names = "".join(name for name, _ in calls)
    assert names == "ababab" + "ccc" + "bababa" + "ccc"
    assert all(budget == pytest.approx(0.1) for _, budget in calls)
    assert m["a"]["wall"]["all"] == pytest.approx([100, 100])
    assert m["b"]["wall"]["median"] == pytest.approx(50)
    assert m["c"]["wall"]["best"] == pytest.approx(10)


def test_paired_ratio_is_the_median_of_the_ratios_repeat_by_repeat() -> None:
    from benchmark.speed import _paired, _stats

    ours = {clock: _stats([10.0, 30.0, 12.0]) for clock in ("wall", "cpu")}
    peer = {clock: _stats([5.0, 10.0, 3.0]) for clock in ("wall", "cpu")}
    r = _paired(ours, peer, 3.0)
    assert r["target"] == 3.0
    for clock in ("wall", "cpu"):
        assert r[clock]["best"] == pytest.approx(30 / 10)
        assert r[clock]["median"] == pytest.approx(12 / 5)
        assert r[clock]["paired_median"] == pytest.approx(3.0)  # of 2, 3 and 4
