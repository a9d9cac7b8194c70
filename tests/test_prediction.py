"""How well the opponent models predict a player's cards (``evaluation.prediction``,
``scopa predict``): the likelihoods and the fitted power worked out by hand, and real choices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cli import main as cli
from evaluation.prediction import (
    CardChoice,
    ask_again,
    card_choices,
    fit_power,
    mean_log_likelihood,
    own_log_likelihood,
    own_top_one,
    top_one,
)
from scopa_env.errors import PlayerError


def _choices(played_first: int, total: int, model: list[float], network: list[float]) -> list:
    return [
        CardChoice(0 if k < played_first else 1, np.log(model), np.array(network))
        for k in range(total)
    ]


def test_likelihoods_and_the_power_worked_out_by_hand() -> None:
    # The first card is played 818 times in 1,000, about the logistic of 1.5 (0.8176): with
    # logits 5 and 0 the likeliest power p makes 5p = 1.5.
    choices = _choices(818, 1000, [0.8, 0.2], [5.0, 0.0])
    expected = (818 * math.log(0.8) + 182 * math.log(0.2)) / 1000
    assert mean_log_likelihood(choices) == pytest.approx(expected)
    first = 1 / (1 + math.exp(-2.5))  # power 0.5: logits 2.5 and 0
    expected = (818 * math.log(first) + 182 * math.log(1 - first)) / 1000
    assert mean_log_likelihood(choices, 0.5) == pytest.approx(expected)
    assert fit_power(choices) == pytest.approx(0.3)
    assert top_one(choices, network=True) == top_one(choices, network=False) == 0.818


def test_the_soft_greedy_model_predicts_greedys_cards() -> None:
    choices = card_choices("greedy", deals=2, seed=3)
    assert len(choices) > 20
    for choice in choices:
        assert np.exp(choice.model).sum() == pytest.approx(1.0)
        assert len(choice.network) == len(choice.model) >= 2
        assert 0 <= choice.played < len(choice.model)
    assert top_one(choices, network=False) > 0.9
    uniform = np.mean([-math.log(len(c.model)) for c in choices])
    assert mean_log_likelihood(choices) > uniform


def test_the_players_own_spread_worked_out_by_hand() -> None:
    # Asked again four times, the player played its first card three times and its second once;
    # with half an asking added to each card, shares 3.5 / 5 and 1.5 / 5.
    asked = np.array([3, 1])
    choices = [
        CardChoice(0, np.log([0.5, 0.5]), np.zeros(2), asked),
        CardChoice(1, np.log([0.5, 0.5]), np.zeros(2), asked),
    ]
    assert own_log_likelihood(choices) == pytest.approx((math.log(0.7) + math.log(0.3)) / 2)
    assert own_top_one(choices) == 0.5
    with pytest.raises(ValueError, match="ask_again"):
        own_top_one([CardChoice(0, np.log([0.5, 0.5]), np.zeros(2))])


def test_a_player_with_no_randomness_asked_again_plays_the_same_card() -> None:
    choices = ask_again("greedy", card_choices("greedy", deals=1, seed=3), repeats=3)
    assert len(choices) > 10
    for choice in choices:
        assert choice.asked is not None and choice.asked[choice.played] == 3
    assert own_top_one(choices) == 1.0
    best = np.mean([math.log(3.5 / (3 + 0.5 * len(c.model))) for c in choices])
    assert own_log_likelihood(choices) == pytest.approx(best)


def test_a_player_asked_again_is_one_that_does_not_follow_the_deal() -> None:
    choices = card_choices("greedy", deals=1)
    with pytest.raises(PlayerError, match="alphabeta:infer=True follows the deal"):
        ask_again("alphabeta:infer=True", choices, repeats=2)


def test_scopa_predict_prints_each_model_on_held_out_choices(capsys) -> None:
    assert cli.main(["predict", "greedy", "--deals", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "card choices of greedy" in out
    assert "| soft greedy" in out and "| network, power 1 |" in out
    assert "the player itself" not in out
    assert cli.main(["predict", "ismcts:iterations=20", "--deals", "1", "--repeats", "2"]) == 0
    assert "| the player itself, asked 2 times more |" in capsys.readouterr().out
    assert cli.main(["predict", "no_such_player", "--deals", "1"]) == 2
    assert "no_such_player" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        cli.main(["predict", "greedy", "--deals", "0"])
    assert stopped.value.code == 2
