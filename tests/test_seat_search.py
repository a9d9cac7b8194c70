"""The search of one reply over the seat-value network (``agents.seat_search``), on hand-built
positions with a stand-in network whose values can be worked out by hand, and with the shipped
network on whole deals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_plays_a_match, card_mask, observe_deal, play_deals
from conftest import settebello_sweep as sweep_position

from agents import GreedyAgent, SeatSearchAgent, SeatValueAgent, make_agent
from agents.determinize import Determinizer
from agents.seat_value import afterstate_row, seat_rows
from agents.seats import SeatView
from scopa_env.cards import parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


class Material:
    """A stand-in network: the mover's pile size minus the other's, and ten a scopa of its."""

    plays = False

    def values(self, rows: np.ndarray) -> np.ndarray:
        return np.array(
            [int(r[3]).bit_count() - int(r[4]).bit_count() + 10 * r[5] for r in rows], float
        )


def test_a_reply_leaves_the_position_the_opponent_sees() -> None:
    """I trail 2C onto 3S 4S; the opponent (2D 5S JC) takes 3S+2C with 5S, 2C alone with 2D
    (a single card of the same value first), and JC can only trail."""
    deal = sweep_position()
    mine, child = afterstate_row(deal, parse_card("2C"), 0)
    assert mine[0] == card_mask("7D KB") and mine[2] == card_mask("3S 4S 2C")
    assert child.current_player == 1
    replies = dict(child.legal_mask_moves())
    assert replies == {
        parse_card("5S"): card_mask("3S 2C"),
        parse_card("2D"): card_mask("2C"),
        parse_card("JC"): 0,
    }
    row, _ = afterstate_row(child, parse_card("5S"), card_mask("3S 2C"))
    stock = (1 << 40) - 1 - card_mask("7D KB 2C 2D 5S JC 3S 4S AC AS")
    assert row == (
        card_mask("2D JC"), card_mask("7D KB") | stock, card_mask("4S"),
        card_mask("AC AS 5S 3S 2C"), 0, 0, 0, 1, 30, 2,
    )  # fmt: skip


def test_each_move_is_worth_minus_the_best_reply_averaged_over_the_sampled_deals() -> None:
    """The player's values against the same sums worked out move by move on the same deals."""
    observation = observe_deal(sweep_position())
    vector = observation["observation"]
    info = InfoState.from_observation(vector)
    player = SeatSearchAgent(seed=3, samples=5)
    player.net = Material()  # type: ignore[assignment]
    moves, afterstates = seat_rows(info, vector, Rules())
    rows, move_values = player.rows_to_value(info, vector, moves, afterstates)
    values = move_values(player.net.values(np.array(rows)))

    sampler = Determinizer(SeatView.from_info(info, vector), Rules())
    rng = np.random.default_rng(3)
    expected = np.zeros(len(moves))
    for _ in range(5):
        deal = sampler.sample(rng)
        for i, move in enumerate(moves):
            child = deal.copy()
            child.play_unchecked(*move)
            best = -np.inf
            for reply in child.legal_mask_moves():
                after = child.copy()
                after.play_unchecked(*reply)
                piles, scope = after.view()[2], after.view()[5]
                best = max(best, piles[1].bit_count() - piles[0].bit_count() + 10 * scope[1])
            expected[i] -= best / 5
    np.testing.assert_allclose(values, expected)
    # The sweep: my three cards against their two, and nothing left for any reply to take.
    assert values[[card for card, _ in moves].index(parse_card("7D"))] == pytest.approx(1.0)
    assert player.act(observation) == parse_card("7D")


def test_the_search_passes_up_a_capture_that_leaves_a_sweep() -> None:
    """Second round, the opponent led and holds two of the 26 cards I have not seen; I hold
    QD 7D AB before KS 3B 4C 2S, my pile 4 cards, theirs 3. By the stand-in's values:

    - QD takes 2S+3B+4C: 8 against 3, but KS is left alone. With one of the three kings left
      (22% of the hands) the opponent sweeps it: 5 - 8 + 10 = +7 for it, else it trails (-5).
      Worth 0.22 * -7 + 0.78 * 5 = +2.4 to me.
    - 7D takes 3B+4C: 7 against 3, leaving KS 2S, which no one card sweeps (12). With a king or
      a two (41% of the hands) it takes one card (-2 for it), else it trails (-4): +3.2 to me.
    - AB trails and leaves it five cards to take from: less.

    Afterstates alone rank QD first (most cards); one reply deeper ranks 7D first.
    """
    hands = (parse_cards("QD 7D AB"), parse_cards("2B 3D"))
    table = parse_cards("KS 3B 4C 2S")
    mine, theirs = parse_cards("7C 7B 6S 6C"), parse_cards("JS QS JC")
    dealt = {*hands[0], *hands[1], *table, *mine, *theirs}
    deal = Deal.from_position(
        hands=hands,
        table=table,
        stock=[c for c in range(40) if c not in dealt],
        captures=(mine, theirs),
        current_player=0,
        first_player=1,
        last_capturer=1,
    )
    observation = observe_deal(deal)
    search = SeatSearchAgent(seed=0, samples=1000)
    search.net = Material()  # type: ignore[assignment]
    vector = observation["observation"]
    info = InfoState.from_observation(vector)
    moves, afterstates = seat_rows(info, vector, Rules())
    rows, move_values = search.rows_to_value(info, vector, moves, afterstates)
    values = dict(zip(moves, move_values(search.net.values(np.array(rows))), strict=True))
    queen, seven = (parse_card("QD"), card_mask("2S 3B 4C")), (parse_card("7D"), card_mask("3B 4C"))
    assert values[queen] == pytest.approx(2.36, abs=0.4)
    assert values[seven] == pytest.approx(3.17, abs=0.2)
    assert search.act(observation) == parse_card("7D")
    one_ply = SeatValueAgent()
    one_ply.net = Material()  # type: ignore[assignment]
    assert one_ply.act(observation) == parse_card("QD")


def test_a_move_that_ends_the_round_is_valued_as_seat_value_values_it() -> None:
    """The opponent has played its last card: no reply, the afterstates as they are."""
    hands, table = (parse_cards("5D"), ()), parse_cards("3S 2C 4S AB")
    theirs = parse_cards("7C 7B 7S 6C 6B")
    deal = Deal.from_position(
        hands=hands,
        table=table,
        stock=[c for c in range(40) if c not in {*hands[0], *table, *theirs}],
        captures=((), theirs),
        current_player=0,
        first_player=1,
        last_capturer=1,
    )
    observation = observe_deal(deal)
    vector = observation["observation"]
    info = InfoState.from_observation(vector)
    moves, afterstates = seat_rows(info, vector, Rules())
    assert len(moves) == 2  # 3S+2C or 4S+AB
    search = SeatSearchAgent(seed=0)
    rows, move_values = search.rows_to_value(info, vector, moves, afterstates)
    assert rows == afterstates
    np.testing.assert_array_equal(move_values(np.array([0.5, -1.0])), [0.5, -1.0])
    assert search.act(observation) == SeatValueAgent().act(observation)


def test_whole_deals_are_legal_and_a_batch_plays_as_one_by_one() -> None:
    search = make_agent("seat_search", seed=0, samples=3)
    actions = play_deals({"player_0": search, "player_1": GreedyAgent()}, range(3))
    assert actions
    observations = []
    from scopa_env import scopa_v0

    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=5)
    while not env.terminations[env.agent_selection]:
        observation = env.observe(env.agent_selection)
        observations.append(observation)
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    one = SeatSearchAgent(seed=7, samples=3)
    alone = [one.act(o) for o in observations]
    batch = SeatSearchAgent(seed=7, samples=3)
    together = batch.act_batch(
        np.stack([o["observation"] for o in observations]),
        np.stack([o["action_mask"] for o in observations]),
    )
    assert together.tolist() == alone
    assert_plays_a_match(SeatSearchAgent(seed=1, samples=2))


def test_bad_options_are_refused() -> None:
    with pytest.raises(PlayerError, match="samples >= 1, got 0"):
        SeatSearchAgent(samples=0)
    with pytest.raises(PlayerError, match="'seat_search' has no option 'depth'"):
        make_agent("seat_search", depth=2)
