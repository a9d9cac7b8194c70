"""The network-guided search player: legal play, its exact endgame on a position solved by
hand, reproducibility, the batched leaf values against the network's one by one, bad options."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    SEVENS_AND_COINS,
    assert_plays_a_match,
    encode_deal,
    last_round,
    observe_deal,
    play_deals,
    played_to,
    settebello_sweep,
)

from agents import GuidedAgent, make_agent
from agents.guided import Root
from agents.policy import POLICY_CHECKPOINT
from scopa_env import scopa_v0
from scopa_env.cards import cards_of, mask_of, parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.environments import make_aec
from scopa_env.errors import CheckpointNotFoundError, PlayerError
from scopa_env.info_state import InfoState
from scopa_env.observation import deal_block
from scopa_env.rules import Rules

pytestmark = pytest.mark.skipif(
    not POLICY_CHECKPOINT.is_file(), reason="the shipped network is not installed"
)


@pytest.fixture(scope="module")
def player() -> GuidedAgent:
    return GuidedAgent(samples=3, seed=0)


def test_mid_deal_moves_are_legal(player: GuidedAgent) -> None:
    # First round, stock of 30: I lead holding 7D 7C KB; the table is 3S 4S AB 6C. 7D and 7C
    # each take 3S+4S or 6C+AB (the same value, two capture sets); KB can only trail.
    deal = Deal.from_position(
        hands=(parse_cards("7D 7C KB"), parse_cards("2D 2C 2S")),
        table=parse_cards("3S 4S AB 6C"),
        stock=[c for c in range(40) if c not in parse_cards("7D 7C KB 2D 2C 2S 3S 4S AB 6C")],
        current_player=0,
    )
    observation = observe_deal(deal)
    action = player.act(observation)
    assert observation["action_mask"][action] == 1
    assert action in {parse_card("7D"), parse_card("7C"), parse_card("KB")}
    if action != parse_card("KB"):  # a seven with two capture sets: the pick is asked next
        pick = observe_deal(deal, pending=action)
        assert pick["action_mask"][player.act(pick)] == 1


@pytest.mark.parametrize(
    "options",
    [{}, {"depth": 2, "blend": 1.0, "replies": "min"}, {"blend": 0.0, "infer": 1.0}],
)
def test_mid_deal_sweeps_the_table_with_the_settebello(options: dict) -> None:
    deal = settebello_sweep()
    assert GuidedAgent(samples=4, seed=0, **options).act(observe_deal(deal)) == parse_card("7D")


def test_whole_deals_are_legal_and_reproducible_from_the_seed() -> None:
    def actions(seed: int) -> list[int]:
        players = {
            "player_0": GuidedAgent(samples=2, infer=1.0, seed=seed),
            "player_1": GuidedAgent(samples=2, depth=2, blend=1.0, replies="min", seed=seed),
        }
        return play_deals(players, range(2))

    assert actions(5) == actions(5)


def test_endgame_avoids_leaving_a_sweep() -> None:
    mine, theirs, table = parse_cards("5B 6B"), parse_cards("4C AB"), parse_cards("3C 2S 4S")
    pile = parse_cards(SEVENS_AND_COINS)
    rest = [c for c in range(40) if c not in {*mine, *theirs, *table, *pile}]
    deal = Deal.from_position(
        hands=(mine, theirs), table=table, captures=(pile, rest), current_player=0,
        first_player=0, last_capturer=0,
    )  # fmt: skip
    # 5B must take 3C+2S and leaves 4S, which 4C sweeps (a scopa: plays follow): 4 to 1.
    # 6B must take 2S+4S and leaves 3C: no reply captures it all, and after the last trail the
    # table goes to my last capture: 4 to 0.
    assert GuidedAgent(seed=0).act(observe_deal(deal)) == parse_card("6B")


def test_a_sampled_deal_is_observed_as_the_environment_observes_it(player: GuidedAgent) -> None:
    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    from agents.determinize import Determinizer
    from agents.seats import SeatView

    for _ in range(9):  # into the second round: cards played by both seats
        observation = env.observe(env.agent_selection)
        vector = observation["observation"]
        info = InfoState.from_observation(vector)
        sample = Determinizer(SeatView.from_info(info, vector), Rules()).sample(rng)
        seen = player.leaf.observations([sample], Root.of(info, sample.dealer))[0]
        np.testing.assert_array_equal(seen, vector)
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))


def test_batched_leaf_values_are_the_networks_one_by_one(player: GuidedAgent) -> None:
    import torch

    deals = [played_to(seed, plays) for seed, plays in ((0, 0), (1, 1), (2, 7), (3, 12), (4, 25))]
    assert {d.current_player for d in deals} == {0, 1}
    assert {d.dealer for d in deals} == {1}
    root = Root((deal_block((0, 0), 11, 1, 0), deal_block((0, 0), 11, 1, 1)), (0, 0))
    batched = player.leaf.values(deals, root)
    policy = player.leaf.policy
    for deal, value in zip(deals, batched, strict=True):
        seat = deal.current_player
        obs = encode_deal(deal, seat)
        with torch.inference_mode():
            alone = float(policy.predict_values(torch.as_tensor(obs[None]))[0, 0])
        assert value == pytest.approx(alone if seat == 0 else -alone, abs=1e-5)


def test_refuses_other_tables(player: GuidedAgent) -> None:
    env = make_aec("scopa_4")
    env.reset(seed=0)
    with pytest.raises(PlayerError, match="two-player Scopa"):
        player.act(env.observe(env.agent_selection))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"samples": 0}, PlayerError, "samples"),
        ({"depth": 0}, PlayerError, "depth"),
        ({"samples": "many"}, PlayerError, "'many'"),
        ({"blend": 1.5}, PlayerError, "blend"),
        ({"replies": "max"}, PlayerError, "replies"),
        ({"infer": -1.0}, PlayerError, "infer"),
        ({"network": "greedy"}, PlayerError, "not a policy network"),
        ({"network": "pretrained"}, PlayerError, "give 'pretrained_v5'"),
        ({"network": "no/such/model.zip"}, CheckpointNotFoundError, "no/such/model.zip"),
        ({"bogus": 1}, PlayerError, "bogus"),
    ],
)
def test_bad_options_are_refused(options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_agent("guided", **options)


def test_the_policy_weighs_the_opponents_cards_and_each_card_takes_its_best_capture() -> None:
    from agents.alphabeta import AlphaBeta
    from agents.greedy import MoveValuer
    from agents.guided import LineTree, Node

    a, b = parse_card("7D"), parse_card("3S")
    values = np.array([1.0, -1.0, 2.0])  # seat 0's: a's two captures, then b
    logits = np.zeros((1, 80), np.float32)
    logits[0, b] = np.log(3.0)  # the policy plays b three times in four
    moves = [(a, 1), (a, 2), (b, 0)]  # a takes one of two table cards, b trails
    replies = Node(1, 0, moves, [0, 1, 2])
    exact = AlphaBeta(Rules(), MoveValuer(Rules()))
    # a's better capture for the opponent leaves -1: 1/4 * -1 + 3/4 * 2.
    assert LineTree(True, False).reduce(replies, values, logits, exact) == pytest.approx(1.25)
    assert LineTree(False, False).reduce(Node(1, -1, moves, [0, 1, 2]), values, logits, exact) == -1
    assert LineTree(False, False).reduce(Node(0, -1, moves, [0, 1, 2]), values, logits, exact) == 2


def test_a_softmin_or_a_model_weighs_the_opponents_replies() -> None:
    from agents.alphabeta import AlphaBeta
    from agents.greedy import MoveValuer
    from agents.guided import LineTree, Node

    a, b = parse_card("7D"), parse_card("3S")
    values = np.array([-1.0, 1.0])  # seat 0's after each reply
    logits = np.zeros((0, 0))
    exact = AlphaBeta(Rules(), MoveValuer(Rules()))
    replies = Node(1, -1, [(a, 0), (b, 0)], [0, 1])
    # At temperature 2 the reply leaving -1 weighs e^0 = 1, the one leaving 1 e^(-2/2).
    w = np.exp(-1.0)
    expected = (-1.0 + w * 1.0) / (1.0 + w)
    assert LineTree(False, False, 2.0).reduce(replies, values, logits, exact) == pytest.approx(
        expected
    )
    assert LineTree(False, False, 0.01).reduce(replies, values, logits, exact) == pytest.approx(-1)
    # A model's probabilities weigh the replies where it is given.
    modelled = Node(1, -1, [(a, 0), (b, 0)], [0, 1], np.array([0.25, 0.75]))
    assert LineTree(False, False).reduce(modelled, values, logits, exact) == pytest.approx(0.5)
    # My own moves stay a maximum.
    mine = Node(0, -1, [(a, 0), (b, 0)], [0, 1])
    assert LineTree(False, False, 2.0).reduce(mine, values, logits, exact) == 1


def test_my_move_after_a_reply_is_chosen_once_for_every_sample() -> None:
    """Two samples of one root move. In the first the opponent can reply r or q, in the second
    only r; after r I play x or y. Per sample I would play x in the first (3) and y in the
    second (2), each seeing the opponent's hand. One move after r for both: x leaves the
    opponent q in the first (1) and 0 in the second, 1 in all; y leaves 0 and 2, 2 in all."""
    from agents.alphabeta import AlphaBeta
    from agents.greedy import MoveValuer
    from agents.guided import LineTree, Node

    r, q = (parse_card("7D"), 0), (parse_card("3S"), 0)
    x, y = (parse_card("AC"), 0), (parse_card("2C"), 0)
    values = np.array([3.0, 0.0, 1.0, 0.0, 2.0])  # seat 0's at each leaf
    first = Node(1, -1, [r, q], [Node(0, -1, [x, y], [0, 1]), 2])
    second = Node(1, -1, [r], [Node(0, -1, [x, y], [3, 4])])
    exact = AlphaBeta(Rules(), MoveValuer(Rules()))
    tree = LineTree(False, False)
    logits = np.zeros((0, 0))
    ones = np.ones(2)
    fused = sum(tree.reduce(t, values, logits, exact) for t in (first, second))
    assert fused == pytest.approx(1.0 + 2.0)
    # On average over the samples allowing r, x is better (3 against 2); the total is not.
    assert tree.reduce_shared([first, second], ones, values, logits, exact) == pytest.approx(2.0)
    assert tree.reduce_shared([first, second], np.array([3.0, 1.0]), values, logits, exact) == (
        pytest.approx(3.0)  # x: 3 * 1 + 0; y: 3 * 0 + 2
    )
    # One sample alone, or a sample with nothing to share, is reduced as before.
    assert tree.reduce_shared([first], ones, values, logits, exact) == pytest.approx(1.0)
    assert tree.reduce_shared([4, second], ones, values, logits, exact) == pytest.approx(4.0)


def test_the_history_rebuilds_what_the_opponent_saw_before_each_play() -> None:
    from agents.guided import RoundHistory
    from scopa_env.observation import OBS_SLICES, mask_to_plane

    env = scopa_v0.raw_env(episode="deal")
    rng = np.random.default_rng(7)
    checked = 0
    for seed, me in ((7, 0), (8, 1)):
        env.reset(seed=seed)
        history = RoundHistory()
        seen_before: dict[int, np.ndarray] = {}  # the opponent's observation before each card
        while not env.terminations[env.agent_selection]:
            seat = env.possible_agents.index(env.agent_selection)
            observation = env.observe(env.agent_selection)
            info = InfoState.from_observation(observation["observation"])
            legal = np.flatnonzero(observation["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            if seat == me and info.pending is None:
                history.observe(info)
                # Every opponent play since the last deal of cards, none before it.
                assert len(history.plays) == 3 - info.opp_hand_size
                for play in history.plays:
                    true = seen_before[play.card]
                    hand = mask_to_plane(InfoState.from_observation(true).hand)
                    rebuilt = play.observation.copy()
                    rebuilt[OBS_SLICES["hand"]] = hand
                    rebuilt[OBS_SLICES["unseen"]] -= hand
                    np.testing.assert_array_equal(rebuilt, true)
                    checked += 1
            elif info.pending is None:
                seen_before[action] = observation["observation"].copy()
            env.step(action)
    assert checked > 20


def test_the_history_forgets_observations_that_do_not_follow() -> None:
    from agents.guided import RoundHistory

    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    history = RoundHistory()
    led = InfoState.from_observation(env.observe(env.agent_selection)["observation"])
    history.observe(led)  # the opponent led the deal: its first card is a play of this round
    assert [p.card for p in history.plays] == list(cards_of(led.played[1]))
    other = Deal.new(np.random.default_rng(11))
    for _ in range(4):  # two plays each: player 0 to move, the opponent holding one card
        other.play(other.legal_moves()[0])
    history.observe(InfoState.from_observation(observe_deal(other)["observation"]))
    assert history.plays == []  # another deal: nothing follows from the last observation


def test_sampled_hands_are_weighed_by_the_networks_masked_probability_of_the_plays(
    player: GuidedAgent,
) -> None:
    import torch

    from agents.guided import PlayObservation, RoundHistory
    from scopa_env.observation import OBS_SLICES, mask_to_plane

    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=2)
    history = RoundHistory()
    for turn in range(3):  # the leader, the other seat, the leader again: the leader observes
        observation = env.observe(env.agent_selection)
        if turn != 1:
            history.observe(InfoState.from_observation(observation["observation"]))
        if turn < 2:
            env.step(int(np.flatnonzero(observation["action_mask"])[-1]))
    (play,) = history.plays
    assert isinstance(play, PlayObservation)
    hands = [mask_of(parse_cards(h)) for h in ("AD 2D", "KS QS", "7D 5C")]
    hands = [h for h in hands if not h & ~InfoState.from_observation(play.observation).unseen]
    assert hands, "pick hands the opponent could hold"
    log_p = history.log_likelihoods(hands, player.leaf)
    for hand, got in zip(hands, log_p, strict=True):
        held = hand | 1 << play.card
        obs = play.observation.copy()
        obs[OBS_SLICES["hand"]] = mask_to_plane(held)
        obs[OBS_SLICES["unseen"]] -= mask_to_plane(held)
        mask = np.zeros((1, 80), bool)
        mask[0, list(cards_of(held))] = True
        with torch.inference_mode():
            dist = player.leaf.policy.get_distribution(torch.as_tensor(obs[None]), mask)
            want = float(dist.log_prob(torch.tensor([play.card]))[0])
        assert got == pytest.approx(want, abs=1e-4)


def test_plays_a_whole_match_in_scopa_play_and_a_batch_of_unrelated_rows() -> None:
    guided = make_agent("guided", seed=0, samples=2, infer=1.0)
    assert_plays_a_match(guided)
    rows = [observe_deal(played_to(seed, plays)) for seed, plays in ((5, 0), (6, 8), (7, 4))]
    actions = guided.act_batch(
        np.stack([r["observation"] for r in rows]), np.stack([r["action_mask"] for r in rows])
    )
    assert all(r["action_mask"][a] == 1 for r, a in zip(rows, actions, strict=True))
    assert guided.history.plays == []


def test_a_blind_opponent_replies_as_is_best_on_average_over_my_hands() -> None:
    """Two replies: a leaves me 1 in the sample and b -1, so the opponent seeing my hand plays
    b. Over two other hands of mine it could not tell apart, a leaves me -2 and 0 (-1 on
    average) and b 1 and 1: not seeing my hand it plays a, and the sample is worth 1 to me."""
    from agents.alphabeta import AlphaBeta
    from agents.greedy import MoveValuer
    from agents.guided import LineTree, Node

    a, b = (parse_card("7D"), 0), (parse_card("3S"), 0)
    values = np.array([1.0, -1.0, -2.0, 0.0, 1.0, 1.0])  # seat 0's at each leaf
    logits = np.zeros((0, 0))
    exact = AlphaBeta(Rules(), MoveValuer(Rules()))
    seeing = Node(1, -1, [a, b], [0, 1])
    blind = Node(1, -1, [a, b], [0, 1], guesses=[[2, 3], [4, 5]])
    assert LineTree(False, False).reduce(seeing, values, logits, exact) == -1.0
    assert LineTree(False, False, blind=2).reduce(blind, values, logits, exact) == 1.0


def test_a_blind_opponent_judges_its_replies_in_deals_it_cannot_tell_from_the_sample() -> None:
    """Each guess deals my hand and the stock anew from the same cards and keeps the rest;
    each of the opponent's replies is played in every guess. In the last round the opponent
    knows my hand and replies as minimax has it."""
    from agents.guided import LineTree, Node

    mine, theirs = parse_cards("7D 7C KB"), parse_cards("2D 2C 2S")
    table = parse_cards("3S 4S AB 6C")
    seen = set(mine + theirs + table)
    deal = Deal.from_position(
        hands=(mine, theirs),
        table=table,
        stock=[c for c in range(40) if c not in seen],
        current_player=0,
    )
    deal.play_unchecked(parse_card("KB"), 0)  # I trail the king: the opponent to move
    tree = LineTree(False, False, blind=3, rng=np.random.default_rng(0))
    node = tree.expand(deal, 2)
    assert isinstance(node, Node) and node.player == 1 and node.guesses is not None
    assert [len(row) for row in node.guesses] == [3] * len(node.moves)
    hidden = sorted(deal.hands[0] + deal.stock)
    for (card, _), row in zip(node.moves, node.guesses, strict=True):
        for leaf in row:
            guess = tree.positions[leaf]
            assert guess.hands[1] == tuple(c for c in theirs if c != card)
            assert card in guess.played[1]
            assert len(guess.hands[0]) == 2 and len(guess.stock) == len(deal.stock)
            assert sorted(guess.hands[0] + guess.stock) == hidden
    assert len({tree.positions[leaf].hands[0] for leaf in node.guesses[0]}) > 1

    last = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    last.play_unchecked(*last.legal_mask_moves()[0])
    assert not last.stock and last.current_player == 1
    node = LineTree(False, False, blind=3).expand(last, 2)
    assert isinstance(node, Node) and node.guesses is None


def test_my_move_after_a_blind_reply_counts_only_where_the_opponent_picks_that_reply() -> None:
    """The two samples of the shared-move test, the opponent now replying blind: its pick in
    a sample follows its guesses alone. Where it picks q in the first sample, my move after r
    is chosen by the second alone (y, 2) and the first is worth q's 1: 3 in all. Where it
    picks r in both, x is worth 3 + 0 and y 0 + 2: x, 3 in all, where a move per sample
    (seeing the hand) would get 3 + 2."""
    from agents.alphabeta import AlphaBeta
    from agents.greedy import MoveValuer
    from agents.guided import LineTree, Node

    r, q = (parse_card("7D"), 0), (parse_card("3S"), 0)
    x, y = (parse_card("AC"), 0), (parse_card("2C"), 0)
    exact = AlphaBeta(Rules(), MoveValuer(Rules()))
    tree = LineTree(False, False, blind=1)
    logits = np.zeros((0, 0))
    ones = np.ones(2)
    first = Node(1, -1, [r, q], [Node(0, -1, [x, y], [0, 1]), 2], guesses=[[5], [6]])
    second = Node(1, -1, [r], [Node(0, -1, [x, y], [3, 4])], guesses=[[7]])
    picks_q = np.array([3.0, 0.0, 1.0, 0.0, 2.0, 0.0, -5.0, 0.0])  # r guessed 0, q -5
    assert tree.reduce_shared([first, second], ones, picks_q, logits, exact) == pytest.approx(3.0)
    picks_r = picks_q.copy()
    picks_r[5] = -9.0  # r guessed -9, q -5
    assert tree.reduce_shared([first, second], ones, picks_r, logits, exact) == pytest.approx(3.0)
    fused = sum(tree.reduce(t, picks_r, logits, exact) for t in (first, second))
    assert fused == pytest.approx(5.0)
    # Weighed 1 to 3, y is worth 0 + 3 * 2 = 6 against x's 3.
    weighed = tree.reduce_shared([first, second], np.array([1.0, 3.0]), picks_r, logits, exact)
    assert weighed == pytest.approx(6.0)
