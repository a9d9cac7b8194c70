"""The oracle: ``alphabeta_value``'s search on the deal the harness shows it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import observe_deal, opening_trail, played_to, settebello_sweep

from agents import OracleAgent, make_agent
from agents.determinize import Determinizer
from agents.seats import SeatView
from evaluation.harness import play_game
from scopa_env import scopa_v0
from scopa_env.cards import parse_cards
from scopa_env.engine import Deal
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState


def sweep_trap(theirs: str) -> Deal:
    """First round, I hold 2C and 6C onto the 3S alone, the opponent ``theirs``: trailing 2C
    leaves 3+2 for a five to sweep, trailing 6C leaves 3+6 for a nine (QB)."""
    mine, table = parse_cards("2C 6C"), parse_cards("3S")
    piles = (parse_cards("KD KC"), parse_cards("JB 7S AS"))
    placed = {*mine, *parse_cards(theirs), *table, *piles[0], *piles[1]}
    return Deal.from_position(
        hands=(mine, parse_cards(theirs)),
        table=table,
        stock=[c for c in range(40) if c not in placed],
        captures=piles,
        current_player=0,
        first_player=0,
        last_capturer=1,
    )


@pytest.mark.parametrize("hidden", ["all", "hand"])
def test_the_oracle_keeps_the_card_the_opponents_hand_would_sweep_with(hidden: str) -> None:
    """Both positions look the same from my seat; only the opponent's hand tells which trail
    it can sweep, and the oracle, shown it, trails the other card."""
    for theirs, safe in (("5B AB", "6C"), ("QB AB", "2C")):
        deal = sweep_trap(theirs)
        oracle = OracleAgent(hidden=hidden, seed=0)
        oracle.show(deal)
        assert oracle.act(observe_deal(deal)) == parse_cards(safe)[0], theirs
    five, nine = (observe_deal(sweep_trap(theirs))["observation"] for theirs in ("5B AB", "QB AB"))
    assert np.array_equal(five, nine)


def _searched(oracle: OracleAgent, deal: Deal) -> list[Deal]:
    observation = observe_deal(deal)["observation"]
    info = InfoState.from_observation(observation)
    determinizer = Determinizer(SeatView.from_info(info, observation), oracle.rules)
    oracle.show(deal)
    return [searched for searched, _ in oracle.sampled_deals(determinizer, info)]


def test_all_searches_the_one_true_deal_and_hand_the_true_hands_with_the_stock_shuffled() -> None:
    deal = played_to(3, 8)
    me = deal.current_player
    (true,) = _searched(OracleAgent(hidden="all"), deal)
    assert true.hands == (deal.hands[me], deal.hands[1 - me])  # the searcher is seat 0
    assert true.stock == deal.stock and true.table == deal.table
    shuffled = _searched(OracleAgent(hidden="hand", samples=8, seed=1), deal)
    assert len(shuffled) == 8
    assert all(d.hands == true.hands and sorted(d.stock) == sorted(deal.stock) for d in shuffled)
    assert len({d.stock for d in shuffled}) > 1


def test_in_the_harness_it_is_shown_each_deal_and_plays_it_through() -> None:
    env = scopa_v0.raw_env(episode="deal", reward="points")
    oracle = make_agent("oracle")
    seconds, plays = play_game(env, [oracle, make_agent("greedy")], [0, 1], {})
    assert env.terminations[env.agent_selection] and plays == [18, 18]


def test_it_refuses_to_play_from_an_observation_alone() -> None:
    deal = sweep_trap("5B AB")
    oracle = OracleAgent()
    with pytest.raises(PlayerError, match="shows it"):
        oracle.act(observe_deal(deal))
    oracle.show(deal)
    oracle.act(observe_deal(deal))
    with pytest.raises(PlayerError, match="shows it"):  # shown once, for one move
        oracle.act(observe_deal(deal))


def test_an_unknown_hidden_or_reveal_is_refused_by_name() -> None:
    with pytest.raises(PlayerError, match="hidden is one of"):
        make_agent("oracle", hidden="stock")
    with pytest.raises(PlayerError, match="reveal is one of"):
        make_agent("oracle", reveal="sometimes")


@pytest.mark.parametrize("reveal", ["after_its_play", "before_its_play"])
def test_reveal_shows_the_hand_only_after_or_before_the_opponents_play_this_round(
    reveal: str,
) -> None:
    """After the opponent leads the round by trailing 2B, and at a decision of mine before it
    plays this round: where the reveal applies the searched deals hold its true hand, elsewhere
    they are drawn (with more unseen cards than its hand, some differ)."""
    for position, after_play in ((opening_trail()[0], True), (settebello_sweep(), False)):
        assert position.current_player == 0
        oracle = OracleAgent(hidden="hand", samples=8, seed=1, reveal=reveal)
        hands = {searched.hands[1] for searched in _searched(oracle, position)}
        if after_play == (reveal == "after_its_play"):
            assert hands == {position.hands[1]}
        else:
            assert len(hands) > 1
