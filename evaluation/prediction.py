"""How well the two opponent models predict a player's cards: the soft greedy model and the
shipped network's policy.

``alphabeta:infer=True`` and ``alphabeta_value:infer=True`` weigh guesses of the opponent's
hand by how likely each makes the cards it played this round (``agents.inference``), by the
soft greedy model or, with ``network_belief``, by the network. The truer that likelihood, the
better the guesses. ``card_choices`` plays a player against itself at two-player Scopa and
records each of its card choices from a hand of two or more cards, with each model's view of
the cards it held: the soft greedy model's log-probability of each (the sum over its captures)
and the network's logit of each. The network's logits are sharper than the play they predict:
``fit_power`` finds the factor of its logits (a temperature's inverse) that makes the
choices likeliest, to be judged on other choices. ``network_belief`` raises the network's
probability of each play to a power without renormalizing it over the cards held: a close
tempering, not the same one, so the fitted factor is a guide to its power.

How far could a better model go? ``ask_again`` puts each choice to the player again, each time
with fresh randomness: the cards it plays then estimate its own spread over the cards it held,
which no model of its choices can predict better (``own_log_likelihood`` and ``own_top_one``).
A player whose choice depends on the deal's earlier observations cannot be asked again alone
and is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from agents.base import Observation, reset_agent
from agents.greedy import MoveValuer
from agents.guided import LeafValuer, load_network
from agents.inference import OpponentModel
from agents.policy import SHIPPED_POLICY
from evaluation.players import PlayerSpec
from scopa_env import scopa_v0
from scopa_env.cards import cards_of
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules

#: The powers ``fit_power`` tries: 0.01 to 2 by 0.01.
POWERS = np.round(np.arange(1, 201) / 100, 2)


@dataclass(frozen=True)
class CardChoice:
    """One card choice: the index of the card played among those held (in card order), the
    soft greedy model's log-probability of each held card and the network's logit of each;
    ``ask_again`` adds how many times the player played each held card when asked again, on
    ``seen``, the observation it chose on."""

    played: int
    model: np.ndarray
    network: np.ndarray
    asked: np.ndarray | None = None
    seen: Observation | None = None


def card_choices(
    player: str, deals: int, seed: int = 0, network: str = SHIPPED_POLICY
) -> list[CardChoice]:
    """Every card choice of ``player`` (a command-line spec) from a hand of two or more cards,
    over ``deals`` deals of self-play at two-player Scopa."""
    rules = Rules()
    spec = PlayerSpec.parse(player)
    seats = {"player_0": spec.build(rules), "player_1": spec.build(rules)}
    seen: list[Observation] = []
    model = OpponentModel(rules, MoveValuer(rules))
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    observations, held, played, model_logs = [], [], [], []
    for deal in range(deals):
        env.reset(seed=seed + deal)
        for k, agent in enumerate(seats.values()):
            agent.reset(seed=2 * (seed + deal) + k)
        while not env.terminations[env.agent_selection]:
            observation = env.observe(env.agent_selection)
            action = int(seats[env.agent_selection].act(observation))
            info = InfoState.from_observation(observation["observation"])
            cards = cards_of(info.hand)
            if info.pending is None and len(cards) > 1:
                by_card = model.card_probabilities(info.hand, info.table)
                observations.append(np.asarray(observation["observation"], np.float32))
                held.append(list(cards))
                played.append(cards.index(action))
                model_logs.append(np.log(np.array([by_card[c] for c in cards])))
                seen.append({key: np.array(value) for key, value in observation.items()})
            env.step(action)
    if not observations:
        return []
    logits = LeafValuer(load_network(network)[1]).logits(np.stack(observations))
    return [
        CardChoice(k, logs, logits[row, cards].astype(np.float64), seen=observation)
        for row, (k, logs, cards, observation) in enumerate(
            zip(played, model_logs, held, seen, strict=True)
        )
    ]


def ask_again(
    player: str, choices: list[CardChoice], repeats: int, seed: int = 0
) -> list[CardChoice]:
    """``choices`` (``card_choices``') with ``asked``: how many times ``player`` plays each card
    it held when each choice is put to it ``repeats`` times more, each time with randomness of
    its own (module doc)."""
    agent = PlayerSpec.parse(player).build(Rules())
    if getattr(agent, "follows_deal", False):
        raise PlayerError(
            f"{player} follows the deal's earlier observations: its choices cannot be asked "
            "again alone"
        )
    out = []
    for index, choice in enumerate(choices):
        if choice.seen is None:
            raise ValueError("a choice asked again needs the observation it was made on (seen)")
        cards = cards_of(InfoState.from_observation(choice.seen["observation"]).hand)
        counts = np.zeros(len(cards), np.int64)
        for k in range(repeats):
            reset_agent(agent, int(np.random.SeedSequence([seed, index, k]).generate_state(1)[0]))
            counts[cards.index(int(agent.act(choice.seen)))] += 1
        out.append(replace(choice, asked=counts))
    return out


def mean_log_likelihood(choices: list[CardChoice], power: float | None = None) -> float:
    """The mean log-probability of the card played: the soft greedy model's (``power`` None)
    or the network's, its logits multiplied by ``power``, then normalized."""
    total = 0.0
    for choice in choices:
        logs = choice.model if power is None else power * choice.network
        top = logs.max()
        total += logs[choice.played] - top - np.log(np.exp(logs - top).sum())
    return total / len(choices)


def top_one(choices: list[CardChoice], network: bool) -> float:
    """How often the model's likeliest card was the card played."""
    return float(
        np.mean([np.argmax(c.network if network else c.model) == c.played for c in choices])
    )


def own_log_likelihood(choices: list[CardChoice]) -> float:
    """The mean log-probability of the card played under the player's own spread, each card's
    share of the askings again (a half asking added to every card held, so that none is 0)."""
    total = 0.0
    for choice in choices:
        asked = _asked(choice)
        total += math.log((asked[choice.played] + 0.5) / (asked.sum() + 0.5 * len(asked)))
    return total / len(choices)


def own_top_one(choices: list[CardChoice]) -> float:
    """How often the card the player played most when asked again was the card played."""
    return float(np.mean([np.argmax(_asked(c)) == c.played for c in choices]))


def _asked(choice: CardChoice) -> np.ndarray:
    if choice.asked is None:
        raise ValueError("the player's own spread needs choices asked again (ask_again)")
    return choice.asked


def fit_power(choices: list[CardChoice]) -> float:
    """The power of ``POWERS`` under which the network makes ``choices`` likeliest."""
    return float(POWERS[int(np.argmax([mean_log_likelihood(choices, p) for p in POWERS]))])
