"""ISMCTS guided by a network's prior: the prior's two limits (none: ISMCTS itself; out of
reach: the network's own move), the prior as log-probabilities, positions worked out by hand,
legal and reproducible play, bad options."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_plays_a_match,
    choice_at,
    my_turn,
    observe_deal,
    play_deals,
    settebello_sweep,
)

from agents import ISMCTSAgent, PriorISMCTSAgent, make_agent
from agents.policy import POLICY_CHECKPOINT
from scopa_env.cards import parse_card
from scopa_env.errors import CheckpointNotFoundError, PlayerError
from scopa_env.info_state import InfoState

pytestmark = pytest.mark.skipif(
    not POLICY_CHECKPOINT.is_file(), reason="the shipped network is not installed"
)

#: (seed, plays) of two-player positions, each with the player to move holding a choice.
POSITIONS = [(seed, plays) for seed in range(5) for plays in (0, 6, 13, 20)]


def choices() -> list[dict[str, np.ndarray]]:
    rows = [observe_deal(my_turn(seed, plays)) for seed, plays in POSITIONS]
    return [row for row in rows if row["action_mask"].sum() > 1]


def test_without_a_prior_it_is_ismcts_move_for_move() -> None:
    plain = ISMCTSAgent(iterations=40, seed=3)
    unguided = PriorISMCTSAgent(iterations=40, prior_weight=0.0, seed=3)
    rows = choices()
    assert len(rows) > 10
    for row in rows:
        assert unguided.act(row) == plain.act(row)


def test_with_a_prior_out_of_reach_it_plays_the_networks_own_move() -> None:
    network = make_agent("pretrained_v5")
    stubborn = PriorISMCTSAgent(iterations=40, prior_weight=1e6, seed=0)
    plain = ISMCTSAgent(iterations=40, seed=0)
    disagreements = 0
    for row in choices():
        assert stubborn.act(row) == network.act(row)
        disagreements += plain.act(row) != network.act(row)
    assert disagreements > 0  # the prior changed some of the search's choices


def test_the_bonus_is_the_weighted_log_probability_of_each_moves_action() -> None:
    player = PriorISMCTSAgent(iterations=10, prior_weight=0.5, seed=0)
    row = choices()[0]
    info = InfoState.from_observation(row["observation"])
    moves = info.legal_moves(player.rules)
    player._decision = (info, row["observation"])
    bonus = np.array(player.root_bonus(moves))
    actions = [info.action(move) for move in moves]
    scale = player.reward_scale / 0.5
    probabilities = {a: np.exp(b * scale) for a, b in zip(actions, bonus, strict=True)}
    assert sum(probabilities.values()) == pytest.approx(1.0)
    logits = player.leaf.logits(row["observation"][None])[0]
    assert max(probabilities, key=probabilities.get) == max(actions, key=lambda a: logits[a])


def test_mid_deal_sweeps_the_table_with_the_settebello() -> None:
    # 7D takes 3S+4S: the sweep and the settebello, worth far more than any prior's doubt.
    deal = settebello_sweep()
    assert PriorISMCTSAgent(iterations=100, seed=0).act(observe_deal(deal)) == parse_card("7D")


def test_whole_deals_are_legal_and_reproducible_from_the_seed() -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": PriorISMCTSAgent(iterations=20, seed=seed),
            "player_1": PriorISMCTSAgent(iterations=20, prior_weight=0.2, seed=seed + 1),
        }
        return play_deals(players, range(2))

    assert actions(5) == actions(5)


def test_refuses_other_tables() -> None:
    with pytest.raises(PlayerError, match="two-player Scopa"):
        PriorISMCTSAgent(iterations=10, seed=0).act(choice_at("scopa_4"))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"iterations": 0}, PlayerError, "iterations"),
        ({"prior_weight": -0.1}, PlayerError, "prior_weight"),
        ({"prior_weight": "high"}, PlayerError, "'high'"),
        ({"network": "greedy"}, PlayerError, "not a policy network"),
        ({"network": "no/such/model.zip"}, CheckpointNotFoundError, "no/such/model.zip"),
        ({"bogus": 1}, PlayerError, "bogus"),
    ],
)
def test_bad_options_are_refused(options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_agent("ismcts_prior", **options)


def test_plays_a_whole_match_in_scopa_play() -> None:
    assert_plays_a_match(make_agent("ismcts_prior", seed=0, iterations=20))
