"""A duplicate-deal baseline for the rollouts: every training deal's deck played again.

The points of one deal swing by several from the luck of the cards, far more than a policy
update changes them, so a critic that sees one seat's view leaves most of that luck in PPO's
advantages. The evaluation harness removes it by playing each deck twice; training can do the
same. Each deal a training game starts is also played, in a *shadow* game on the batched engine,
by a fixed reference player (the run's frozen start) in the learner's seats, from the same deck,
first player and seats, against the same pool member; the learner's reward for the deal is its
points minus the shadow's. The shadow depends on the deck and the opponent's own randomness,
never on the learner's actions, so it is a baseline: the policy gradient stays unbiased while
the deal's luck largely cancels.

Shadows are played lazily, all pending ones together: a deal's shadow is needed only when the
training game ends that deal, many steps after it began, so each batch holds the deals begun
over many steps and the reference and the opponents act on it a whole batch at a time.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from scopa_env.batched import BatchedScopa
from scopa_env.cards import NUM_CARDS
from scopa_env.rules import Rules
from scopa_env.tables import Table


def play_deals(
    decks: np.ndarray,
    firsts: np.ndarray,
    seats: np.ndarray,
    reference: Any,
    opponent: Any,
    games: np.ndarray,
    rules: Rules,
    table: Table,
    reward: Literal["match", "points"],
) -> np.ndarray:
    """One deal from each deck (``(k, 40)``, led by ``firsts``), ``reference`` in the side
    ``seats`` and ``opponent`` in every other seat; the reward of the reference's side.

    ``reference.act_batch(obs, masks)`` and ``opponent.act_games(games, obs, masks)`` move;
    ``games`` are the training games the deals shadow, so that a per-game opponent plays each
    deal as it plays the training game.
    """
    k = decks.shape[0]
    engine = BatchedScopa(
        k,
        rules,
        table=table,
        episode="deal",
        reward=reward,
        check_actions=False,
    )
    engine.reset(decks=decks, first_players=firsts)
    sides = engine.table.sides
    total = np.zeros(k, np.float32)
    live = np.arange(k)
    while live.shape[0]:
        obs, masks = engine.obs[live], engine.mask[live]
        mine = engine.player[live] % sides == seats[live]
        actions = np.empty(live.shape[0], np.intp)
        if mine.any():
            actions[mine] = reference.act_batch(obs[mine], masks[mine])
        theirs = ~mine
        if theirs.any():
            actions[theirs] = opponent.act_games(games[live[theirs]], obs[theirs], masks[theirs])
        result = engine.step_games(live, actions)
        total[live] += result.rewards[np.arange(live.shape[0]), seats[live]]
        live = live[~result.terminated]
    return total


class DealBaseline:
    """The shadow games of ``num_envs`` training games: what the reference scored on each
    game's current deal.

    ``record`` notes the deals the training games start (deck, first player, the learner's
    side); ``take`` gives the shadow rewards of deals that just ended, playing every pending
    shadow first if one of them is needed. Nothing is played until ``reference`` is set.
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules,
        table: Table,
        reward: Literal["match", "points"],
        opponent: Any,
    ) -> None:
        self.rules, self.table, self.reward = rules, table, reward
        #: ``act_games(games, obs, masks)``: the shadows' opponents, one per training game.
        self.opponent = opponent
        self.reference: Any = None
        self.pending = np.zeros(num_envs, bool)
        self.decks = np.zeros((num_envs, NUM_CARDS), np.uint8)
        self.firsts = np.zeros(num_envs, np.int8)
        self.seats = np.zeros(num_envs, np.int8)
        #: The shadow's reward on each game's current deal, where it is not pending.
        self.points = np.zeros(num_envs, np.float32)

    @property
    def active(self) -> bool:
        return self.reference is not None

    def record(self, games: np.ndarray, engine: BatchedScopa, seats: np.ndarray) -> None:
        """``games`` start a deal now: the learner holds side ``seats[games]``."""
        if not self.active:
            return
        self.decks[games] = engine.state.deck[games]
        self.firsts[games] = engine.state.first[games]
        self.seats[games] = seats[games]
        self.pending[games] = True

    def flush(self) -> None:
        """Play every pending shadow (before the opponents change, or when one is needed)."""
        games = np.flatnonzero(self.pending)
        if not games.shape[0]:
            return
        self.points[games] = play_deals(
            self.decks[games],
            self.firsts[games],
            self.seats[games],
            self.reference,
            self.opponent,
            games,
            self.rules,
            self.table,
            self.reward,
        )
        self.pending[games] = False

    def take(self, games: np.ndarray) -> np.ndarray:
        """The shadow rewards of the deals ``games`` just ended."""
        if self.pending[games].any():
            self.flush()
        return self.points[games].copy()

    def clear(self) -> None:
        """Forget every recorded deal (the games are dealt afresh)."""
        self.pending[:] = False
