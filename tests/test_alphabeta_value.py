"""Minimax on sampled deals with ``DealValue`` at the leaves: with no value it is alpha-beta's
search, a leaf is the value signed for seat 0 blended with material, a position worked out by
hand, legal and reproducible play, bad options."""

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
    opening,
    opening_trail,
    play_deals,
    settebello_sweep,
)

from agents import AlphaBetaAgent, ValueAlphaBetaAgent, make_agent
from agents.alphabeta import AlphaBeta
from agents.deal_value import SHIPPED, DealValue
from agents.greedy import MoveValuer
from agents.guided import Root
from agents.inference import OpponentModel
from agents.seats import SeatView
from scopa_env.cards import mask_of, parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.errors import CheckpointError, PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


def views() -> list[SeatView]:
    """Seat 0's views of mid-deal positions with a choice, the stock still holding cards."""
    out = []
    for seed in range(4):
        for plays in (0, 6, 13, 20):
            obs = observe_deal(my_turn(seed, plays))
            info = InfoState.from_observation(obs["observation"])
            if obs["action_mask"].sum() > 1 and info.stock_size:
                out.append(SeatView.from_info(info, obs["observation"]))
    return out


def both_movers(seed: int) -> tuple[InfoState, list[Deal]]:
    """Seat 0's view of a mid-deal position, and two leaves: that position (seat 0 to move)
    and the one after its first legal move (seat 1 to move)."""
    deal = my_turn(seed, 6)
    info = InfoState.from_observation(observe_deal(deal)["observation"])
    positions = [deal.copy()]
    deal.play(deal.legal_moves()[0])
    positions.append(deal)
    assert [p.current_player for p in positions] == [0, 1]
    return info, positions


def test_without_the_value_it_is_alphabetas_search_total_for_total() -> None:
    """``blend=0`` leaves the material balance alone: expanding every line and reducing it by
    minimax must give alpha-beta's totals on the same sampled deals."""
    rows = views()
    assert len(rows) > 8
    for view in rows:
        moves = view.info.legal_moves(Rules())
        lines = ValueAlphaBetaAgent(samples=6, blend=0.0, seed=2)
        pruned = AlphaBetaAgent(samples=6, depth=3, seed=2)
        assert lines.move_values(view, moves) == pruned.move_values(view, moves)


def test_with_infer_it_searches_alphabetas_inferred_samples() -> None:
    """The opponent led by trailing 2B onto 7S 5C 3S JB: with ``infer`` the deals searched are
    those ``alphabeta:infer=True`` draws, each counted as often as it was drawn, so without
    the value the totals are its totals."""
    deal, _ = opening_trail()
    observation = observe_deal(deal)
    info = InfoState.from_observation(observation["observation"])
    view = SeatView.from_info(info, observation["observation"])
    moves = info.legal_moves(Rules())
    totals = []
    for player in (
        ValueAlphaBetaAgent(samples=16, blend=0.0, infer=True, seed=4),
        AlphaBetaAgent(samples=16, depth=3, infer=True, seed=4),
        AlphaBetaAgent(samples=16, depth=3, seed=4),
    ):
        player.observe(info)
        totals.append(player.move_values(view, moves))
    inferred, alphabeta_inferred, uniform = totals
    assert inferred == alphabeta_inferred
    assert inferred != uniform


def test_a_network_belief_weighs_the_hands_by_the_networks_likelihood_of_the_plays() -> None:
    """The opponent led by trailing 2B onto 7S 5C 3S JB: a hand with 7D, which could have
    taken 7S, is less likely than one that could take nothing, to the network as to the
    model; the power tempers the network's log-likelihoods, and without the plays in its
    history the player falls back on the model."""
    deal, _ = opening_trail()
    info = InfoState.from_observation(observe_deal(deal)["observation"])
    hands = [mask_of(parse_cards(cards)) for cards in ("7D QC", "QC 4B")]
    logs = {}
    for power in (1.0, 0.25):
        player = ValueAlphaBetaAgent(samples=4, infer=True, network_belief=power, seed=0)
        player.observe(info)
        plays = player.tracker.this_round(info)
        assert [play.card for play in plays] == [parse_card("2B")]
        logs[power] = player.hand_log_likelihoods(hands, plays)
        player.history.clear()
        model = player.model
        fallback = [model.log_likelihood(hand, plays) for hand in hands]
        assert player.hand_log_likelihoods(hands, plays).tolist() == fallback
    with_seven, without = logs[1.0]
    assert with_seven < without
    assert logs[0.25] == pytest.approx(0.25 * logs[1.0])


def test_a_belief_network_reads_the_plays_in_the_shipped_networks_place() -> None:
    from agents.guided import LeafValuer, load_network

    deal, _ = opening_trail()
    info = InfoState.from_observation(observe_deal(deal)["observation"])
    hands = [mask_of(parse_cards(cards)) for cards in ("7D QC", "QC 4B")]
    shipped, other = (
        ValueAlphaBetaAgent(samples=4, network_belief=0.5, belief_network=name, seed=0)
        for name in ("pretrained_v5", "pretrained_v4")
    )
    logs = []
    for player in (shipped, other):
        player.observe(info)
        logs.append(player.hand_log_likelihoods(hands, player.tracker.this_round(info)))
    v4 = LeafValuer(load_network("pretrained_v4")[1])
    assert logs[1] == pytest.approx(0.5 * other.history.log_likelihoods(hands, v4))
    assert not np.allclose(logs[0], logs[1])
    assert other.network is None  # the shipped network is not loaded where nothing reads it


def test_model_replies_weigh_each_reply_by_the_opponent_models_probability() -> None:
    """With a model that plays uniformly at random every reply weighs alike: the totals are
    those of a softmin hot enough to weigh them alike too. The real model changes them."""
    rows = views()
    uniform = OpponentModel(Rules(), MoveValuer(Rules()), uniform=1.0)
    changed = False
    for view in rows:
        moves = view.info.legal_moves(Rules())
        modelled = ValueAlphaBetaAgent(samples=4, replies="model", seed=2)
        modelled.model = uniform
        hot = ValueAlphaBetaAgent(samples=4, softmin=1e9, seed=2)
        assert modelled.move_values(view, moves) == hot.move_values(view, moves)
        greedy = ValueAlphaBetaAgent(samples=4, replies="model", seed=2)
        changed |= greedy.move_values(view, moves) != hot.move_values(view, moves)
    assert changed


def test_infoset_totals_are_at_most_the_per_sample_ones() -> None:
    """Choosing my move after each reply once for every sample can only lose the value a
    per-sample choice gets from seeing the opponent's hand; with one sample nothing is lost.
    Somewhere it is lost: the option changes the totals."""
    lower = False
    for view in views():
        moves = view.info.legal_moves(Rules())
        fused = ValueAlphaBetaAgent(samples=6, seed=2).move_values(view, moves)
        shared = ValueAlphaBetaAgent(samples=6, seed=2, infoset=True).move_values(view, moves)
        assert all(s <= f for s, f in zip(shared, fused, strict=True))
        lower |= shared != fused
        one = ValueAlphaBetaAgent(samples=1, seed=2, infoset=True).move_values(view, moves)
        assert one == ValueAlphaBetaAgent(samples=1, seed=2).move_values(view, moves)
    assert lower


def test_policy_replies_weigh_the_opponents_cards_by_the_network() -> None:
    """Each card of the opponent's, at its best capture, weighs by the network's probability
    of it: a reply is worth no less to me than the opponent's best, so on the same samples
    every total is at least minimax's, and somewhere more."""
    higher = False
    for view in views():
        moves = view.info.legal_moves(Rules())
        best = ValueAlphaBetaAgent(samples=4, seed=2).move_values(view, moves)
        policy = ValueAlphaBetaAgent(samples=4, replies="policy", seed=2)
        weighed = policy.move_values(view, moves)
        assert all(w >= b for w, b in zip(weighed, best, strict=True))
        higher |= weighed != best
    assert higher


def test_blind_replies_are_worth_no_less_to_me_than_the_opponents_best() -> None:
    """In each sample the reply the opponent picks without seeing my hand is one of its
    replies, so it leaves me no less than its best (the samples are drawn before the guesses,
    the same with the option and without); somewhere it leaves me more."""
    higher = False
    for view in views():
        moves = view.info.legal_moves(Rules())
        best = ValueAlphaBetaAgent(samples=4, seed=2).move_values(view, moves)
        blind = ValueAlphaBetaAgent(samples=4, replies="blind", blind_hands=3, seed=2)
        weighed = blind.move_values(view, moves)
        assert all(w >= b for w, b in zip(weighed, best, strict=True))
        higher |= weighed != best
    assert higher


def test_infoset_with_blind_replies_is_at_most_the_per_sample_choice() -> None:
    """With the opponent's blind picks fixed by the same guesses, one move of mine after each
    reply for every sample is worth at most a move per sample, and somewhere less."""
    lower = False
    for view in views():
        moves = view.info.legal_moves(Rules())
        options = {"samples": 6, "replies": "blind", "blind_hands": 2, "seed": 2}
        fused = ValueAlphaBetaAgent(**options).move_values(view, moves)
        shared = ValueAlphaBetaAgent(infoset=True, **options).move_values(view, moves)
        assert all(s <= f for s, f in zip(shared, fused, strict=True))
        lower |= shared != fused
    assert lower


def test_policy_logits_are_the_networks_for_the_opponent_in_the_reply_rows_alone() -> None:
    """The rows the replies read hold the network's logits of the opponent's observation of
    the position (its hand, not mine), and no value (NaN: never read); the other rows hold
    ``DealValue``'s values as without replies."""
    player = ValueAlphaBetaAgent(samples=4, replies="policy", seed=0)
    assert player.network is not None
    info, positions = both_movers(1)
    values, logits = player.leaf_values(positions, info, positions, [1])
    expected = player.network.evaluate([positions[1]], Root.of(info, positions[0].dealer))[1]
    assert logits.shape == (2, 80)
    assert logits[1] == pytest.approx(expected[0])
    assert not logits[0].any()
    assert np.isnan(values[1])
    assert values[0] == pytest.approx(player.leaf_values(positions, info, positions)[0][0])


def test_a_leaf_is_the_value_for_seat_0() -> None:
    """``DealValue`` values a position for its seat to move; the search wants seat 0's."""
    player = ValueAlphaBetaAgent(seed=0)
    net = DealValue.load(SHIPPED)
    positions = []
    for plays in (3, 10, 17):  # cards left in the stock
        deal = my_turn(1, plays)
        positions.append(deal.copy())
        deal.play(deal.legal_moves()[0])
        positions.append(deal)
    movers = [deal.current_player for deal in positions]
    assert 0 in movers and 1 in movers
    info = InfoState.from_observation(observe_deal(positions[0])["observation"])
    values, _ = player.leaf_values(positions, info, positions)
    expected = [net(deal) if deal.current_player == 0 else -net(deal) for deal in positions]
    assert values == pytest.approx(expected)


def test_a_leaf_whose_mover_can_sweep_is_worth_the_better_for_it_of_the_leaf_and_the_sweep() -> (
    None
):
    player = ValueAlphaBetaAgent(seed=0, sweeps=True)
    exact = AlphaBeta(player.rules, player.valuer)
    mine, theirs, neither = settebello_sweep(0), settebello_sweep(1), opening()  # no sweep
    ended = last_round("5B 6B", "4C AB", "3C 2S", SEVENS_AND_COINS)  # 5B sweeps: no stock
    info = InfoState.from_observation(observe_deal(mine)["observation"])

    def swept(deal: Deal, card: str) -> float:
        child = deal.copy()
        child.play_unchecked(parse_card(card), deal.masks["table"])
        learnt = player.leaf_values([child], info, [deal])[0]
        return float(player.blended(learnt, [child], exact)[0])

    positions = [mine, theirs, neither, ended, mine, theirs, mine]
    standing = np.array([-9.0, 9.0, 1.0, -9.0, 9.0, -9.0, np.nan])
    out = player.with_sweeps(positions, standing, info, [mine], exact)
    # Seat 0 sweeps where standing is worse for it; the opponent where it is worse for the
    # opponent; a leaf without a sweep, one in the last round (solved exactly elsewhere) and a
    # row the search never reads keep theirs.
    assert out[:6] == pytest.approx([swept(mine, "7D"), swept(theirs, "7D"), 1.0, -9.0, 9.0, -9.0])
    assert np.isnan(out[6]) and np.isnan(standing[6])
    assert -9.0 < swept(mine, "7D") < 9.0 and -9.0 < swept(theirs, "7D") < 9.0
    assert all(m[1] != neither.masks["table"] for m in neither.legal_mask_moves())


def test_with_sweeps_the_search_plays_legal_whole_deals() -> None:
    players = {
        "player_0": ValueAlphaBetaAgent(samples=4, seed=1, sweeps=True),
        "player_1": ValueAlphaBetaAgent(samples=4, seed=1),
    }
    assert play_deals(players, range(2))


def test_mover_view_mixes_the_value_heads_judgement_into_each_leaf() -> None:
    """``mover_view`` of a leaf's learnt value is the network's value head, reading the leaf as its
    seat to move observes it (signed for seat 0), the rest ``DealValue``'s."""
    plain = ValueAlphaBetaAgent(seed=0)
    mixed = ValueAlphaBetaAgent(mover_view=0.25, seed=0)
    assert plain.network is None and mixed.network is not None
    info, positions = both_movers(2)
    heads = mixed.network.values(positions, Root.of(info, positions[0].dealer))
    alone = plain.leaf_values(positions, info, positions)[0]
    values = mixed.leaf_values(positions, info, positions)[0]
    assert values == pytest.approx(0.75 * alone + 0.25 * heads)
    assert not np.allclose(heads, alone)


def test_a_blind_view_value_judges_each_leaf_from_its_movers_view(tmp_path) -> None:
    """With ``view_value`` a blind ``DealValue`` is the judge of the mover's view: its value
    of the leaf's row (the other hand unread), signed for seat 0."""
    blind = tmp_path / "blind.npz"
    np.savez(blind, **{**DealValue.load(SHIPPED).arrays, "blind": np.asarray(1)})
    plain = ValueAlphaBetaAgent(seed=0)
    mixed = ValueAlphaBetaAgent(mover_view=0.4, view_value=str(blind), seed=0)
    assert mixed.network is None
    info, positions = both_movers(2)
    seen = DealValue.load(blind)
    expected = [seen(p) if p.current_player == 0 else -seen(p) for p in positions]
    alone = plain.leaf_values(positions, info, positions)[0]
    values = mixed.leaf_values(positions, info, positions)[0]
    assert values == pytest.approx(0.6 * alone + 0.4 * np.array(expected))
    with pytest.raises(PlayerError, match="reads both hands"):
        make_agent("alphabeta_value", mover_view=0.4, view_value=str(SHIPPED))


def test_the_value_changes_some_choices() -> None:
    plain = ValueAlphaBetaAgent(samples=8, blend=0.0, seed=3)
    valued = ValueAlphaBetaAgent(samples=8, blend=1.0, seed=3)
    rows = [observe_deal(my_turn(seed, plays)) for seed in range(5) for plays in (0, 6, 13)]
    assert any(valued.act(row) != plain.act(row) for row in rows)


def prior_rows() -> list[dict[str, np.ndarray]]:
    """Seat 0's observations with a choice of cards before the last round."""
    rows = [observe_deal(my_turn(seed, plays)) for seed in range(5) for plays in (0, 6, 13, 20)]
    return [
        row
        for row in rows
        if row["action_mask"].sum() > 1
        and InfoState.from_observation(row["observation"]).stock_size
    ]


def test_no_prior_is_the_search_and_one_out_of_reach_plays_the_networks_card() -> None:
    network = make_agent("pretrained_v5")
    rows = prior_rows()
    assert len(rows) > 8
    changed = 0
    for row in rows:
        plain = ValueAlphaBetaAgent(samples=4, seed=3).act(row)
        assert ValueAlphaBetaAgent(samples=4, prior_weight=0.0, seed=3).act(row) == plain
        stubborn = ValueAlphaBetaAgent(samples=4, prior_weight=1e6, seed=3).act(row)
        assert stubborn == network.act(row)
        changed += stubborn != plain
    assert changed  # the prior overrides some of the search's choices


def test_the_prior_credits_each_move_its_cards_log_probability_per_sample() -> None:
    """Each move's total gains ``prior_weight`` points per nat of the network's probability of
    its card among the cards in hand, in each of the samples the total sums."""
    row = prior_rows()[0]
    info = InfoState.from_observation(row["observation"])
    view = SeatView.from_info(info, row["observation"])
    moves = info.legal_moves(Rules())
    plain = ValueAlphaBetaAgent(samples=6, seed=2).move_values(view, moves)
    player = ValueAlphaBetaAgent(samples=6, prior_weight=0.25, seed=2)
    player._observation = row["observation"]
    credited = player.move_values(view, moves)
    assert player.network is not None
    logits = player.network.logits(row["observation"][None])[0].astype(np.float64)
    cards = np.flatnonzero(row["action_mask"])
    log_p = logits - np.log(np.exp(logits[cards]).sum())
    for (card, _), before, after in zip(moves, plain, credited, strict=True):
        assert after - before == round(100 * 6 * 0.25 * log_p[card])


def test_the_last_round_is_solved_without_the_prior() -> None:
    """Where the network's card is not the solver's, the solver's is played all the same."""
    network = make_agent("pretrained_v5")
    for seed in (5, 6, 7):
        row = observe_deal(my_turn(seed, 30))
        assert not InfoState.from_observation(row["observation"]).stock_size
        solved = ValueAlphaBetaAgent(seed=0).act(row)
        assert network.act(row) != solved
        assert ValueAlphaBetaAgent(prior_weight=1e6, seed=0).act(row) == solved


def test_the_seat_network_mixes_into_each_moves_mean_over_the_samples() -> None:
    """A move's total is ``(1 - w)`` of the search's plus ``w`` of the network's value of the
    position it leaves, in the totals' units (hundredths of a point over 6 samples)."""
    from agents.seat_value import SeatValue, seat_rows

    row = prior_rows()[0]
    info = InfoState.from_observation(row["observation"])
    view = SeatView.from_info(info, row["observation"])
    moves, rows = seat_rows(info, row["observation"], Rules())
    plain = ValueAlphaBetaAgent(samples=6, seed=2).move_values(view, moves)
    mixed = ValueAlphaBetaAgent(samples=6, seat_weight=0.3, seed=2).move_values(view, moves)
    network = SeatValue.load_for(None, Rules()).values(np.array(rows, np.int64))
    for before, after, value in zip(plain, mixed, network, strict=True):
        assert after == round(0.7 * before + 0.3 * 100 * 6 * value)


def test_the_seat_network_alone_plays_seat_values_move_and_the_last_round_is_solved() -> None:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        ValueAlphaBetaAgent(samples=4, seat_weight=0.5, seed=3)
        assert torch.get_num_threads() == 1  # a second thread only spins beside the search
    finally:
        torch.set_num_threads(threads)
    seat_value = make_agent("seat_value")
    changed = 0
    for row in prior_rows():
        plain = ValueAlphaBetaAgent(samples=4, seed=3).act(row)
        network = ValueAlphaBetaAgent(samples=4, seat_weight=1.0, seed=3).act(row)
        assert network == seat_value.act(row)
        changed += network != plain
    assert changed
    for seed in (5, 6, 7):
        row = observe_deal(my_turn(seed, 30))
        solved = ValueAlphaBetaAgent(seed=0).act(row)
        assert ValueAlphaBetaAgent(seat_weight=1.0, seed=0).act(row) == solved


def test_mid_deal_sweeps_the_table_with_the_settebello() -> None:
    # 7D takes 3S+4S: the sweep and the settebello; KB or 2C would leave the table to take.
    for blend in (0.5, 1.0):
        player = ValueAlphaBetaAgent(samples=16, blend=blend, seed=0)
        assert player.act(observe_deal(settebello_sweep())) == parse_card("7D")


def test_the_last_round_is_solved_exactly() -> None:
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    # 5B takes 3C+2S, a scopa; nothing scores after it (AB can only trail, the last play
    # never scores a scopa): 4 + 1 points to 0. Trailing AB leaves 3+2+1 for 6S to sweep.
    player = ValueAlphaBetaAgent(blend=1.0, seed=0)
    assert player.act(observe_deal(deal)) == parse_card("5B")


def test_whole_deals_are_legal_and_reproducible_from_the_seed() -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": ValueAlphaBetaAgent(samples=8, replies="model", seed=seed),
            "player_1": ValueAlphaBetaAgent(
                samples=4,
                blend=1.0,
                infer=True,
                network_belief=0.14,
                replies="blind",
                blind_hands=2,
                seed=seed + 1,
            ),
        }
        return play_deals(players, range(2))

    assert actions(5) == actions(5)


def test_refuses_other_tables() -> None:
    with pytest.raises(PlayerError, match="two-player Scopa"):
        ValueAlphaBetaAgent(samples=4, seed=0).act(choice_at("scopa_4"))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"samples": 0}, PlayerError, "samples"),
        ({"infer": True, "samples": 8, "candidates": 4}, PlayerError, "candidates"),
        ({"blend": 1.5}, PlayerError, "blend"),
        ({"late_depth": 0}, PlayerError, "late_depth"),
        ({"mover_view": -0.1}, PlayerError, "mover_view"),
        ({"prior_weight": -0.1}, PlayerError, "prior_weight"),
        ({"seat_weight": 1.5}, PlayerError, "seat_weight"),
        ({"seat_weight": 0.5, "seat_network": "no/such.pt"}, CheckpointError, "no/such.pt"),
        ({"softmin": -0.5}, PlayerError, "softmin"),
        ({"replies": "best"}, PlayerError, "'best'"),
        ({"replies": "blind", "blind_hands": 0}, PlayerError, "blind_hands"),
        ({"replies": "policy", "softmin": 1.0}, PlayerError, "softmin"),
        ({"infoset": True, "replies": "policy"}, PlayerError, "infoset"),
        ({"replies": "model", "softmin": 1.0}, PlayerError, "softmin"),
        ({"infer": False, "network_belief": 0.5}, PlayerError, "infer=True"),
        ({"infoset": True, "softmin": 1.0}, PlayerError, "infoset"),
        ({"infoset": True, "replies": "model"}, PlayerError, "infoset"),
        ({"infer": True, "network_belief": -1.0}, PlayerError, "network_belief"),
        ({"belief_network": "pretrained_v4"}, PlayerError, "give network_belief too"),
        ({"blend": "half"}, PlayerError, "'half'"),
        ({"value": "no/such/value.npz"}, CheckpointError, "no/such/value.npz"),
        ({"bogus": 1}, PlayerError, "bogus"),
    ],
)
def test_bad_options_are_refused(options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_agent("alphabeta_value", **options)


def test_plays_a_whole_match_in_scopa_play() -> None:
    assert_plays_a_match(make_agent("alphabeta_value", seed=0, samples=8))


def test_a_batch_of_unrelated_rows_is_each_rows_own_choice() -> None:
    rows = [observe_deal(my_turn(seed, plays)) for seed in range(3) for plays in (0, 9)]
    one_by_one = ValueAlphaBetaAgent(samples=4, seed=1)
    expected = [one_by_one.act(row) for row in rows]
    batched = ValueAlphaBetaAgent(samples=4, seed=1).act_batch(
        np.stack([row["observation"] for row in rows]),
        np.stack([row["action_mask"] for row in rows]),
    )
    assert batched.tolist() == expected
    assert all(row["action_mask"][a] for row, a in zip(rows, expected, strict=True))


def test_late_depth_searches_deeper_once_the_hand_is_no_longer_whole() -> None:
    """With ``blend=0`` a decision's totals are alpha-beta's at ``depth`` while my hand holds
    the three cards dealt, and at ``late_depth`` after my first play of the round."""
    rows = views()
    hand_sizes = {view.info.hand.bit_count() for view in rows}
    assert 3 in hand_sizes and hand_sizes & {1, 2}
    for view in rows:
        moves = view.info.legal_moves(Rules())
        lines = ValueAlphaBetaAgent(samples=4, blend=0.0, late_depth=5, seed=2)
        plies = 3 if view.info.hand.bit_count() == 3 else 5
        pruned = AlphaBetaAgent(samples=4, depth=plies, seed=2)
        assert lines.move_values(view, moves) == pruned.move_values(view, moves)
