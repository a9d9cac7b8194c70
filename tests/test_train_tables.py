"""Training at every table: the config's table, the players and network that read each table's
observation, tiny runs per table whose model then plays at its table in the harness."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import TINY as TWO_PLAYER_TINY

from agents.greedy import GreedyAgent
from scopa_env.batched import BatchedScopa, random_legal_actions
from scopa_env.errors import TableError
from scopa_env.tables import TABLES
from training.config import ConfigError, check_resume, load_config, validate

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TABLE_CONFIGS = ("scopa_3", "scopa_4", "scopone")


def _positions(table: str, rules: object, games: int, steps: int, seed: int = 1):
    """Observations and masks of random play at a table, every seat's turn."""
    engine = BatchedScopa(games, rules, table=table, episode="deal", seed=seed)
    engine.reset(seed=seed)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    for _ in range(steps):
        observations.append(engine.obs.copy())
        masks.append(engine.mask.copy())
        cards, offset = engine.legal_actions_bits()
        engine.step(random_legal_actions(cards, rng) + offset)
    return np.concatenate(observations), np.concatenate(masks)


# The greedy player's batched form reads every table's layout --------------------------------


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("rules", ["scopa", "napola", "scopa_a_quindici", "asso_pigliatutto"])
def test_greedy_batch_makes_the_scalar_choice_at_every_table(table: str, rules: str) -> None:
    greedy = GreedyAgent(rules)
    obs, masks = _positions(table, rules, games=16, steps=60)
    scalar = [
        greedy.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)
    ]
    np.testing.assert_array_equal(greedy.act_batch(obs, masks), scalar)


# The card network at every table -------------------------------------------------------------


@pytest.mark.parametrize("table", sorted(TABLES))
def test_card_network_reads_each_tables_planes_by_name(table: str) -> None:
    import torch

    from agents.card_policy import CardNet
    from agents.layouts import layout_for_table

    layout = layout_for_table(table)
    obs, _ = _positions(table, "scopa", games=4, steps=10)
    assert obs.shape[1] == layout.width
    net = CardNet(obs.shape[1], card_width=8, global_width=16)
    assert net.num_planes == len(layout.planes)
    assert layout.planes[net.table_plane] == "table"
    assert layout.planes[net.unseen_plane] == "unseen"
    logits, value = net(torch.as_tensor(obs))
    assert logits.shape == (obs.shape[0], 80) and torch.isfinite(logits).all()
    assert value.shape == (obs.shape[0], 16)
    # The table plane it reads is the table's cards: a card's same-rank fact follows it.
    table_cards = obs[:, layout.slices["table"]]
    assert np.array_equal(table_cards, obs[:, net.table_plane * 40 : (net.table_plane + 1) * 40])


def test_card_policy_for_one_table_refuses_another_tables_observations() -> None:
    from gymnasium import spaces

    from agents.card_policy import CardPolicy

    space = spaces.Box(0.0, 4.0, (373,), np.float32)
    with pytest.raises(TableError, match="'scopa_4' reads 546-float observations"):
        CardPolicy(space, spaces.Discrete(80), lambda _: 1e-3, table="scopa_4")
    with pytest.raises(ValueError, match="no table's observation is 100 floats wide"):
        CardPolicy(spaces.Box(0.0, 1.0, (100,), np.float32), spaces.Discrete(80), lambda _: 1e-3)


# The config's table ---------------------------------------------------------------------------


def test_an_unknown_table_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"table: unknown table 'scopa_5'; choose one of"):
        validate({"table": "scopa_5"})


def test_shaping_is_refused_away_from_two_players() -> None:
    with pytest.raises(ConfigError, match="shaping reads the two-player observation"):
        validate({"table": "scopa_4", "shaping": 0.5})
    assert validate({"shaping": 0.5}).shaping == 0.5


def test_resuming_at_another_table_is_refused() -> None:
    with pytest.raises(ConfigError, match="table is 'scopa_4' in the run, 'scopone' asked"):
        check_resume(validate({"table": "scopa_4"}), validate({"table": "scopone"}))


@pytest.mark.parametrize("name", TABLE_CONFIGS)
def test_table_configs_validate(name: str) -> None:
    config = load_config(CONFIGS / f"{name}.yaml")
    assert config.table == name and config.name == name


# Tiny runs per table --------------------------------------------------------------------------

TINY = {
    **TWO_PLAYER_TINY,
    "eval": {"every": 1, "deals": 2, "final_deals": 2, "opponents": ["greedy"]},
}


def _train_tiny(tmp_path: Path, table: str, **changes: object) -> Path:
    from training.train import train

    run_dir = tmp_path / table
    result = train(validate({**TINY, "table": table, **changes}), run_dir, progress=False)
    assert result.timesteps == 256
    return run_dir


def _plays_at_its_table(run_dir: Path, table: str) -> None:
    from evaluation.harness import evaluate, field_report, is_free_for_all

    model = str(run_dir / "final.zip")
    kind = TABLES[table]
    players = [model, "greedy", "greedy:seed=1"][: 3 if is_free_for_all(kind) else 2]
    records, summaries, _ = evaluate(players, deals=2, table=table, seed=0)
    assert {r.player_a for r in records} >= {model}
    assert summaries[0].deal_pairs == 2
    if is_free_for_all(kind):
        assert field_report(records, players)[0].deal_sets == 2
    other = "scopone_scientifico" if table == "scopone" else "scopa"
    with pytest.raises(TableError, match=f"trained for the '{table}' table, not '{other}'"):
        evaluate([model, "greedy"], deals=1, table=other)


@pytest.mark.parametrize(
    "table",
    [
        "scopa_4",
        pytest.param("scopa_3", marks=pytest.mark.slow),
        pytest.param("scopone", marks=pytest.mark.slow),
        pytest.param("scopa_6", marks=pytest.mark.slow),
        pytest.param("scopone_scientifico", marks=pytest.mark.slow),
    ],
)
def test_tiny_run_at_a_table_trains_records_the_table_and_plays_there(
    tmp_path: Path, table: str
) -> None:
    from sb3_contrib import MaskablePPO

    from scopa_env.environments import make_aec

    run_dir = _train_tiny(tmp_path, table)
    model = MaskablePPO.load(run_dir / "final.zip", device="cpu")
    assert model.policy.table == table
    env = make_aec(table)
    assert model.observation_space.shape == env.observation_space("player_0")["observation"].shape
    assert load_config(run_dir / "config.yaml").table == table
    report = (run_dir / "report.md").read_text()
    assert "greedy" in report
    _plays_at_its_table(run_dir, table)


@pytest.mark.slow
def test_a_partnership_run_resumes_at_its_table_and_exports_it(tmp_path: Path) -> None:
    import json

    from training.train import train

    export = tmp_path / "export"
    run_dir = _train_tiny(tmp_path, "scopone", export_to=str(export))
    card = json.loads((export / "model.json").read_text())
    assert card["config"]["table"] == "scopone"
    longer = validate({**TINY, "table": "scopone", "total_timesteps": 384})
    assert train(longer, run_dir, resume=True, progress=False).timesteps == 384
    with pytest.raises(ConfigError, match="table is 'scopone' in the run, 'scopa_4' asked"):
        train(validate({**TINY, "table": "scopa_4"}), run_dir, resume=True, progress=False)
