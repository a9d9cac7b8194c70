"""The card-sharing policy network: its capture facts follow the rules, old saves still load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import oracle_card_policy

from agents.card_policy import CardNet, CardPolicy
from scopa_env.captures import capture_sets
from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, cards_of
from scopa_env.observation import NUM_PLANES, OBS_SIZE, OBS_SLICES, mask_to_plane
from scopa_env.rules import Rules

PRETRAINED = Path(__file__).resolve().parents[1] / "agents" / "pretrained_v5" / "model.zip"


def _positions(count: int, seed: int) -> list[tuple[int, int]]:
    """Random ``(hand, table)`` masks: up to 3 hand cards and up to 8 disjoint table cards."""
    rng = np.random.default_rng(seed)
    positions = []
    for _ in range(count):
        cards = rng.permutation(NUM_CARDS)
        n_table = int(rng.integers(0, 9))
        table = sum(1 << int(c) for c in cards[:n_table])
        hand = sum(1 << int(c) for c in cards[n_table : n_table + 3])
        positions.append((hand, table))
    return positions


def _observations(positions: list[tuple[int, int]]) -> torch.Tensor:
    obs = np.zeros((len(positions), OBS_SIZE), np.float32)
    for row, (hand, table) in zip(obs, positions, strict=True):
        row[OBS_SLICES["hand"]] = mask_to_plane(hand)
        row[OBS_SLICES["table"]] = mask_to_plane(table)
    return torch.as_tensor(obs)


def _sum_capture(net: CardNet, obs: torch.Tensor) -> torch.Tensor:
    """Per card: whether some subset of the table makes the total it captures."""
    table_by_rank = obs[:, OBS_SLICES["table"]] @ net.rank
    return net.capture_facts(table_by_rank)[1]


@pytest.mark.parametrize("preset", ["scopa", "scopa_a_quindici"])
def test_capture_feature_is_one_exactly_when_the_hand_card_can_capture(preset: str) -> None:
    """Classic: some table cards sum to the card's value; a quindici: to 15 minus it. Either
    way, exactly when the engine's capture sets for that card are not empty."""
    rules = Rules.preset(preset)
    net = CardNet(OBS_SIZE, 8, 16, capture_sum=rules.capture_sum)
    positions = _positions(300, seed=0)
    reachable = _sum_capture(net, _observations(positions))
    checked = {0: 0, 1: 0}
    for i, (hand, table) in enumerate(positions):
        table_values = [int(CAPTURE_VALUE[c]) for c in cards_of(table)]
        for card in cards_of(hand):
            can_capture = bool(capture_sets(table, card, rules))
            assert reachable[i, card] == float(can_capture), (preset, table_values, card)
            checked[int(can_capture)] += 1
    assert min(checked.values()) > 50  # both answers are exercised


@pytest.mark.parametrize(
    ("table_values", "a_quindici", "classic"),
    [((3, 5), 1, 0), ((8,), 1, 0), ((7,), 0, 1), ((2, 5), 0, 1), ((9,), 0, 0)],
)
def test_a_seven_makes_fifteen_a_quindici_and_takes_its_sum_in_classic_scopa(
    table_values: tuple[int, ...], a_quindici: int, classic: int
) -> None:
    """The capture feature of a seven in hand, on a few tables."""
    worth = {v: [c for c in range(NUM_CARDS) if CAPTURE_VALUE[c] == v] for v in range(1, 11)}
    seven = worth[7][0]  # the table holds the last card of each value, so never this one
    table = sum(1 << worth[v][-1] for v in table_values)
    obs = _observations([(1 << seven, table)])
    for capture_sum, expected in ((15, a_quindici), (None, classic)):
        net = CardNet(OBS_SIZE, 8, 16, capture_sum=capture_sum)
        assert _sum_capture(net, obs)[0, seven] == expected, capture_sum


def test_capture_sum_changes_only_the_reachable_sums_summary() -> None:
    """Same per-card inputs either way; the global summary sees sums 0..14 instead of 0..10."""
    classic = CardNet(OBS_SIZE, 64, 128)
    quindici = CardNet(OBS_SIZE, 64, 128, capture_sum=15)
    shapes = {k: v.shape for k, v in classic.state_dict().items()}
    assert shapes["card_in.weight"] == (64, NUM_PLANES + 10 + 4 + 1 + 4)
    assert shapes["global_net.0.weight"] == (128, OBS_SIZE + NUM_PLANES * 14 + 11)
    for name, weights in quindici.state_dict().items():
        grown = (128, OBS_SIZE + NUM_PLANES * 14 + 15)
        assert weights.shape == (grown if name == "global_net.0.weight" else shapes[name]), name
    logits, value = quindici(_observations(_positions(4, seed=1)))
    assert logits.shape == (4, 2 * NUM_CARDS) and value.shape == (4, 128)


def test_pretrained_checkpoint_loads_unchanged_and_plays_legal_moves() -> None:
    from sb3_contrib import MaskablePPO

    from scopa_env.single_agent import ScopaSingleAgentEnv

    model = MaskablePPO.load(PRETRAINED, device="cpu")
    policy = model.policy
    assert isinstance(policy, CardPolicy) and policy.capture_sum is None
    # The saved weights fit the network its saved options describe exactly (a strict load).
    fresh = CardNet(OBS_SIZE, policy.card_width, policy.global_width, lookahead=policy.lookahead)
    fresh.load_state_dict(policy.mlp_extractor.state_dict())
    env = ScopaSingleAgentEnv(opponent="greedy", episode="deal")
    obs, _ = env.reset(seed=5)
    done = False
    while not done:
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]
        obs, _, done, _, _ = env.step(int(action))


def test_card_policy_saves_and_reloads_with_its_capture_sum(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from scopa_env.single_agent import ScopaSingleAgentEnv

    env = ScopaSingleAgentEnv(rules="scopa_a_quindici", episode="deal")
    kwargs = {"card_width": 8, "global_width": 16, "capture_sum": 15}
    model = MaskablePPO(
        CardPolicy, env, n_steps=16, batch_size=16, policy_kwargs=kwargs, seed=0, device="cpu"
    )
    assert model.policy.mlp_extractor.capture_sum == 15
    model.save(tmp_path / "model.zip")
    loaded = MaskablePPO.load(tmp_path / "model.zip", device="cpu")
    assert loaded.policy.capture_sum == 15 and loaded.policy.mlp_extractor.capture_sum == 15
    obs = _observations(_positions(8, seed=2))
    with torch.no_grad():
        expected = model.policy.get_distribution(obs).distribution.logits
        got = loaded.policy.get_distribution(obs).distribution.logits
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_ppo_kwargs_pass_the_capture_sum_to_the_card_policy_only_when_the_rules_have_one() -> None:
    from training.config import validate
    from training.train import ppo_kwargs

    quindici = ppo_kwargs(validate({"name": "q", "rules": "scopa_a_quindici"}))
    assert quindici["policy_kwargs"]["capture_sum"] == 15
    classic = ppo_kwargs(validate({"name": "c", "rules": "scopa"}))
    assert "capture_sum" not in classic["policy_kwargs"]
    mlp = ppo_kwargs(validate({"name": "m", "rules": "scopa_a_quindici", "ppo": {"policy": "mlp"}}))
    assert "capture_sum" not in mlp["policy_kwargs"]


# Lookahead facts ---------------------------------------------------------------------------

_LOOKAHEAD = (
    "left_total",
    "sweep",
    "sweepable",
    "sweepers",
    "reply_capturers",
    "left_count",
    "ambiguous",
)
_WORTH = {v: [c for c in range(NUM_CARDS) if CAPTURE_VALUE[c] == v] for v in range(1, 11)}


def _lookahead(net: CardNet, hand: int, table: int) -> dict[str, torch.Tensor]:
    """The lookahead facts of every card, the cards in neither hand nor table being unseen."""
    obs = _observations([(hand, table)])
    obs[0, OBS_SLICES["unseen"]] = torch.as_tensor(mask_to_plane(~(hand | table) & (2**40 - 1)))
    table_by_rank = obs[:, OBS_SLICES["table"]] @ net.rank
    captures = net.capture_facts(table_by_rank)[1]
    facts = net.lookahead_facts(table_by_rank, obs[:, OBS_SLICES["unseen"]] @ net.rank, captures)
    return {name: facts[0, :, i] for i, name in enumerate(_LOOKAHEAD)}


def test_trailing_a_four_on_two_and_three_leaves_nine_for_an_unseen_nine_to_sweep() -> None:
    net = CardNet(OBS_SIZE, 8, 16, lookahead=True)
    four = _WORTH[4][0]
    facts = _lookahead(net, 1 << four, (1 << _WORTH[2][0]) | (1 << _WORTH[3][0]))
    assert facts["left_total"][four] == pytest.approx(9 / 40)
    assert facts["sweep"][four] == 0 and facts["sweepable"][four] == 1
    assert facts["sweepers"][four] == 1.0  # all four nines are unseen
    # The table left is 2, 3, 4: unseen 2s, 3s, 4s (three each), 5s, 6s, 7s and 9s capture.
    assert facts["reply_capturers"][four] == pytest.approx(2.5)
    assert facts["left_count"][four] == pytest.approx(0.3) and facts["ambiguous"][four] == 0


@pytest.mark.parametrize(("capture_sum", "hand_value"), [(None, 5), (15, 10)])
def test_capturing_the_only_table_card_is_a_sweep(capture_sum: int | None, hand_value: int) -> None:
    net = CardNet(OBS_SIZE, 8, 16, capture_sum=capture_sum, lookahead=True)
    card = _WORTH[hand_value][0]
    facts = _lookahead(net, 1 << card, 1 << _WORTH[5][1])
    assert facts["sweep"][card] == 1 and facts["left_total"][card] == 0
    assert facts["sweepable"][card] == 0 and facts["left_count"][card] == 0
    assert facts["ambiguous"][card] == float(capture_sum is not None)


def test_a_sum_capture_of_the_whole_table_is_a_sweep_whatever_subset_it_takes() -> None:
    net = CardNet(OBS_SIZE, 8, 16, lookahead=True)
    five, six = _WORTH[5][0], _WORTH[6][0]
    facts = _lookahead(net, (1 << five) | (1 << six), (1 << _WORTH[2][0]) | (1 << _WORTH[3][0]))
    assert facts["sweep"][five] == 1 and facts["ambiguous"][five] == 1
    assert facts["sweep"][six] == 0 and facts["left_total"][six] == pytest.approx(11 / 40)
    assert facts["sweepable"][six] == 0  # eleven: no single card takes it in classic scopa


@pytest.mark.parametrize("preset", ["scopa", "scopa_a_quindici"])
def test_lookahead_facts_match_the_engine_capture_sets(preset: str) -> None:
    """Against ``capture_sets`` on random positions, every card of the hand: the total left, the
    sweep, the unseen cards that take the whole table left, and (where the table left does not
    depend on the subset taken) the unseen cards with some capture on it."""
    rules = Rules.preset(preset)
    net = CardNet(OBS_SIZE, 8, 16, capture_sum=rules.capture_sum, lookahead=True)
    checked = {"trail": 0, "sweep": 0, "sweepable": 0, "ambiguous": 0}
    for hand, table in _positions(150, seed=3):
        facts = _lookahead(net, hand, table)
        unseen = cards_of(~(hand | table) & (2**40 - 1))
        for card in cards_of(hand):
            sets = capture_sets(table, card, rules)
            lefts = {table & ~s for s in sets} if sets else {table | 1 << card}
            total = {sum(int(CAPTURE_VALUE[c]) for c in cards_of(left)) for left in lefts}
            assert len(total) == 1 and facts["left_total"][card] * 40 == pytest.approx(total.pop())
            assert facts["sweep"][card] == float(bool(sets) and sets[0] == table)
            sweepers = [
                u
                for u in unseen
                if any(lefts) and all(left in capture_sets(left, u, rules) for left in lefts)
            ]
            assert facts["sweepers"][card] * 4 == pytest.approx(len(sweepers))
            assert facts["sweepable"][card] == float(bool(sweepers))
            # The cards left depend on the subset taken: a sum capture (every capture a quindici).
            multi = bool(sets) and (rules.capture_sum is not None or sets[0].bit_count() > 1)
            assert facts["ambiguous"][card] == float(multi)
            if not facts["ambiguous"][card]:
                left = min(lefts)  # equal-rank captures leave the same ranks, whichever
                replies = [u for u in unseen if capture_sets(left, u, rules)]
                assert facts["reply_capturers"][card] * 10 == pytest.approx(len(replies))
                assert facts["left_count"][card] * 10 == pytest.approx(left.bit_count())
            checked["trail"] += not sets
            checked["sweep"] += int(facts["sweep"][card])
            checked["sweepable"] += bool(sweepers)
            checked["ambiguous"] += int(facts["ambiguous"][card])
    assert min(checked.values()) > 5, checked


def test_lookahead_only_adds_inputs_and_the_default_network_is_unchanged() -> None:
    """``lookahead=False`` builds the same parameters as before; with ``lookahead=True``,
    ``card_in`` grows by 7 columns and, those set to zero, computes the default network."""
    torch.manual_seed(0)
    plain = CardNet(OBS_SIZE, 64, 128)
    torch.manual_seed(0)
    explicit = CardNet(OBS_SIZE, 64, 128, lookahead=False)
    look = CardNet(OBS_SIZE, 64, 128, lookahead=True)
    for (name, a), (_, b) in zip(
        plain.state_dict().items(), explicit.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)
    assert look.state_dict()["card_in.weight"].shape == (64, NUM_PLANES + 10 + 4 + 1 + 4 + 7)
    state = dict(plain.state_dict())
    state["card_in.weight"] = torch.cat([state["card_in.weight"], torch.zeros(64, 7)], dim=1)
    look.load_state_dict(state)
    obs = _observations(_positions(16, seed=4))
    with torch.no_grad():
        for got, expected in zip(look(obs), plain(obs), strict=True):
            torch.testing.assert_close(got, expected)


def test_a_lookahead_card_policy_saves_and_reloads_with_it(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from scopa_env.single_agent import ScopaSingleAgentEnv

    env = ScopaSingleAgentEnv(episode="deal")
    kwargs = {"card_width": 8, "global_width": 16, "lookahead": True}
    model = MaskablePPO(
        CardPolicy, env, n_steps=16, batch_size=16, policy_kwargs=kwargs, seed=0, device="cpu"
    )
    model.save(tmp_path / "model.zip")
    loaded = MaskablePPO.load(tmp_path / "model.zip", device="cpu")
    assert loaded.policy.lookahead and loaded.policy.mlp_extractor.lookahead
    obs = _observations(_positions(8, seed=2))
    with torch.no_grad():
        expected = model.policy.get_distribution(obs).distribution.logits
        got = loaded.policy.get_distribution(obs).distribution.logits
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    plain = {"card_width": 8, "global_width": 16}
    MaskablePPO(CardPolicy, env, n_steps=16, policy_kwargs=plain, device="cpu").save(
        tmp_path / "plain.zip"
    )
    assert not MaskablePPO.load(tmp_path / "plain.zip", device="cpu").policy.lookahead


def test_ppo_kwargs_pass_lookahead_to_the_card_policy_only_when_configured() -> None:
    from training.config import validate
    from training.train import ppo_kwargs

    on = ppo_kwargs(validate({"name": "l", "ppo": {"card_lookahead": True}}))
    assert on["policy_kwargs"]["lookahead"] is True
    assert "lookahead" not in ppo_kwargs(validate({"name": "d"}))["policy_kwargs"]
    mlp = {"name": "m", "ppo": {"policy": "mlp", "card_lookahead": True}}
    assert "lookahead" not in ppo_kwargs(validate(mlp))["policy_kwargs"]


@pytest.mark.parametrize("oracle", [False, True])
def test_softening_keeps_every_argmax_and_flattens_the_played_distribution(oracle: bool) -> None:
    from sb3_contrib import MaskablePPO

    from scopa_env.single_agent import ScopaSingleAgentEnv

    policy: CardPolicy = MaskablePPO.load(PRETRAINED, device="cpu").policy
    env = ScopaSingleAgentEnv(opponent="greedy", episode="deal")
    rows, masks = [], []
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            rows.append(obs)
            masks.append(mask)
            obs, _, done, _, _ = env.step(int(np.flatnonzero(mask)[seed % mask.sum()]))
    obs_t = torch.as_tensor(np.array(rows))
    if oracle:  # the same actor inside an oracle policy, whose hidden block it never reads
        oracle_policy = oracle_card_policy(policy.card_width, policy.global_width, policy.lookahead)
        oracle_policy.load_play_state_dict(policy.state_dict())
        policy = oracle_policy
        obs_t = torch.cat([obs_t, torch.rand(len(rows), 80)], dim=1)
    legal = np.array(masks)
    choice = legal.sum(axis=1) > 1
    assert choice.sum() > 20

    def played() -> torch.distributions.Categorical:
        with torch.no_grad():
            return policy.get_distribution(obs_t, action_masks=legal).distribution

    before = played()
    policy.soften(3.0)
    after = played()
    assert torch.equal(after.probs.argmax(1), before.probs.argmax(1))
    entropy_before, entropy_after = before.entropy()[choice], after.entropy()[choice]
    assert bool((entropy_after >= entropy_before - 1e-6).all())
    assert float(entropy_after.mean()) > 1.5 * float(entropy_before.mean())
    # Each legal logit, less the row's best, is a third of what it was.
    gap_before = before.logits - before.logits.max(1, keepdim=True).values
    gap_after = after.logits - after.logits.max(1, keepdim=True).values
    mask_t = torch.as_tensor(legal)
    torch.testing.assert_close(3 * gap_after[mask_t], gap_before[mask_t], rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="temperature must be positive"):
        policy.soften(0.0)


@pytest.mark.parametrize("oracle", [False, True])
def test_each_head_alone_gives_what_the_joint_forward_gives(oracle: bool) -> None:
    """Acting reads the policy head alone; it must equal the joint forward's, and so must the
    critic's, on the shipped weights and random positions."""
    from sb3_contrib import MaskablePPO

    policy: CardPolicy = MaskablePPO.load(PRETRAINED, device="cpu").policy
    obs = _observations(_positions(64, seed=3))
    if oracle:
        oracle_policy = oracle_card_policy(policy.card_width, policy.global_width, policy.lookahead)
        oracle_policy.load_play_state_dict(policy.state_dict())
        policy = oracle_policy
        obs = torch.cat([obs, torch.rand(len(obs), 80)], dim=1)
    net = policy.mlp_extractor
    with torch.no_grad():
        logits, value = net(obs)
        assert torch.equal(net.forward_actor(obs), logits)
        assert torch.equal(net.forward_critic(obs), value)
