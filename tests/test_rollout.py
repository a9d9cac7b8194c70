"""The rollout search player: legal play, its rollouts against the network's own moves and the
exact solver, rollouts played by a policy network or by a seat-value network, positions worked
out by hand, reproducibility, bad options."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import (
    SEVENS_AND_COINS,
    assert_plays_a_match,
    encode_deal,
    last_round,
    my_turn,
    observe_deal,
    play_deals,
    played_to,
    settebello_sweep,
)

from agents import RolloutAgent, make_agent
from agents.alphabeta import AlphaBeta
from agents.guided import Root
from agents.policy import POLICY_CHECKPOINT
from agents.rollout import SeatRollouts
from agents.seat_value import SeatValue, SeatValueAgent
from agents.values import POINT
from scopa_env.captures import consistent_sets
from scopa_env.cards import mask_of, parse_card
from scopa_env.engine import Deal
from scopa_env.environments import make_aec
from scopa_env.errors import CheckpointError, CheckpointNotFoundError, PlayerError
from scopa_env.observation import deal_block
from scopa_env.rules import Rules
from training.last_round import save

pytestmark = pytest.mark.skipif(
    not POLICY_CHECKPOINT.is_file(), reason="the shipped network is not installed"
)

#: Every deal below starts a match (0 to 0, target 11) with seat 1 dealing and nothing played
#: before it.
ROOT = Root((deal_block((0, 0), 11, 1, 0), deal_block((0, 0), 11, 1, 1)), (0, 0))


@pytest.fixture(scope="module")
def player() -> RolloutAgent:
    return RolloutAgent(samples=2, seed=0)


def endgame(move: str) -> Deal:
    """The last round of ``tests/test_guided.py``'s endgame, after my ``move``: I hold 5B 6B,
    the opponent 4C AB, the table is 3C 2S 4S; my pile holds every seven and every coin."""
    deal = last_round("5B 6B", "4C AB", "3C 2S 4S", SEVENS_AND_COINS)
    (legal,) = [m for m in deal.legal_mask_moves() if m[0] == parse_card(move)]
    deal.play_unchecked(*legal)
    return deal


def test_the_last_round_is_solved_exactly_inside_a_rollout(player: RolloutAgent) -> None:
    # 5B takes 3C+2S and leaves 4S, which 4C sweeps: cards, coins, settebello and primiera
    # are mine, the opponent has a scopa: 4 to 1. 6B takes 2S+4S and leaves 3C, which nothing
    # sweeps; my last capture takes what is left: 4 to 0.
    values = player.rollout_values([endgame("5B"), endgame("6B")], ROOT)
    assert values == [3 * POINT, 4 * POINT]


def test_without_the_exact_last_round_the_network_plays_it_out() -> None:
    network = RolloutAgent(samples=2, seed=0, exact_last_round=False)
    deals = [endgame("5B"), endgame("6B")]
    values = network.rollout_values(deals, ROOT)
    assert all(deal.is_over for deal in deals)
    exact = AlphaBeta(network.rules, network.valuer)
    assert values == [exact.final(deal, 0) for deal in deals]


@pytest.mark.parametrize("plays", [0, 5, 13, 20])
def test_a_rollout_plays_the_networks_most_likely_card(player: RolloutAgent, plays: int) -> None:
    network = make_agent("pretrained_v5")
    for seed in range(4):
        deal = my_turn(seed, plays)
        observation = observe_deal(deal)
        expected = network.act(observation)  # a card: nothing is pending
        (card, _capture) = player.rollout_policy.choose([deal], ROOT)[0]
        assert card == expected


def test_with_a_confidence_out_of_reach_it_plays_the_networks_own_move() -> None:
    network = make_agent("pretrained_v5")
    stubborn = RolloutAgent(samples=3, confidence=1e9, seed=0)
    searched = 0
    for seed in range(6):
        for plays in (0, 6, 13):
            deal = my_turn(seed, plays)
            observation = observe_deal(deal)
            if len(deal.legal_mask_moves()) > 1:
                searched += 1
            assert stubborn.act(observation) == network.act(observation)
    assert searched > 10


def test_rollouts_batched_equal_rollouts_one_by_one(player: RolloutAgent) -> None:
    network = RolloutAgent(samples=2, seed=0, exact_last_round=False)
    deals = [played_to(seed, plays) for seed, plays in ((0, 0), (1, 3), (2, 11), (3, 24), (4, 30))]
    together = network.rollout_values([d.copy() for d in deals], ROOT)
    alone = [network.rollout_values([d.copy()], ROOT)[0] for d in deals]
    assert together == alone
    assert len(set(together)) > 1  # the deals differ: the check is not vacuous


def test_mid_deal_sweeps_the_table_with_the_settebello() -> None:
    deal = settebello_sweep()
    assert RolloutAgent(samples=4, seed=0).act(observe_deal(deal)) == parse_card("7D")


def test_whole_deals_are_legal_and_reproducible_from_the_seed() -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": RolloutAgent(samples=2, seed=seed),
            "player_1": RolloutAgent(samples=2, infer=True, exact_last_round=False, seed=seed),
        }
        return play_deals(players, range(2))

    assert actions(5) == actions(5)


def test_plays_a_whole_match_in_scopa_play() -> None:
    assert_plays_a_match(make_agent("rollout", seed=0, samples=2))


def test_a_batch_of_unrelated_rows_gets_legal_actions(player: RolloutAgent) -> None:
    rows = [observe_deal(played_to(seed, plays)) for seed, plays in ((5, 0), (6, 8), (7, 4))]
    rows = [r for r in rows if r["action_mask"].any()]
    actions = player.act_batch(
        np.stack([r["observation"] for r in rows]), np.stack([r["action_mask"] for r in rows])
    )
    assert all(r["action_mask"][a] == 1 for r, a in zip(rows, actions, strict=True))


def test_refuses_other_tables(player: RolloutAgent) -> None:
    env = make_aec("scopa_4")
    env.reset(seed=0)
    with pytest.raises(PlayerError, match="two-player Scopa"):
        player.act(env.observe(env.agent_selection))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"samples": 0}, PlayerError, "samples"),
        ({"samples": "many"}, PlayerError, "'many'"),
        ({"network": "greedy"}, PlayerError, "not a policy network"),
        ({"network": "no/such/model.zip"}, CheckpointNotFoundError, "no/such/model.zip"),
        ({"depth": 2}, PlayerError, "depth"),
        ({"confidence": -1.0}, PlayerError, "confidence"),
        ({"network": "pretrained_v4", "seat_network": "single"}, PlayerError, "give one"),
        ({"bogus": 1}, PlayerError, "bogus"),
    ],
)
def test_bad_options_are_refused(options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_agent("rollout", **options)


@pytest.fixture(scope="module")
def seat_network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained small seat-value network without attention, as the rollouts play one."""
    path = tmp_path_factory.mktemp("seat") / "seat.pt"
    torch.manual_seed(0)
    save(SeatValue(width=16, layers=0), path)
    return path


def seat_observation(deal: Deal, seat: int) -> dict[str, np.ndarray]:
    """``seat``'s observation of ``deal`` where it is to play a card."""
    mask = np.zeros(80, np.int8)
    mask[list(deal.hands[seat])] = 1
    return {"observation": encode_deal(deal, seat), "action_mask": mask}


@pytest.mark.parametrize("plays", [0, 1, 6, 13, 20, 25])
def test_a_seat_network_plays_each_rollout_move_from_the_movers_own_view(
    seat_network: Path, plays: int
) -> None:
    # In a sampled deal both hands are known; the seat to move, either one, must still choose
    # as the seat-value player does from its own observation: the other hand unseen.
    rollouts = SeatRollouts(SeatValue.load_for(seat_network, Rules()))
    player = SeatValueAgent(network=str(seat_network))
    chosen = 0
    for seed in range(6):
        deal = played_to(seed, plays)
        seat = deal.current_player
        observation = seat_observation(deal, seat)
        if len(deal.legal_mask_moves()) == 1:
            continue
        chosen += 1
        card, _capture = rollouts.choose([deal], ROOT)[0]
        assert card == player.act(observation)
    assert chosen >= 3


def test_a_seat_network_batches_its_rollouts_as_it_plays_them_alone(seat_network: Path) -> None:
    player = RolloutAgent(samples=2, seed=0, seat_network=str(seat_network), exact_last_round=False)
    deals = [played_to(seed, plays) for seed, plays in ((0, 0), (1, 3), (2, 11), (3, 24), (4, 30))]
    together = player.rollout_values([d.copy() for d in deals], ROOT)
    alone = [player.rollout_values([d.copy()], ROOT)[0] for d in deals]
    assert together == alone
    assert len(set(together)) > 1


def test_with_a_seat_network_and_a_confidence_out_of_reach_it_plays_that_networks_move(
    seat_network: Path,
) -> None:
    stubborn = RolloutAgent(samples=3, confidence=1e9, seed=0, seat_network=str(seat_network))
    network = SeatValueAgent(network=str(seat_network))
    searched = 0
    for seed in range(6):
        for plays in (0, 6, 13):
            deal = my_turn(seed, plays)
            observation = observe_deal(deal)
            searched += len(deal.legal_mask_moves()) > 1
            assert stubborn.act(observation) == network.act(observation)
    assert searched > 10


def test_rollouts_by_a_seat_network_find_the_settebello_sweep(seat_network: Path) -> None:
    # An untrained network plays the rollouts, yet the sweep's two points show in them.
    player = RolloutAgent(samples=4, seed=0, seat_network=str(seat_network), confidence=None)
    assert player.act(observe_deal(settebello_sweep())) == parse_card("7D")


def test_whole_deals_with_a_seat_network_are_legal_and_reproducible(seat_network: Path) -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": RolloutAgent(samples=2, seed=seed, seat_network=str(seat_network)),
            "player_1": RolloutAgent(samples=2, seed=seed, infer=True),
        }
        return play_deals(players, range(2))

    assert actions(3) == actions(3)


@pytest.mark.parametrize("by_seat_network", [False, True])
def test_a_capture_picked_among_several_is_one_of_the_cards_capture(
    seat_network: Path, by_seat_network: bool
) -> None:
    # After the card, scopa_v0 asks for the capture's cards: the search is then among that
    # card's captures alone, and so is the move the rollouts would play.
    options = {"seat_network": str(seat_network)} if by_seat_network else {}
    player = RolloutAgent(samples=2, seed=0, **options)
    asked = 0
    for seed in range(40):
        for plays in (0, 5, 10, 16, 22):
            deal = my_turn(seed, plays)
            for card in deal.hands[0]:
                captures = tuple(mask_of(s) for s in deal.capture_options(card))
                if len(consistent_sets(captures, 0)) > 1:
                    observation = observe_deal(deal, pending=card)
                    assert observation["action_mask"][player.act(observation)] == 1
                    asked += 1
    assert asked >= 20


def test_bad_seat_networks_are_refused(seat_network: Path, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no seat-value network at"):
        make_agent("rollout", seat_network=str(tmp_path / "absent.pt"))
    with pytest.raises(PlayerError, match="learnt"):
        make_agent("rollout", seat_network=str(seat_network), rules="scopa_a_quindici")
