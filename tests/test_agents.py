"""Players: legal play in every preset, what they read from observations, and their choices."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import encode_deal, observe_deal

from agents import (
    AGENTS,
    GreedyAgent,
    HeuristicAgent,
    ISMCTSAgent,
    PolicyAgent,
    RandomAgent,
    make_agent,
)
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.ismcts import side_rewards
from agents.policy import SHIPPED_CHECKPOINTS
from agents.seats import SeatView
from agents.values import CardValues, napola_gain, napola_swing, sure_points
from evaluation.players import PlayerSpec
from scopa_env import scopa_v0
from scopa_env.captures import consistent_sets
from scopa_env.cards import card_name, cards_of, mask_of, parse_card, parse_cards
from scopa_env.engine import Deal, Move
from scopa_env.environments import make_aec
from scopa_env.errors import CheckpointError, PlayerError, TableError
from scopa_env.info_state import InfoState
from scopa_env.observation import encode
from scopa_env.players import check_table
from scopa_env.rules import PRESETS, Rules
from scopa_env.table_observation import layout_for
from scopa_env.tables import TABLES, resolve_table

PRESET_NAMES = sorted(PRESETS)
#: Every preset alone and with the options combined, and every scoring and capture option at
#: once (scopa a quindici excludes ace takes all).
RULE_SETS = {
    **{name: Rules.preset(name) for name in PRESET_NAMES},
    **{
        f"{name}+options": Rules.preset(
            name, target=16, fewest_cards_capture=True, last_play_scopa=True
        )
        for name in PRESET_NAMES
    },
    "everything": Rules(
        target=21,
        fewest_cards_capture=True,
        last_play_scopa=True,
        ace_takes_all=True,
        ace_sweep_scopa=True,
        napola=True,
        re_bello=True,
    ),
}


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


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_every_player_plays_only_legal_actions(name: str) -> None:
    rules = RULE_SETS[name]
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


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_greedy_batch_matches_scalar(name: str) -> None:
    rules = RULE_SETS[name]
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
    obs = encode_deal(deal, me)
    info = InfoState.from_observation(obs)
    determinizer = Determinizer(SeatView.from_observation(obs), Rules())
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


def test_ismcts_finishes_each_games_planned_capture_when_serving_a_batch() -> None:
    """Between a card and its picks the player may act in other games (``act_batch`` over a
    batch of environments): the picks still follow the move searched for that game."""
    rules = Rules()
    agent = ISMCTSAgent(rules, iterations=20, seed=0)
    searches = []
    search = agent.search
    agent.search = lambda info, moves: searches.append(info) or search(info, moves)
    games = [("7C 7B", "7D 7S"), ("5C 5B", "5D 5S")]  # either card takes either table card
    played = [agent.act(_observation(hand, table, rules)) for hand, table in games]
    assert len(searches) == 2
    for (hand, table), card in zip(games, played, strict=True):
        pick = agent.act(_observation(hand, table, rules, pending_card=card))
        assert pick - 40 in parse_cards(table)
    assert len(searches) == 2  # the picks came from the plans, not from new searches


def test_ismcts_values_the_moves_it_searched() -> None:
    """7C sweeps 3D 4S for a scopa; trailing 2S leaves 9 on the table for a nine to sweep. The
    search values both legal cards, the sweep higher, and plays it; a lone legal move and the
    picks of a capture it planned are not searched, so they have no values."""
    rules = Rules()
    agent = ISMCTSAgent(rules, iterations=60, seed=0)
    seven, two = parse_cards("7C 2S")
    action, values = agent.act_with_values(_observation("7C 2S", "3D 4S", rules))
    assert action == seven
    assert not np.isnan(values[[seven, two]]).any()
    assert np.isnan(np.delete(values, [seven, two])).all()
    assert values[seven] > values[two] + 0.5

    action, values = agent.act_with_values(_observation("7C", "KB", rules))
    assert action == seven and np.isnan(values).all()

    card, values = agent.act_with_values(_observation("7C 7B", "7D 7S", rules))
    assert not np.isnan(values[list(parse_cards("7C 7B"))]).any()  # each card: its best capture
    pick, values = agent.act_with_values(_observation("7C 7B", "7D 7S", rules, pending_card=card))
    assert pick - 40 in parse_cards("7D 7S") and np.isnan(values).all()

    actions, batch = agent.act_batch_with_values(
        np.stack([_observation("7C 2S", "3D 4S", rules)["observation"]] * 2),
        np.stack([_observation("7C 2S", "3D 4S", rules)["action_mask"]] * 2),
    )
    assert actions.tolist() == [seven, seven] and batch.shape == (2, 80)


def test_make_agent_names_and_errors(tmp_path) -> None:
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy", rules="napola"), GreedyAgent)
    assert make_agent("ismcts", iterations=5).iterations == 5
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    with pytest.raises(ValueError, match="unknown player"):
        make_agent("nobody")
    with pytest.raises(CheckpointError, match="missing.zip"):
        make_agent(tmp_path / "missing.zip")


def test_the_shipped_agent_and_the_ones_it_replaced_play_by_name() -> None:
    """The shipped agent and both earlier policy networks load by name and play legal moves;
    the two policy networks are different networks."""
    from agents.policy import SHIPPED_CHECKPOINTS
    from scopa_env.single_agent import ScopaSingleAgentEnv

    assert SHIPPED_CHECKPOINTS["pretrained_v5"].read_bytes() != (
        SHIPPED_CHECKPOINTS["pretrained_v4"].read_bytes()
    )
    for name in ("pretrained", "pretrained_v5", "pretrained_v4"):
        agent = make_agent(name)
        env = ScopaSingleAgentEnv(opponent="greedy", episode="deal")
        obs, _ = env.reset(seed=3)
        done = False
        while not done:
            mask = env.action_masks()
            action = agent.act({"observation": obs, "action_mask": mask.astype(np.int8)})
            assert mask[action]
            obs, _, done, _, _ = env.step(action)
    with pytest.raises(ValueError, match="pretrained_v4"):
        make_agent("pretrained_v3")


def test_the_shipped_agent_is_the_seat_value_ensemble() -> None:
    """``make_agent("pretrained")`` plays as ``seat_value:network=ensemble`` on every decision
    of a deal, a one-network player of no options of its own; it refuses other rules by name,
    and the policy network it replaced is not it."""
    from agents.seat_value import SeatEnsemble, SeatValueAgent

    shipped = make_agent("pretrained")
    assert isinstance(shipped, SeatValueAgent) and isinstance(shipped.net, SeatEnsemble)
    assert repr(shipped).startswith("PretrainedAgent(width=")
    same = make_agent("seat_value", network="ensemble")
    single = make_agent("seat_value")
    env = scopa_v0.raw_env()
    env.reset(seed=5)
    differs = 0
    while not all(env.terminations.values()):
        observation = env.observe(env.agent_selection)
        action = shipped.act(observation)
        assert action == same.act(observation)
        differs += action != single.act(observation)
        env.step(action)
    assert differs  # the ensemble is not the single network
    with pytest.raises(PlayerError, match="no option 'network'"):
        make_agent("pretrained", network="single")
    with pytest.raises(PlayerError, match="napola=True"):
        make_agent("pretrained", rules="napola")


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
    from evaluation.harness import evaluate

    _, summaries, _ = evaluate(["ismcts:iterations=100", "greedy"], deals=16, seed=0)
    assert summaries[0].points_per_deal > 0


# Variants: hand-built positions where the variant's right choice is not the default game's ----


def _position(
    rules: Rules,
    hand: str,
    table: str,
    mine: str = "",
    theirs: str = "",
    dealer: bool = False,
    opp_hand: str = "",
    stock: int | None = None,
) -> Deal:
    """A deal in which player 0 is to move with ``hand`` on ``table``, piles as given.

    Player 0 is the first player, or the dealer (then the opponent holds one card fewer). The
    cards not named are unseen, coins first so that they stay unseen: the opponent's hand (after
    ``opp_hand``), then the stock (whole rounds, or ``stock`` cards); any others go to the two
    piles in turn.
    """
    named = [parse_cards(text) for text in (hand, table, mine, theirs, opp_hand)]
    used = {card for cards in named for card in cards}
    free = sorted((c for c in range(40) if c not in used), key=lambda c: (c >= 10, c))
    size = len(named[0]) - (1 if dealer else 0) - len(named[4])
    opp, free = [*named[4], *free[:size]], free[size:]
    stock = len(free) // 6 * 6 if stock is None else stock
    stock_cards, rest = free[:stock], free[stock:]
    return Deal.from_position(
        hands=(named[0], opp),
        table=named[1],
        stock=stock_cards,
        captures=([*named[2], *rest[0::2]], [*named[3], *rest[1::2]]),
        current_player=0,
        first_player=1 if dealer else 0,
        last_capturer=0,
        rules=rules,
    )


def decide(player, deal: Deal) -> str:
    """The whole move ``player`` makes, by ``scopa_v0``'s protocol: the card, then picks."""
    card = player.act(observe_deal(deal))
    assert 0 <= card < 40
    options = tuple(mask_of(s) for s in deal.capture_options(card))
    picked = 0
    while len(consistent_sets(options, picked)) > 1:
        action = player.act(observe_deal(deal, pending=card, picked=picked))
        assert action >= 40
        picked |= 1 << (action - 40)
    left = consistent_sets(options, picked)
    return str(Move(card, frozenset(cards_of(left[0] if left else 0))))


def move(card: str, capture: str = "") -> str:
    """A move as ``decide`` writes it: ``move("7C", "7S") == "7C x 7S"``."""
    return str(Move(parse_card(card), frozenset(parse_cards(capture))))


def players(rules: Rules, iterations: int = 300) -> dict[str, object]:
    return {
        "greedy": GreedyAgent(rules),
        "heuristic": HeuristicAgent(rules),
        "ismcts": ISMCTSAgent(rules, iterations=iterations, seed=0),
    }


def test_napola_completing_the_coin_run() -> None:
    """My pile holds AD and 3D: 2C x 2D makes napola (3 points, RULES.md 5), worth more than a
    seven. In the default game the seven of swords (primiera) is the better take."""
    position = {"hand": "2C 7C", "table": "2D 7S KB", "mine": "AD 3D"}
    for name, player in players(Rules()).items():
        if name != "ismcts":
            assert decide(player, _position(Rules(), **position)) == move("7C", "7S"), name
    napola = Rules.preset("napola")
    for name, player in players(napola).items():
        assert decide(player, _position(napola, **position)) == move("2C", "2D"), name


def test_napola_coins_are_worth_nothing_once_the_run_is_split() -> None:
    """AD is in the opponent's pile and 3D in mine: nobody can score napola, so 2D is only a
    coin and the players take the seven as in the default game."""
    napola = Rules.preset("napola")
    position = {"hand": "2C 7C", "table": "2D 7S KB", "mine": "3D", "theirs": "AD"}
    for name, player in players(napola).items():
        if name != "ismcts":
            assert decide(player, _position(napola, **position)) == move("7C", "7S"), name
    values = CardValues()
    assert values.napola_values(napola, mask_of(parse_cards("3D")), 1) == (0,) * 10


def test_napola_values_come_from_the_scoring_table() -> None:
    """Expected napola points with the free coins split evenly (RULES.md 5: A-2-3 is 3 points,
    plus one per further coin in sequence)."""
    assert napola_swing(0, 0) == 0.0
    a23 = mask_of(parse_cards("AD 2D 3D"))
    # A-2-3 mine, the other seven coins even: 3 + 1/2 + 1/4 + ... + 1/128 points.
    assert napola_swing(a23, 0) == pytest.approx(3 + sum(0.5**k for k in range(1, 8)))
    # The last card of the run doubles the chance from a half to certain.
    assert napola_gain(mask_of(parse_cards("AD 3D")), 0, 1 << parse_card("2D")) == round(
        100 * (napola_swing(a23, 0) - napola_swing(a23 & ~2, 0))
    )
    # At the start of a deal the ace, two and three are each worth about a point.
    start = CardValues().napola_values(Rules(napola=True), 0, 0)
    assert start[0] == start[1] == start[2] == 100
    assert start[0] > start[3] > start[4] > start[9] >= 0
    # Taking 2D and 3D together next to my AD makes the run: more than the two cards apart.
    ad = mask_of(parse_cards("AD"))
    both = mask_of(parse_cards("2D 3D"))
    assert CardValues().napola_correction(Rules(napola=True), ad, 0, both) > 0
    assert CardValues().napola_correction(Rules(), ad, 0, both) == 0


def test_re_bello_is_a_point() -> None:
    """Re bello scores KD one point (RULES.md 5): KC x KD beats taking a seven."""
    position = {"hand": "KC 7C", "table": "KD 7S QB"}
    for name, player in players(Rules()).items():
        if name != "ismcts":
            assert decide(player, _position(Rules(), **position)) == move("7C", "7S"), name
    re_bello = Rules.preset("re_bello")
    for name, player in players(re_bello).items():
        assert decide(player, _position(re_bello, **position)) == move("KC", "KD"), name
    assert [card_name(c) for c, p in enumerate(sure_points(re_bello)) if p] == ["7D", "KD"]
    assert [card_name(c) for c, p in enumerate(sure_points(Rules())) if p] == ["7D"]


@pytest.mark.parametrize("preset", ["scopa_d_assi", "asso_pigliatutto"])
def test_ace_takes_the_whole_table(preset: str) -> None:
    """I deal, hold AC 2C with JD QB KS on the table; the opponent's last card is AS.

    Default: nothing captures; trailing 2C keeps AC to take AS and the leftovers with the last
    card. Ace takes all (RULES.md 7): AC takes the three cards now, while a trailed 2C would let
    AS take all four.
    """
    position = {"hand": "AC 2C", "table": "JD QB KS", "dealer": True, "opp_hand": "AS", "stock": 0}
    for name, player in players(Rules()).items():
        assert decide(player, _position(Rules(), **position)) == move("2C"), name
    rules = Rules.preset(preset)
    for name, player in players(rules).items():
        assert decide(player, _position(rules, **position)) == move("AC", "JD QB KS"), name


def test_ace_sweep_scores_a_scopa_only_in_asso_pigliatutto() -> None:
    """Asso pigliatutto, I deal and hold AC 7C on 7S KB, the opponent's last card is 5B: AC's
    sweep now is a scopa, and 7C then takes the rest; 7C x 7S first leaves AC a sweep on the
    last play, no scopa. By default AC cannot capture at all.
    Scopa d'assi, AC KC on a lone KS: only the king's sweep is a scopa (then AC takes 5B)."""
    position = {"hand": "AC 7C", "table": "7S KB", "dealer": True, "opp_hand": "5B", "stock": 0}
    for name, player in players(Rules()).items():
        if name != "ismcts":  # a tie: 7C x 7S or the trail of AC end with the same cards
            assert decide(player, _position(Rules(), **position)) == move("7C", "7S"), name
    asso = Rules.preset("asso_pigliatutto")
    for name, player in players(asso).items():
        assert decide(player, _position(asso, **position)) == move("AC", "7S KB"), name
    d_assi = Rules.preset("scopa_d_assi")
    for name, player in players(d_assi).items():
        deal = _position(d_assi, **{**position, "hand": "AC KC", "table": "KS"})
        assert decide(player, deal) == move("KC", "KS"), name
    ks, ac = mask_of(parse_cards("KS")), parse_card("AC")
    assert MoveValuer(asso).scores_sweep(ks, ac, ks, last_play=False)
    assert not MoveValuer(d_assi).scores_sweep(ks, ac, ks, last_play=False)
    assert not MoveValuer(asso).scores_sweep(ks, ac, ks, last_play=True)


def test_scopa_a_quindici_takes_what_makes_fifteen() -> None:
    """Quindici: a jack (8) takes the settebello (8 + 7 = 15); the seven takes the jack.
    In the default game the seven takes the settebello."""
    position = {"hand": "7C JC", "table": "JS 7D KB"}
    for name, player in players(Rules()).items():
        if name != "ismcts":
            assert decide(player, _position(Rules(), **position)) == move("7C", "7D"), name
    quindici = Rules.preset("scopa_a_quindici")
    for name, player in players(quindici).items():
        assert decide(player, _position(quindici, **position)) == move("JC", "7D"), name


def test_fewest_cards_capture_limits_the_choice() -> None:
    """6C on AD 2D 3D 4S: three coins and an ace by default; only {2D, 4S} with
    fewest_cards_capture (RULES.md 3, case 7)."""
    position = {"hand": "6C", "table": "AD 2D 3D 4S"}
    for name, player in players(Rules()).items():
        assert decide(player, _position(Rules(), **position)) == move("6C", "AD 2D 3D"), name
    fewest = Rules(fewest_cards_capture=True)
    for name, player in players(fewest).items():
        assert decide(player, _position(fewest, **position)) == move("6C", "2D 4S"), name


def test_last_play_scopa_is_worth_setting_up() -> None:
    """I deal and hold 7C KC; the opponent's last card is 3S, the stock is empty, the table too.
    Trailing 7C lets KC sweep 7C 3S with the deal's last card: a scopa under last_play_scopa.
    Otherwise both orders give me the same cards, and greedy trails the king."""
    position = {"hand": "7C KC", "table": "", "dealer": True, "opp_hand": "3S", "stock": 0}
    assert decide(GreedyAgent(), _position(Rules(), **position)) == move("KC")
    last = Rules(last_play_scopa=True)
    deal = _position(last, **position)
    assert decide(ISMCTSAgent(last, iterations=40, seed=0), deal) == move("7C")
    assert decide(GreedyAgent(last), deal) == move("KC")  # greedy looks one move ahead only


# Every table -------------------------------------------------------------------------------

MOVES = Path(__file__).parent / "data" / "scopa_moves.npz"
SEAT_TABLES = ("scopa_3", "scopa_4", "scopa_6")


def test_players_keep_their_two_player_moves() -> None:
    """The same moves on 450 two-player observations as before the tables of more seats
    (saved by ``tests/data/make_scopa_moves.py``; the search player on every third)."""
    saved = np.load(MOVES)
    for rules in ("scopa", "napola", "scopa_a_quindici"):
        observations = saved[f"{rules}/observation"]
        masks = saved[f"{rules}/action_mask"]
        players = {
            "greedy": lambda i, r=rules: GreedyAgent(rules=r),
            "heuristic": lambda i, r=rules: HeuristicAgent(rules=r),
            "random": lambda i: RandomAgent(seed=i),
            "ismcts": lambda i, r=rules: ISMCTSAgent(rules=r, iterations=24, seed=i),
        }
        for name, make in players.items():
            rows = range(0, len(masks), 3 if name == "ismcts" else 1)
            got = [
                make(i).act({"observation": observations[i], "action_mask": masks[i]}) for i in rows
            ]
            assert got == saved[f"{rules}/{name}"][list(rows)].tolist(), (rules, name)


@pytest.mark.parametrize("table", sorted(set(TABLES) - {"scopa"}))
@pytest.mark.parametrize(
    "name", ["random", "greedy", "heuristic", "ismcts", "alphabeta", "alphabeta:paranoid"]
)
def test_every_player_plays_only_legal_actions_at_every_table(table: str, name: str) -> None:
    rules = Rules(napola=True, re_bello=True)
    options = {
        "ismcts": {"iterations": 12},
        "alphabeta": {"samples": 3},
        "alphabeta:paranoid": {"samples": 3, "search": "paranoid"},
    }.get(name, {})
    player = make_agent(name.split(":")[0], rules=rules, seed=3, **options)
    env = make_aec(table, rules=rules, episode="deal")
    picks = 0
    for seed in range(2):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            obs = env.observe(env.agent_selection)
            action = player.act(obs)
            assert obs["action_mask"][action] == 1, (table, name, action)
            picks += action >= 40
            env.step(action)
        assert env.deal.is_over


#: The tables each player can sit at: every one, its network's, or two-player Scopa's alone.
EVERY_TABLE = ("random", "greedy", "heuristic", "ismcts", "alphabeta", "last_round:base=greedy")
NETWORK_TABLE = {name: name.removeprefix("pretrained_") for name in SHIPPED_CHECKPOINTS} | {
    "pretrained_v4": "scopa",
    "pretrained_v5": "scopa",
}


@pytest.mark.parametrize(
    "name", sorted({*AGENTS, *SHIPPED_CHECKPOINTS, *EVERY_TABLE, "alphabeta:infer=True"})
)
def test_a_player_is_seated_exactly_where_it_plays(name: str) -> None:
    """``check_table``, which every command runs before it writes or plays anything, admits a
    player at the tables it plays (it makes a legal move there) and refuses it, naming it, at
    the others; a player refused for playing two-player Scopa only also refuses the move."""
    rules = Rules()
    player = PlayerSpec.parse(name).build(rules, seed=0)
    seated = []
    for table in TABLES:
        env = make_aec(table, rules=rules, episode="deal")
        env.reset(seed=1)
        observation = env.observe(env.agent_selection)
        if hasattr(player, "show"):  # the oracle is shown the true deal, as the harness does
            player.show(env.deal)
        try:
            check_table(player, table, name)
        except (PlayerError, TableError) as refusal:
            assert str(refusal).startswith(name), refusal
            if getattr(player, "two_player_only", None) is not None:
                seats = f"this table has {TABLES[table].players} seats"
                with pytest.raises(PlayerError, match=f"plays two-player Scopa only.*{seats}"):
                    player.act(observation)
            continue
        seated.append(table)
        assert observation["action_mask"][player.act(observation)], (name, table)
    if name in EVERY_TABLE:
        assert seated == list(TABLES)
    else:
        assert seated == [NETWORK_TABLE.get(name, "scopa")]


def seat_position(table: str, hands: list[str], on_table: str, **kwargs) -> Deal:
    """A deal at the start of a round: these hands (seat 0 leads) and table; whole rounds in
    the stock, the other cards in seat 1's pile."""
    kind = resolve_table(table)
    held = [parse_cards(h) for h in hands]
    piles: list[list[int]] = [[] for _ in range(kind.players)]
    for seat, cards in kwargs.pop("piles", {}).items():
        piles[seat] = list(parse_cards(cards))
    used = {*parse_cards(on_table), *(c for h in held for c in h), *sum(piles, [])}
    rest = [c for c in range(40) if c not in used]
    stock = min(len(rest) // kind.round_cards, kind.rounds - 1) * kind.round_cards
    piles[1] += rest[stock:]
    return Deal.from_position(
        hands=held,
        table=parse_cards(on_table),
        stock=rest[:stock],
        captures=piles,
        kind=kind,
        **kwargs,
    )


def seat_observation(deal: Deal, seat: int = 0) -> dict[str, np.ndarray]:
    m = deal.masks
    obs = layout_for(deal.kind).encode(
        m["hands"], m["table"], m["piles"], m["played"], len(deal.stock), deal.scope,
        deal.last_capturer, deal.dealer, seat,
    )  # fmt: skip
    return {"observation": obs}


def others(table: str, *hands: str) -> list[str]:
    """Three cards each for the seats after seat 0 that the hands given do not name."""
    kind = TABLES[table]
    spare = [card_name(c) for c in parse_cards("AC AS AB 2C 2S 6C 6S 6B JC JS JB QC QB KC KB")]
    named = list(hands)
    while len(named) < kind.players:
        named.append(" ".join(spare[:3]))
        spare = spare[3:]
    return named


@pytest.mark.parametrize("table", SEAT_TABLES)
def test_greedy_prefers_the_capture_that_leaves_the_next_opponent_no_sweep(table: str) -> None:
    # 4S takes 4C and leaves 3C 7S (a king sweeps); 3B takes 3C, as much, and leaves 4C 7S: 11.
    hands = others(table, "4S 3B QS")
    deal = seat_position(table, hands, "4C 3C 7S")
    assert GreedyAgent().act(seat_observation(deal)) == parse_card("3B")
    # Two-player Scopa keeps its valuation (the risk is charged to trails only).
    assert GreedyAgent().act(_observation("4S 3B QS", "4C 3C 7S", Rules())) == parse_card("4S")


@pytest.mark.parametrize("table", SEAT_TABLES)
def test_rule_players_trail_away_from_a_sweep_at_every_table(table: str) -> None:
    # Nothing captures; trailing 2B leaves 5C 3C 2B = 10, which any king sweeps.
    deal = seat_position(table, others(table, "KS 2B QS"), "5C 3C")
    obs = seat_observation(deal)
    for player in (GreedyAgent(), HeuristicAgent(), ISMCTSAgent(iterations=60, seed=0)):
        assert player.act(obs) != parse_card("2B"), type(player).__name__


def test_heuristic_counts_a_partners_pile_as_its_sides() -> None:
    heuristic = HeuristicAgent()
    hands = others("scopa_4", "4S 3B QS")
    alone = seat_position("scopa_4", hands, "4C 3C 7S")
    # The partner (seat 2) has taken six coins: the coins are my side's, a coin is a card.
    partner = seat_position("scopa_4", hands, "4C 3C 7S", piles={2: "AD 2D 3D 4D 5D 6D"})
    for deal, coin_bonus in ((alone, CardValues().coin), (partner, 0)):
        info = InfoState.from_observation(seat_observation(deal)["observation"])
        values = heuristic.card_values(info)
        assert values[parse_card("JD")] - values[parse_card("JC")] == coin_bonus
    # The same six coins in the next opponent's pile are theirs: decided too, but not ours.
    theirs = seat_position("scopa_4", hands, "4C 3C 7S", piles={1: "AD 2D 3D 4D 5D 6D"})
    info = InfoState.from_observation(seat_observation(theirs)["observation"])
    assert info.piles[1] & mask_of(parse_cards("AD 6D")) and not info.piles[0]


def test_heuristic_leaves_the_last_cards_to_a_partner_who_captured_last() -> None:
    heuristic = HeuristicAgent()
    kind = TABLES["scopa_4"]
    # The last play of the deal: I (seat 3, the dealer) trail the king; 7D stays on the table.
    rest = [c for c in range(40) if c not in parse_cards("KS 7D")]
    for last, sign in ((1, 1), (0, -1)):  # seat 1 is my partner, seat 0 an opponent
        deal = Deal.from_position(
            hands=[(), (), (), parse_cards("KS")],
            table=parse_cards("7D"),
            captures=[rest[:10], rest[10:20], rest[20:30], rest[30:]],
            current_player=3,
            first_player=0,
            last_capturer=last,
            kind=kind,
        )
        info = InfoState.from_observation(seat_observation(deal, seat=3)["observation"])
        assert info.is_last_play
        move = (parse_card("KS"), 0)
        score = heuristic.move_score(info, move, heuristic.card_values(info))
        assert sign * score > 0


def test_heuristic_decides_categories_by_each_rival_apart() -> None:
    values = CardValues()
    # Two rivals with 12 cards each hold 24 together, but neither has won the most cards.
    a, b = mask_of(range(12)), mask_of(range(12, 24))
    apart = values.in_position(Rules(), 0, a | b, rivals=(a, b))
    pooled = values.in_position(Rules(), 0, a | b)
    assert apart[39] - pooled[39] == values.card


@pytest.mark.parametrize("table", [*SEAT_TABLES, "scopone"])
def test_determinizer_deals_every_hidden_hand(table: str) -> None:
    env = make_aec(table, episode="deal")
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(TABLES[table].players + 2):  # into the first round, a few seats played
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    while env.phase == "pick":
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    seat = env.possible_agents.index(env.agent_selection)
    deal, n = env.deal, env.deal.num_players
    view = SeatView.from_observation(env.observe(env.agent_selection)["observation"])
    sampled = Determinizer(view, Rules()).sample
    found = [0] * n
    for _ in range(400):
        sample = sampled(rng)
        assert sample.current_player == 0 and sample.kind.sides == deal.kind.sides
        for k in range(n):
            mine = (seat + k) % n
            assert len(sample.hands[k]) == len(deal.hands[mine])
            found[k] |= mask_of(sample.hands[k])
        assert mask_of(sample.hands[0]) == mask_of(deal.hands[seat])
        assert mask_of(sample.table) == mask_of(deal.table)
        hidden = mask_of(sample.stock)
        for k in range(1, n):
            hidden |= mask_of(sample.hands[k])
        assert hidden == view.info.unseen
        if table != "scopone":  # Scopone's view keeps the piles per partnership
            for k in range(n):
                assert mask_of(sample.captures[k]) == mask_of(deal.captures[(seat + k) % n])
        assert Deal.from_dict(sample.to_dict()) == sample
    for k in range(1, n):  # every unseen card can be in every other hand
        assert found[k] == view.info.unseen


def test_side_rewards_are_points_minus_the_mean_of_the_others() -> None:
    # scopa_3, finished: seat 0 holds every card but the coins A-4 (seat 1) and KS (seat 2).
    coins = parse_cards("AD 2D 3D 4D")
    rest = [c for c in range(40) if c not in {*coins, parse_card("KS")}]
    deal = Deal.from_position(
        hands=[(), (), ()], table=(), captures=[rest, coins, parse_cards("KS")],
        scope=[1, 0, 2], kind="scopa_3",
    )  # fmt: skip
    # Seat 0: cards, coins (6 of 10), settebello, primiera and a scopa = 5; seat 2: 2 scope.
    assert [s.total for s in deal.score()] == [5, 0, 2]
    assert side_rewards(deal, 1.0) == [5 - 1.0, 0 - 3.5, 2 - 2.5]
