"""How well the opponent models predict a player's cards (``evaluation.prediction``,
``scopa predict``): the likelihoods and the fitted power worked out by hand, and real choices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cli import main as cli
from evaluation.prediction import CardChoice, card_choices, fit_power, mean_log_likelihood, top_one


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


def test_scopa_predict_prints_each_model_on_held_out_choices(capsys) -> None:
    assert cli.main(["predict", "greedy", "--deals", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "card choices of greedy" in out
    assert "| soft greedy" in out and "| network, power 1 |" in out
    assert cli.main(["predict", "no_such_player", "--deals", "1"]) == 2
    assert "no_such_player" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        cli.main(["predict", "greedy", "--deals", "0"])
    assert stopped.value.code == 2
