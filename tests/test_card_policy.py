"""The card-sharing policy network: its capture facts follow the rules, old saves still load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from scopa_env.captures import capture_sets
from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, cards_of
from scopa_env.observation import NUM_PLANES, OBS_SIZE, OBS_SLICES, mask_to_plane
from scopa_env.rules import Rules
from training.card_policy import CardNet, CardPolicy

PRETRAINED = Path(__file__).resolve().parents[1] / "agents" / "pretrained" / "model.zip"


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
    assert isinstance(model.policy, CardPolicy) and model.policy.capture_sum is None
    # The saved weights fit today's default network exactly (a strict load).
    fresh = CardNet(OBS_SIZE, model.policy.card_width, model.policy.global_width)
    fresh.load_state_dict(model.policy.mlp_extractor.state_dict())
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
