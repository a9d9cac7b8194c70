"""The shipped networks of the tables of three, four and six seats, of Scopone and of Scopone
scientifico: each plays a whole deal at its table, is refused at a table it was not trained for,
by name, and their recipe is one config (``configs/clone_alphabeta.yaml``) with the table as an
override, the very config each one's ``model.json`` records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents import make_agent
from agents.policy import SHIPPED_CHECKPOINTS
from scopa_env.environments import make_aec
from scopa_env.errors import TableError
from scopa_env.players import check_table
from scopa_env.tables import TABLES
from training.config import load_config

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "clone_alphabeta.yaml"
#: Each table's network, and the seats it takes in the test's deal: at ``scopa_3`` one player
#: against two greedy ones, at the tables of partners every seat of the first side.
NETWORKS = {
    "scopa_3": ("pretrained_scopa_3", {0}),
    "scopa_4": ("pretrained_scopa_4", {0, 2}),
    "scopa_6": ("pretrained_scopa_6", {0, 2, 4}),
    "scopone": ("pretrained_scopone", {0, 2}),
    "scopone_scientifico": ("pretrained_scopone_scientifico", {0, 2}),
}
#: The overrides of the config each network was made with, beyond its table, name and folder.
RECIPE_OVERRIDES = {
    "scopone": ["warm_start.samples=80000"],
    "scopone_scientifico": ["warm_start.samples=60000"],
}


@pytest.mark.parametrize("table", sorted(NETWORKS))
def test_it_plays_every_card_of_its_seats(table: str) -> None:
    name, seats = NETWORKS[table]
    network, greedy = make_agent(name), make_agent("greedy")
    env = make_aec(table, episode="deal")
    env.reset(seed=5)
    plays = dict.fromkeys(range(len(env.possible_agents)), 0)
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        action = (network if seat in seats else greedy).act(observation)
        assert observation["action_mask"][action], (seat, action)
        plays[seat] += action < 40
        env.step(action)
    dealt = TABLES[table].hand_size * TABLES[table].rounds
    assert set(plays.values()) == {dealt}, plays


@pytest.mark.parametrize("table", sorted(NETWORKS))
def test_it_is_refused_at_another_table(table: str) -> None:
    name = NETWORKS[table][0]
    player = make_agent(name)
    assert player.model.policy.table == table
    check_table(player, table, name)
    for other in TABLES:
        if other != table:
            with pytest.raises(TableError, match=rf"'{table}' table, not '{other}'"):
                check_table(player, other, name)


def test_every_shipped_policy_network_is_its_own() -> None:
    weights = {name: path.read_bytes() for name, path in SHIPPED_CHECKPOINTS.items()}
    assert len(set(weights.values())) == len(weights) == 7


@pytest.mark.parametrize("table", sorted(NETWORKS))
def test_one_recipe_makes_each_tables_network(table: str) -> None:
    name = NETWORKS[table][0]
    overrides = [] if table == "scopa_4" else [
        f"table={table}", f"name={table}_alphabeta", f"export_to=agents/{name}"
    ]  # fmt: skip
    config = load_config(CONFIG, overrides + RECIPE_OVERRIDES.get(table, []))
    assert (config.table, config.export_to) == (table, f"agents/{name}")
    assert config.warm_start.teacher == "alphabeta" and config.warm_start.regret_weight > 0
    recorded = json.loads(SHIPPED_CHECKPOINTS[name].with_name("model.json").read_text())
    assert config.model_dump(mode="json") == recorded["config"]  # the shipped run's own config
