"""``scopa imitation``: agreement and regret of a network's picks on a teacher's saved decisions."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from cli.main import main
from scopa_env import scopa_v0
from scopa_env.errors import CheckpointError
from scopa_env.observation import OBS_SLICES
from training.imitation import imitation, read_tasks, uniform_imitation


@cache
def _observation(stock_empty: bool) -> np.ndarray:
    """The first seat's observation of a fresh deal, its stock emptied if asked (read-only)."""
    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)["observation"].astype(np.float32)
    assert obs[OBS_SLICES["stock_size"]][0] > 0  # a fresh deal: 30 cards in the stock
    if stock_empty:
        obs[OBS_SLICES["stock_size"]] = 0.0
    obs.flags.writeable = False
    return obs


def _save(
    path: Path,
    legal: list[list[int]],
    actions: list[int],
    values: np.ndarray | None,
    empty: list[bool],
) -> None:
    masks = np.zeros((len(legal), 80), bool)
    for row, moves in enumerate(legal):
        masks[row, moves] = True
    arrays = {
        "obs": np.stack([_observation(e) for e in empty]),
        "masks": masks,
        "actions": np.array(actions, np.int64),
        "returns": np.zeros(len(legal), np.float32),
    }
    if values is not None:
        arrays["values"] = values.astype(np.float32)
    np.savez_compressed(path, **arrays)


def _values(rows: list[dict[int, float]]) -> np.ndarray:
    values = np.full((len(rows), 80), np.nan)
    for row, valued in enumerate(rows):
        for action, value in valued.items():
            values[row, action] = value
    return values


def test_agreement_and_regret_by_phase_from_hand_worked_picks(tmp_path: Path) -> None:
    # Four decisions with a choice and one without (dropped): two with the stock left, two after.
    _save(
        tmp_path / "task_0000.npz",
        legal=[[3, 7], [5], [1, 2, 9]],
        actions=[3, 5, 2],
        values=_values([{3: 1.0, 7: 0.25}, {5: 0.0}, {1: -0.5, 2: 0.5, 9: 0.5}]),
        empty=[False, False, True],
    )
    _save(
        tmp_path / "task_0001.npz",
        legal=[[4, 6], [8, 11]],
        actions=[4, 8],
        values=_values([{4: 2.0, 6: 0.0}, {}]),  # the last: a move the teacher did not value
        empty=[False, True],
    )
    decisions = read_tasks(tmp_path)
    assert len(decisions.actions) == 4
    logits = np.zeros((4, 80), np.float32)
    logits[0, 7] = 1.0  # the stock left: the network differs, at a cost of 0.75
    logits[1, 9] = 1.0  # stock empty: it differs with a tied move, at no cost
    logits[2, 4] = 1.0  # the stock left: it agrees
    logits[3, 11] = 5.0  # stock empty: it differs, and the teacher valued nothing here
    logits[:, 40] = 9.0  # an illegal action never counts, however likely
    rows = {row["phase"]: row for row in imitation(decisions, logits)}
    assert rows["all"]["decisions"] == 4 and rows["all"]["valued"] == 3
    assert rows["all"]["agreement"] == pytest.approx(1 / 4)
    assert rows["all"]["regret"] == pytest.approx(0.75 / 3)
    assert rows["stock left"]["decisions"] == 2 and rows["stock left"]["valued"] == 2
    assert rows["stock left"]["agreement"] == pytest.approx(1 / 2)
    assert rows["stock left"]["regret"] == pytest.approx(0.75 / 2)
    assert rows["stock left"]["regret_ci"] == pytest.approx(1.96 * 0.375 / np.sqrt(2))
    assert rows["stock empty"]["decisions"] == 2 and rows["stock empty"]["valued"] == 1
    assert rows["stock empty"]["agreement"] == 0.0
    assert rows["stock empty"]["regret"] == 0.0

    # A uniformly random legal pick, in expectation: 1/2, 1/3, 1/2, 1/2 agreement, and the mean
    # gap over the legal moves where the teacher valued them all (0.75/2, 1/3, 2/2; none).
    rows = {row["phase"]: row for row in uniform_imitation(decisions)}
    assert rows["stock left"]["agreement"] == pytest.approx(1 / 2)
    assert rows["stock left"]["regret"] == pytest.approx((0.375 + 1.0) / 2)
    assert rows["stock empty"]["agreement"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert rows["stock empty"]["valued"] == 1
    assert rows["stock empty"]["regret"] == pytest.approx(1 / 3)


def test_without_the_teachers_values_there_is_agreement_and_no_regret(tmp_path: Path) -> None:
    _save(tmp_path / "task_0000.npz", [[3, 7], [1, 2]], [3, 2], None, [False, True])
    decisions = read_tasks(tmp_path)
    assert decisions.values is None
    logits = np.zeros((2, 80), np.float32)
    logits[0, 3] = logits[1, 1] = 1.0
    rows = {row["phase"]: row for row in imitation(decisions, logits)}
    assert rows["all"]["agreement"] == pytest.approx(0.5)
    assert rows["all"]["valued"] == 0 and np.isnan(rows["all"]["regret"])


def test_a_folder_without_tasks_or_a_file_that_is_not_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no warm-start tasks"):
        read_tasks(tmp_path)
    np.savez_compressed(tmp_path / "task_0000.npz", obs=np.zeros((1, 373), np.float32))
    with pytest.raises(CheckpointError, match="not a warm-start task: no masks, actions"):
        read_tasks(tmp_path)


def test_the_command_reports_each_network_by_phase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _save(
        tmp_path / "task_0000.npz",
        [[0, 1], [2, 3]],
        [0, 3],
        _values([{0: 0.0, 1: 1.0}, {2: 0.0, 3: 0.0}]),
        [False, True],
    )
    assert main(["imitation", "pretrained_v5", "--tasks", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"2 decisions with a choice in {tmp_path}"
    assert [line.split(" | ")[:2] for line in lines[3:]] == [
        [f"| {who}", phase]
        for who in ("pretrained_v5", "a uniformly random legal pick")
        for phase in ("all", "stock left", "stock empty")
    ]
