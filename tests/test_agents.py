"""Players: legal play in every preset, what they read from observations, and their choices."""

from __future__ import annotations

import numpy as np
import pytest

from agents import (
    GreedyAgent,
    HeuristicAgent,
    ISMCTSAgent,
    PolicyAgent,
    RandomAgent,
    make_agent,
)
from agents.determinize import Determinizer, InfoState
from scopa_env import scopa_v0
from scopa_env.cards import cards_of, mask_of, parse_cards
from scopa_env.engine import Deal
from scopa_env.observation import encode
from scopa_env.rules import PRESETS, Rules

PRESET_NAMES = sorted(PRESETS)


def play_recorded(env, players, seed: int, deck_seed: int):
    """Play one deal of ``env``; return every (seat, observation, action) and check legality."""
    rng = np.random.default_rng(deck_seed)
    env.reset(seed=seed, options={"first_player": int(rng.integers(2))})
    steps = []
    while not env.terminations[env.agent_selection]:
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        obs = env.observe(agent)
        action = players[seat].act(obs)
        assert obs["action_mask"][action] == 1, (type(players[seat]).__name__, action)
        steps.append((seat, obs, action))
        env.step(action)
    return steps


def all_players(rules: Rules) -> list:
    return [
        RandomAgent(rules, seed=1),
        GreedyAgent(rules),
        HeuristicAgent(rules),
        ISMCTSAgent(rules, iterations=8, seed=2),
    ]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_player_plays_only_legal_actions(preset: str) -> None:
    rules = Rules.preset(preset)
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    players = all_players(rules)
    picks = 0
    for i, first in enumerate(players):
        for j, second in enumerate(players):
            if i < j:
                for seats in ((first, second), (second, first)):
                    steps = play_recorded(env, seats, seed=10 * i + j, deck_seed=i + j)
                    picks += sum(action >= 40 for _, _, action in steps)
                    assert env.deal.is_over
    assert picks > 0  # the capture-choice phase was exercised too


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_greedy_batch_matches_scalar(preset: str) -> None:
    rules = Rules.preset(preset)
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    greedy, rnd = GreedyAgent(rules), RandomAgent(seed=0)
    observations, masks = [], []
    for k in range(12):
        for _, obs, _ in play_recorded(env, (rnd, greedy) if k % 2 else (greedy, rnd), k, k):
            observations.append(obs["observation"])
            masks.append(obs["action_mask"])
    scalar = [
        greedy.act({"observation": o, "action_mask": m})
        for o, m in zip(observations, masks, strict=True)
    ]
    batch = greedy.act_batch(np.stack(observations), np.stack(masks))
    np.testing.assert_array_equal(batch, scalar)


def test_random_batch_is_legal_uniform_and_seeded() -> None:
    masks = np.zeros((4000, 80), dtype=np.int8)
    masks[:, [3, 17, 45]] = 1
    actions = RandomAgent(seed=5).act_batch(np.zeros((4000, 373)), masks)
    assert set(actions.tolist()) == {3, 17, 45}
    counts = np.bincount(actions, minlength=80)[[3, 17, 45]]
    assert counts.min() > 1200
    np.testing.assert_array_equal(actions, RandomAgent(seed=5).act_batch(None, masks))
    with pytest.raises(ValueError, match="no legal action"):
        RandomAgent().act_batch(None, np.zeros((1, 80), dtype=np.int8))


def test_info_state_reads_back_what_the_player_knows() -> None:
    env = scopa_v0.raw_env(rules="scopa", episode="deal")
    env.reset(seed=3)
    greedy = GreedyAgent()
    for _ in range(9):  # a few plays in, with captures and a new round on the way
        env.step(greedy.act(env.observe(env.agent_selection)))
    deal = env.deal
    me = deal.current_player
    info = InfoState.from_observation(env.observe(env.agent_selection)["observation"])
    masks = deal.masks
    assert info.hand == masks["hands"][me]
    assert info.table == masks["table"]
    assert info.piles == (masks["piles"][me], masks["piles"][1 - me])
    assert info.unseen == masks["hands"][1 - me] | mask_of(deal.stock)
    assert info.opp_hand_size == len(deal.hands[1 - me])
    assert info.stock_size == len(deal.stock)
    assert info.scope == (deal.scope[me], deal.scope[1 - me])
    assert info.is_dealer == (deal.dealer == me)
    expected_last = None if deal.last_capturer is None else int(deal.last_capturer != me)
    assert info.last_capturer == expected_last
    assert info.pending is None and info.picked == 0


def test_determinizer_deals_only_unseen_cards() -> None:
    deal = Deal.new(np.random.default_rng(7))
    for _ in range(7):  # into the second round; the opponent holds two cards
        deal.play(deal.legal_moves()[0])
    me = deal.current_player
    m = deal.masks
    obs = encode(
        m["hands"], m["table"], m["piles"], m["played"], len(deal.stock), deal.scope,
        deal.last_capturer, deal.dealer, me,
    )  # fmt: skip
    info = InfoState.from_observation(obs)
    determinizer = Determinizer(info, Rules())
    rng = np.random.default_rng(0)
    seen_in_hand = 0
    for _ in range(50):
        sample = determinizer.sample(rng)
        assert sample.current_player == 0
        assert mask_of(sample.hands[0]) == m["hands"][me]
        assert mask_of(sample.table) == m["table"]
        assert mask_of(sample.hands[1]) | mask_of(sample.stock) == info.unseen
        assert len(sample.hands[1]) == info.opp_hand_size
        seen_in_hand |= mask_of(sample.hands[1])
        # The fast copy is the deal the validating constructor builds from the same cards.
        rebuilt = Deal.from_dict(sample.to_dict())
        assert rebuilt == sample
    assert seen_in_hand == info.unseen  # every unseen card can be in the opponent's hand


def _observation(hand: str, table: str, rules: Rules, **kwargs) -> dict[str, np.ndarray]:
    """An observation dict of a consistent position in which player 0 (first player) plays.

    The opponent holds as many cards as I do, the stock whole rounds, my pile the rest.
    """
    hand_mask, table_mask = mask_of(parse_cards(hand)), mask_of(parse_cards(table))
    rest = [c for c in range(40) if not (hand_mask | table_mask) >> c & 1]
    size = hand_mask.bit_count()
    stock = (len(rest) - size) // 6 * 6
    opp, pile = mask_of(rest[:size]), mask_of(rest[size + stock :])
    obs = encode((hand_mask, opp), table_mask, (pile, 0), (0, 0), stock, (0, 0), 0, 1, 0, **kwargs)
    mask = np.zeros(80, dtype=np.int8)
    if kwargs.get("pending_card") is None:
        mask[list(cards_of(hand_mask))] = 1
    else:
        mask[40:] = 1  # permissive: these tests check the choice, not the mask
    return {"observation": obs, "action_mask": mask}


def test_greedy_takes_the_settebello_and_trails_safely() -> None:
    rules = Rules()
    greedy = GreedyAgent(rules)
    # 7C can take 7D or 7S: the capture choice starts, and greedy picks the settebello.
    pick = _observation("7C", "7D 7S", rules, pending_card=parse_cards("7C")[0])
    assert greedy.act(pick) == 40 + parse_cards("7D")[0]
    # Nothing captures: trailing 2S would leave 3+2 for a sweep by a 5; KC leaves 13.
    assert greedy.act(_observation("KC 2S", "3B", rules)) == parse_cards("KC")[0]
    # A sweep beats a bigger capture that leaves cards behind.
    assert greedy.act(_observation("5C QS", "5B 4D", rules)) == parse_cards("QS")[0]


def test_heuristic_fears_a_sweepable_table() -> None:
    heuristic = HeuristicAgent()
    obs = _observation("6C JC", "3D 4S KB QS", Rules())
    info = InfoState.from_observation(obs["observation"])
    values = heuristic.card_values(info)
    exposed = heuristic.expected_reply(info, mask_of(parse_cards("3D 4S")), values)  # a 7 sweeps
    safe = heuristic.expected_reply(info, mask_of(parse_cards("KB QS")), values)
    assert exposed > 2 * safe > 0


def test_ismcts_is_reproducible_and_respects_the_pending_card() -> None:
    rules = Rules()
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    env.reset(seed=11)
    obs = env.observe(env.agent_selection)
    first = ISMCTSAgent(rules, iterations=30, seed=4).act(obs)
    assert ISMCTSAgent(rules, iterations=30, seed=4).act(obs) == first
    agent = ISMCTSAgent(rules, iterations=30, time_limit=1e-4, seed=4)
    agent.act(obs)
    assert 1 <= agent.last_iterations < 30
    pending = parse_cards("7C")[0]
    pick = _observation("7C 2S", "7D 7S", rules, pending_card=pending)
    action = ISMCTSAgent(rules, iterations=20, seed=0).act(pick)
    assert action in (40 + parse_cards("7D")[0], 40 + parse_cards("7S")[0])


def test_make_agent_names_and_errors(tmp_path) -> None:
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy", rules="napola"), GreedyAgent)
    assert make_agent("ismcts", iterations=5).iterations == 5
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    with pytest.raises(ValueError, match="unknown player"):
        make_agent("nobody")
    with pytest.raises(FileNotFoundError):
        make_agent(tmp_path / "missing.zip")


def test_players_reject_a_mask_from_other_rules() -> None:
    obs = _observation("AC 5S", "3B 4D KB", Rules())
    obs["action_mask"][:] = 0
    obs["action_mask"][40] = 1
    with pytest.raises(ValueError, match="rules"):
        GreedyAgent().act(obs)


@pytest.mark.slow  # imports torch
def test_policy_agent_loads_a_maskable_ppo_checkpoint(tmp_path) -> None:
    pytest.importorskip("sb3_contrib")
    import gymnasium
    from sb3_contrib import MaskablePPO

    class Dummy(gymnasium.Env):
        observation_space = scopa_v0.raw_env().observation_space("player_0")["observation"]
        action_space = gymnasium.spaces.Discrete(80)

        def reset(self, *, seed=None, options=None):
            return np.zeros(373, dtype=np.float32), {}

        def step(self, action):
            return np.zeros(373, dtype=np.float32), 0.0, True, False, {}

        def action_masks(self):
            return np.ones(80, dtype=bool)

    model = MaskablePPO("MlpPolicy", Dummy(), n_steps=8, batch_size=8, seed=0)
    path = tmp_path / "model.zip"
    model.save(path)
    agent = make_agent(str(path), seed=0)
    assert isinstance(agent, PolicyAgent)
    env = scopa_v0.raw_env(rules="scopa_a_quindici", episode="deal")
    steps = play_recorded(env, (agent, GreedyAgent("scopa_a_quindici")), seed=1, deck_seed=1)
    assert steps
    obs = np.stack([o["observation"] for _, o, _ in steps[:4]])
    masks = np.stack([o["action_mask"] for _, o, _ in steps[:4]])
    for action, mask in zip(agent.act_batch(obs, masks), masks, strict=True):
        assert mask[action]


def test_ismcts_variants_choose_legal_moves() -> None:
    env = scopa_v0.raw_env(rules="napola", episode="deal")
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    for options in ({"halving": False}, {"tree": False}, {"epsilon": 0.5}):
        action = ISMCTSAgent("napola", iterations=12, seed=0, **options).act(obs)
        assert obs["action_mask"][action]


@pytest.mark.slow
def test_ismcts_beats_greedy_on_a_small_sample() -> None:
    from training.evaluate import evaluate

    _, summaries, _ = evaluate(["ismcts:iterations=100", "greedy"], deals=16, seed=0)
    assert summaries[0].points_per_deal > 0
