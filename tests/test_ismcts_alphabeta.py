"""ISMCTS with ``alphabeta_value``'s values added at the root: without them it is ISMCTS move
for move, with them weighed heavily it plays ``alphabeta_value``'s best move, the last round is
solved exactly, legal and reproducible play, bad options and tables refused."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    SEVENS_AND_COINS,
    assert_plays_a_match,
    choice_at,
    last_round,
    my_turn,
    observe_deal,
    play_deals,
)

from agents import AlphaBetaISMCTSAgent, ISMCTSAgent, ValueAlphaBetaAgent, make_agent
from agents.ismcts_alphabeta import _lines_seed
from agents.seats import SeatView
from scopa_env.cards import parse_card
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


def rows() -> list[dict[str, np.ndarray]]:
    """Seat 0's observations of mid-deal positions with a choice, the stock still holding
    cards (so not the last round)."""
    out = []
    for seed in range(3):
        for plays in (0, 8, 16):
            obs = observe_deal(my_turn(seed, plays))
            info = InfoState.from_observation(obs["observation"])
            if obs["action_mask"].sum() > 1 and info.stock_size:
                out.append(obs)
    return out


def test_without_the_values_it_is_ismcts_move_for_move() -> None:
    positions = rows()
    assert len(positions) >= 6
    for obs in positions:
        hybrid = AlphaBetaISMCTSAgent(iterations=60, mix=0.0, samples=4, seed=5)
        assert hybrid.act(obs) == ISMCTSAgent(iterations=60, seed=5).act(obs)


def test_weighed_heavily_the_values_choose_the_move() -> None:
    """With ``mix`` huge, ISMCTS's means cannot reorder the moves: the choice is the move
    ``alphabeta_value`` values best, on the deals it samples with the hybrid's inner seed."""
    checked = 0
    for obs in rows():
        info = InfoState.from_observation(obs["observation"])
        moves = info.legal_moves(Rules())
        lines = ValueAlphaBetaAgent(samples=4, seed=_lines_seed(5))
        totals = lines.move_values(SeatView.from_info(info, obs["observation"]), moves)
        if sorted(totals)[-1] == sorted(totals)[-2]:
            continue  # a tie: either move is its best
        best = moves[int(np.argmax(totals))]
        hybrid = AlphaBetaISMCTSAgent(iterations=60, mix=1e6, samples=4, seed=5)
        assert hybrid.act(obs) == info.action(best)
        checked += 1
    assert checked >= 3


def test_the_last_round_is_solved_exactly_without_ismcts(monkeypatch) -> None:
    def no_search(*args: object) -> None:
        raise AssertionError("ISMCTS searched the last round")

    monkeypatch.setattr(ISMCTSAgent, "search", no_search)
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    # 5B takes 3C+2S, a scopa; nothing scores after it (AB can only trail, the last play
    # never scores a scopa): 4 + 1 points to 0. Trailing AB leaves 3+2+1 for 6S to sweep.
    player = AlphaBetaISMCTSAgent(iterations=1, mix=0.0, seed=0)
    assert player.act(observe_deal(deal)) == parse_card("5B")
    with pytest.raises(AssertionError, match="searched"):  # and before it, ISMCTS searches
        player.act(rows()[0])


def test_whole_deals_are_legal_and_reproducible_from_the_seed() -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": AlphaBetaISMCTSAgent(iterations=40, samples=4, seed=seed),
            "player_1": AlphaBetaISMCTSAgent(iterations=40, samples=4, mix=3.0, seed=seed + 1),
        }
        return play_deals(players, range(seed, seed + 2))

    assert actions(3) == actions(3)


def test_a_batch_of_unrelated_rows_is_each_rows_own_choice() -> None:
    positions = rows()[:4]
    one_by_one = AlphaBetaISMCTSAgent(iterations=40, samples=4, seed=1)
    expected = [one_by_one.act(row) for row in positions]
    batched = AlphaBetaISMCTSAgent(iterations=40, samples=4, seed=1).act_batch(
        np.stack([row["observation"] for row in positions]),
        np.stack([row["action_mask"] for row in positions]),
    )
    assert batched.tolist() == expected


def test_plays_a_whole_match_in_scopa_play() -> None:
    assert_plays_a_match(make_agent("ismcts_alphabeta", seed=0, iterations=40, samples=4))


def test_other_tables_are_refused() -> None:
    with pytest.raises(PlayerError, match="two-player"):
        AlphaBetaISMCTSAgent(iterations=10, samples=4, seed=0).act(choice_at("scopa_4"))


@pytest.mark.parametrize(
    ("options", "match"),
    [({"mix": -1.0}, "mix"), ({"samples": 0}, "samples"), ({"iterations": 0}, "iterations")],
)
def test_bad_options_are_refused(options: dict, match: str) -> None:
    with pytest.raises(PlayerError, match=match):
        make_agent("ismcts_alphabeta", **options)
