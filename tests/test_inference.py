"""Hidden-card inference (agents.inference) and the search player that uses it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import observe_deal, opening, opening_trail, play_deals, played_to

from agents import make_agent
from agents.alphabeta import AlphaBetaAgent
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.inference import InferredDeterminizer, OpponentModel, OpponentPlay, PlayTracker
from agents.seats import SeatView
from scopa_env import scopa_v0
from scopa_env.captures import capture_table
from scopa_env.cards import CAPTURE_VALUE, cards_of, mask_of, parse_cards
from scopa_env.engine import Deal
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import resolve_rules
from scopa_env.table_observation import LAYOUTS

RULES = resolve_rules(None)
CAPTURES = capture_table(RULES)


def _info(observation: dict[str, np.ndarray]) -> InfoState:
    return InfoState.from_observation(observation["observation"])


def _followed_deals(episode: str, seat: str, seeds: range) -> tuple[int, int]:
    """Play random deals of ``scopa_v0``, tracking ``seat``; the tracker's plays must be the
    engine's, play by play. Returns (decisions, decisions with the history known)."""
    env = scopa_v0.raw_env(episode=episode)
    decisions = known = 0

    def played() -> int:
        mine, theirs = env.deal.masks["played"]
        return (mine | theirs).bit_count()

    for seed in seeds:
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        tracker, truth, started = PlayTracker(), [], None
        while not env.terminations[env.agent_selection]:
            agent = env.agent_selection
            observation = env.observe(agent)
            if not played():  # a new deal of the match
                truth, started = [], None
            if agent == seat:
                plays = tracker.observe(_info(observation))
                decisions += 1
                assert plays == truth
                known += plays is not None
            elif started is None:
                m, other = env.deal.masks, env.possible_agents.index(agent)
                started = (m["table"], m["hands"][other].bit_count(), m["piles"][other],
                           m["played"][other], played())  # fmt: skip
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            if started is not None and env.agent_selection != agent:
                m, other = env.deal.masks, env.possible_agents.index(agent)
                if played() == started[4] + 1:  # the same deal goes on
                    card = (m["played"][other] & ~started[3]).bit_length() - 1
                    capture = m["piles"][other] & ~started[2] & ~(1 << card)
                    truth.append(OpponentPlay(started[0], card, capture, started[1]))
                started = None
    return decisions, known


@pytest.mark.parametrize("seat", ["player_0", "player_1"])
def test_tracker_rebuilds_every_play_of_random_deals(seat: str) -> None:
    decisions, known = _followed_deals("deal", seat, range(40))
    assert known == decisions > 500


def test_tracker_starts_over_at_each_deal_of_a_match() -> None:
    decisions, known = _followed_deals("match", "player_0", range(3))
    assert known == decisions > 100


def test_tracker_reads_the_opening_trail() -> None:
    deal, table = opening_trail()
    tracker = PlayTracker()
    info = _info(observe_deal(deal))
    assert tracker.observe(info) == [OpponentPlay(table, parse_cards("2B")[0], 0, 3)]
    assert tracker.this_round(info) == tracker.plays


def test_tracker_knows_nothing_joining_mid_deal_or_another_game() -> None:
    deal, _ = opening_trail()
    tracker = PlayTracker()
    tracker.observe(_info(observe_deal(deal)))
    # Another game's first decision (I lead, nothing played) does not continue this one.
    other = Deal.from_position(
        hands=(parse_cards("AD 4D 6D"), parse_cards("2B QC 4B")),
        table=parse_cards("7S 5C 3S JB"),
        stock=[c for c in range(40) if c not in parse_cards("AD 4D 6D 2B QC 4B 7S 5C 3S JB")],
    )
    assert tracker.observe(_info(observe_deal(other))) == []
    # A position in mid-deal, with no history behind it: nothing is known.
    other.play_unchecked(parse_cards("AD")[0], 0)
    other.play_unchecked(parse_cards("QC")[0], 0)
    mid = _info(observe_deal(other))
    fresh = PlayTracker()
    assert fresh.observe(mid) is None
    assert fresh.this_round(mid) == []


def test_a_trail_rules_out_hands_that_could_capture() -> None:
    """The greedy valuation ranks every capture above a trail: a cold model excludes them."""
    deal, table = opening_trail()
    play = OpponentPlay(table, parse_cards("2B")[0], 0, 3)
    model = OpponentModel(
        RULES, MoveValuer(RULES), temperature=0.01, uniform=0.0, capture_bonus=0.0
    )
    # 2B QC 4B capture nothing there; their trails are worth the same (no coin, no primiera
    # value), so each is a third.
    assert model.log_likelihood(mask_of(parse_cards("QC 4B")), [play]) == pytest.approx(
        math.log(1 / 3)
    )
    assert model.log_likelihood(mask_of(parse_cards("7D QC")), [play]) < -100
    warm = OpponentModel(RULES, MoveValuer(RULES), temperature=25.0, uniform=0.1, capture_bonus=0.0)
    with_seven = warm.log_likelihood(mask_of(parse_cards("7D QC")), [play])
    without = warm.log_likelihood(mask_of(parse_cards("QC 4B")), [play])
    assert math.log(0.1 / 3) <= with_seven < without
    # The capture bonus alone (a flat valuation) makes the trail e**bonus times less likely
    # for each capture the hand could make instead: 7D takes 7S alone here.
    flat = OpponentModel(RULES, MoveValuer(RULES), temperature=1e9, uniform=0.0, capture_bonus=2.0)
    odds = math.exp(flat.log_likelihood(mask_of(parse_cards("7D QC")), [play]))
    assert odds == pytest.approx(1 / (2 + math.exp(2.0)))
    # A hand that does not hold the played card cannot have made the play.
    assert model.log_prob(mask_of(parse_cards("QC 4B")), play) == -math.inf


def test_move_probabilities_follow_the_greedy_values_in_the_engines_order() -> None:
    """7D takes 7S from 7S 5C 3S JB, QC (9) and 2B take nothing: under a flat valuation the
    capture bonus alone makes the capture e**2 times as likely as each trail."""
    deal = opening("7D QC 2B")
    hand, table = deal.masks["hands"][1], deal.masks["table"]
    flat = OpponentModel(RULES, MoveValuer(RULES), temperature=1e9, uniform=0.0, capture_bonus=2.0)
    by_move = dict(zip(deal.legal_mask_moves(), flat.probabilities(hand, table), strict=True))
    seven, queen, two = parse_cards("7D QC 2B")
    total = 2 + math.e**2
    expected = {(seven, mask_of(parse_cards("7S"))): math.e**2 / total}
    expected |= {(queen, 0): 1 / total, (two, 0): 1 / total}
    assert by_move == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_move_probabilities_are_the_likelihood_of_each_legal_move(seed: int) -> None:
    model = OpponentModel(RULES, MoveValuer(RULES))
    for plays in (0, 5, 11):
        deal = played_to(seed, plays)
        hand, table = deal.masks["hands"][deal.current_player], deal.masks["table"]
        moves = deal.legal_mask_moves()
        probabilities = model.probabilities(hand, table)
        assert probabilities.sum() == pytest.approx(1.0)
        size = len(cards_of(hand))
        for (card, capture), p in zip(moves, probabilities, strict=True):
            play = OpponentPlay(table, card, capture, size)
            assert p == pytest.approx(math.exp(model.log_prob(hand, play)))


def test_resampled_deals_follow_the_model() -> None:
    deal, table = opening_trail()
    observation = observe_deal(deal)
    agent = AlphaBetaAgent(infer=True, samples=32, temperature=0.01, uniform=0.0, seed=0)
    info = _info(observation)
    agent.tracker.observe(info)
    view = SeatView.from_info(info, observation["observation"])
    sampled = agent.sampled_deals(Determinizer(view, agent.rules), info)
    assert sum(n for _, n in sampled) == 32
    for sample, _ in sampled:
        hand = sample.masks["hands"][1]
        assert hand.bit_count() == 2 and not hand & mask_of(parse_cards("AD 4D 6D"))
        for card in range(40):
            if hand >> card & 1:
                assert not CAPTURES(table, int(CAPTURE_VALUE[card])), card
    # Without inference the same draws give the opponent capturing cards now and then.
    plain = AlphaBetaAgent(samples=64, seed=0)
    hands = [s.masks["hands"][1] for s, _ in plain.sampled_deals(Determinizer(view, RULES), info)]
    assert any(
        CAPTURES(table, int(CAPTURE_VALUE[c])) for h in hands for c in range(40) if h >> c & 1
    )


def test_inferring_player_plays_legal_moves_and_is_reproducible() -> None:
    def actions() -> list[int]:
        players = {
            "player_0": make_agent("alphabeta", infer=True, samples=8, seed=1),
            "player_1": make_agent("greedy"),
        }
        return play_deals(players, range(4))

    assert actions() == actions()


def test_act_batch_keeps_no_history() -> None:
    deal, _ = opening_trail()
    observation = observe_deal(deal)
    agent = make_agent("alphabeta", infer=True, samples=8, seed=0)
    batch = np.stack([observation["observation"]] * 2)
    masks = np.stack([observation["action_mask"]] * 2)
    actions = agent.act_batch(batch, masks)
    assert all(observation["action_mask"][a] for a in actions)
    assert agent.tracker.plays is None and agent.tracker.last is None


def test_options_and_tables() -> None:
    with pytest.raises(PlayerError, match="candidates"):
        make_agent("alphabeta", infer=True, samples=8, candidates=4)
    with pytest.raises(PlayerError, match="temperature"):
        make_agent("alphabeta", infer=True, temperature=0.0)
    with pytest.raises(PlayerError, match="infer"):
        make_agent("alphabeta", infer="yes")
    size = LAYOUTS["scopa_4"].size
    agent = make_agent("alphabeta", infer=True)
    env_obs = _table_observation("scopa_4")
    assert env_obs.shape[-1] == size
    with pytest.raises(PlayerError, match="two-player"):
        agent.act({"observation": env_obs, "action_mask": np.ones(80, np.int8)})


def _table_observation(table: str) -> np.ndarray:
    from scopa_env.environments import make_aec

    env = make_aec(table, episode="deal")
    env.reset(seed=0)
    return env.observe(env.agent_selection)["observation"]


def test_inferred_deals_follow_the_model_and_deal_the_stock_afresh() -> None:
    deal, table = opening_trail()
    observation = observe_deal(deal)
    info = _info(observation)
    plays = PlayTracker().observe(info)
    assert plays
    view = SeatView.from_info(info, observation["observation"])
    cold = OpponentModel(RULES, MoveValuer(RULES), temperature=0.01, uniform=0.0)
    rng = np.random.default_rng(0)
    sampler = InferredDeterminizer(view, RULES, cold, plays, 64, rng)
    stocks = set()
    for _ in range(40):
        sample = sampler.sample(rng)
        hand = sample.masks["hands"][1]
        assert hand.bit_count() == 2 and not hand & mask_of(parse_cards("AD 4D 6D"))
        for card in cards_of(hand):  # a card that could have captured was not held
            assert not CAPTURES(table, int(CAPTURE_VALUE[card])), card
        assert sample.masks["table"] == deal.masks["table"]
        assert hand | mask_of(sample.stock) == deal.masks["hands"][1] | mask_of(deal.stock)
        stocks.add(tuple(sample.stock))
    assert len(stocks) == 40
