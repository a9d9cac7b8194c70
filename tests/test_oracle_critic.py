"""The oracle critic (issue 16): a value that sees the hidden cards in training, a player that
never does."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY, encode_deal, oracle_card_policy

from scopa_env.batched import BatchedScopa
from scopa_env.cards import parse_cards
from scopa_env.engine import Deal
from scopa_env.privileged import deal_hidden
from training.config import ConfigError, check_resume, validate


def _planes(*names: str) -> np.ndarray:
    """The 0/1 planes of each group of card names, end to end."""
    out = np.zeros((len(names), 40), np.float32)
    for row, group in enumerate(names):
        out[row, parse_cards(group)] = 1.0
    return out.reshape(-1)


# The block ---------------------------------------------------------------------------------


def test_the_block_is_the_other_hands_in_playing_order_then_the_stock() -> None:
    # Three seats: hands, table, a stock of one round (nine), the rest in seat 0's pile.
    hands = ("7D AC", "KD 3S 5B", "2C 5C 7B")
    table, stock = "4D 6S", "JB QB 7C AS 2S 4S 7S JS QS"
    placed = {c for group in (*hands, table, stock) for c in parse_cards(group)}
    rest = [c for c in range(40) if c not in placed]
    deal = Deal.from_position(
        hands=[parse_cards(h) for h in hands],
        table=parse_cards(table),
        stock=parse_cards(stock),
        captures=(rest, (), ()),
        current_player=1,
        kind="scopa_3",
    )
    np.testing.assert_array_equal(deal_hidden(deal, 1), _planes("2C 5C 7B", "7D AC", stock))
    np.testing.assert_array_equal(deal_hidden(deal, 0), _planes("KD 3S 5B", "2C 5C 7B", stock))
    np.testing.assert_array_equal(deal_hidden(deal, 2), _planes("7D AC", "KD 3S 5B", stock))


def test_the_batched_engine_gives_the_block_of_the_seat_to_act() -> None:
    # The deck in id order, seat 1 first: seat 1 holds AD 3D 5D, seat 0 2D 4D 6D, the table
    # 7D JD QD KD, the stock the other thirty cards (clubs, swords, batons).
    deck = np.arange(40, dtype=np.uint8)
    engine = BatchedScopa(
        2, deal_source=lambda games, new: (np.tile(deck, (len(games), 1)), np.ones(len(games)))
    )
    engine.reset(seed=0)
    stock = " ".join(f"{r}{s}" for s in "CSB" for r in "A234567JQK")
    np.testing.assert_array_equal(engine.hidden()[0], _planes("2D 4D 6D", stock))
    engine.step(np.array([parse_cards("3D")[0]] * 2))  # seat 1 plays 3D: seat 0 to act
    assert engine.player.tolist() == [0, 0]
    np.testing.assert_array_equal(engine.hidden()[1], _planes("AD 5D", stock))


# The policy --------------------------------------------------------------------------------


def _position() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An observation, its legal moves and its true hidden block (player 0 to play)."""
    deal = Deal.from_deck(list(range(39, -1, -1)))
    mask = np.zeros(80, bool)
    mask[list(deal.hands[0])] = True
    return encode_deal(deal), mask, deal_hidden(deal, 0)


def test_the_actor_reads_the_observation_alone_and_the_critic_the_hidden_cards() -> None:
    torch.manual_seed(0)
    policy = oracle_card_policy()
    torch.nn.init.normal_(policy.value_net.weight)  # the oracle's columns start at zero
    obs, mask, hidden = _position()
    other = hidden.copy()
    other[:40], other[40:] = hidden[40:], hidden[:40]  # the hand and the stock swapped
    batch = torch.as_tensor(np.stack([np.r_[obs, hidden], np.r_[obs, other]]))
    masks = np.stack([mask, mask])
    with torch.no_grad():
        probs = policy.get_distribution(batch, action_masks=masks).distribution.probs
        values = policy.predict_values(batch)
    torch.testing.assert_close(probs[0], probs[1], rtol=0, atol=0)
    assert values[0] != values[1]


def test_the_play_policy_is_a_card_policy_with_the_actors_moves() -> None:
    from agents.card_policy import CardPolicy

    torch.manual_seed(1)
    oracle = oracle_card_policy()
    plain = oracle.play_policy()
    assert type(plain) is CardPolicy and plain.observation_space.shape == (373,)
    obs, mask, hidden = _position()
    with torch.no_grad():
        ours = oracle.get_distribution(
            torch.as_tensor(np.r_[obs, hidden])[None], action_masks=mask[None]
        ).distribution.probs
        theirs = plain.get_distribution(
            torch.as_tensor(obs)[None], action_masks=mask[None]
        ).distribution.probs
        # Loaded back, a plain policy gives the oracle the clone's value (the MLP's part at 0).
        fresh = oracle_card_policy()
        fresh.load_play_state_dict(plain.state_dict())
        value = fresh.predict_values(torch.as_tensor(np.r_[obs, hidden])[None])
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    torch.testing.assert_close(value, plain.predict_values(torch.as_tensor(obs)[None]))


# Config ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ppo", "key", "reason"),
    [
        ({"oracle_critic": True, "policy": "mlp"}, "ppo", "oracle_critic needs policy: card"),
        ({"critic_warmup": 2}, "ppo", "which needs oracle_critic: true"),
        ({"critic_warmup": -1, "oracle_critic": True}, "ppo.critic_warmup", "greater than"),
        ({"oracle_critic": "maybe"}, "ppo.oracle_critic", "boolean"),
    ],
)
def test_bad_oracle_settings_name_the_key(ppo: dict, key: str, reason: str) -> None:
    with pytest.raises(ConfigError) as error:
        validate({**TINY, "ppo": {**TINY["ppo"], **ppo}})
    assert f"{key}: " in str(error.value) and reason in str(error.value)


@pytest.mark.parametrize(
    ("warm_start", "reason"),
    [
        ({"critic_samples": 100}, "warm_start.critic_samples fits the critic alone, which needs"),
        ({"critic_samples": -1}, "greater than or equal to 0"),
        ({"critic_epochs": 0}, "greater than or equal to 1"),
    ],
)
def test_bad_critic_fits_are_refused(warm_start: dict, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        validate({**TINY, "warm_start": {**TINY["warm_start"], **warm_start}})


def test_a_critic_fit_needs_a_starting_point() -> None:
    data = {**TINY, "ppo": {**TINY["ppo"], "oracle_critic": True}}
    with pytest.raises(ConfigError, match="fits the critic to the starting point's play"):
        validate({**data, "warm_start": {"critic_samples": 100}})


def test_a_run_cannot_resume_without_its_oracle_critic() -> None:
    oracle = validate({**TINY, "ppo": {**TINY["ppo"], "oracle_critic": True}})
    with pytest.raises(ConfigError, match="ppo.oracle_critic is True in the run, False asked"):
        check_resume(oracle, validate(TINY))


# Whole runs --------------------------------------------------------------------------------

#: The critic fitted alone after the warm start, then four updates, the first three the
#: critic's alone, a checkpoint every two.
ORACLE = {
    **TINY,
    "total_timesteps": 512,
    "checkpoint_every": 2,
    "ppo": {**TINY["ppo"], "oracle_critic": True, "critic_warmup": 3},
    "warm_start": {**TINY["warm_start"], "critic_samples": 256, "critic_epochs": 2},
    "eval": {**TINY["eval"], "every": 0, "final_deals": 0},
}


def _state(path: Path) -> dict[str, torch.Tensor]:
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, device="cpu").policy.state_dict()


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from training.train import train

    run = tmp_path_factory.mktemp("oracle") / "run"
    train(validate(ORACLE), run, progress=False)
    return run


@pytest.mark.slow
def test_an_oracle_run_saves_players_that_play_ordinary_observations(
    oracle_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sb3_contrib import MaskablePPO

    from agents import make_agent
    from cli import main as cli
    from scopa_env import scopa_v0

    for name in ("clone.zip", "final.zip"):
        model = MaskablePPO.load(oracle_run / name, device="cpu")
        assert type(model.policy).__name__ == "CardPolicy", name
        assert model.observation_space.shape == (373,), name
    assert "then the oracle critic fitted alone on " in (oracle_run / "report.md").read_text()
    resumable = MaskablePPO.load(oracle_run / "checkpoints/update_000004/model.zip")
    assert type(resumable.policy).__name__ == "OracleCardPolicy"
    agent = make_agent(str(oracle_run / "final.zip"))
    env = scopa_v0.env(episode="deal")
    env.reset(seed=0)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else agent.act(observation))
    assert not env.agents
    argv = ["eval", str(oracle_run / "final.zip"), "random", "--deals", "2", "--no-progress"]
    argv += ["--out", str(tmp_path / "eval")]
    assert cli.main(argv) == 0
    assert "final.zip" in capsys.readouterr().out


@pytest.mark.slow
def test_the_warmup_moves_the_critic_alone_and_a_resume_is_exact(
    oracle_run: Path, tmp_path: Path
) -> None:
    from training.train import train

    clone = _state(oracle_run / "clone.zip")
    warmed = _state(oracle_run / "checkpoints/update_000002/model.zip")
    actor = {k: warmed[k.replace("mlp_extractor.", "mlp_extractor.actor.")] for k in clone}
    assert all(torch.equal(actor[k], clone[k]) for k in clone if k.startswith("mlp_extractor"))
    assert not torch.equal(warmed["value_net.weight"][:, 16:], torch.zeros(1, 256))
    final = _state(oracle_run / "final.zip")
    assert not all(torch.equal(final[k], clone[k]) for k in clone)  # update 4 moved the actor

    # As if stopped in update 4: resumed from update 2, in the warmup, it ends the same.
    run = tmp_path / "run"
    shutil.copytree(oracle_run, run)
    shutil.rmtree(run / "checkpoints/update_000004")
    (run / "final.zip").unlink()
    train(validate(ORACLE), run, resume=True, progress=False)
    for name in ("final.zip", "checkpoints/update_000004/model.zip"):
        a, b = _state(oracle_run / name), _state(run / name)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), name
