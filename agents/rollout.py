"""A search guided by a network's play: the network's policy, improved by rollouts.

Each decision samples ``samples`` deals consistent with what the player has seen
(``agents.alphabeta``'s sampling, with its ``infer`` option) and, in each, plays every root move and
then the rest of the deal with the network (the shipped policy network, ``pretrained_v5``, or
another checkpoint) choosing every later move for both seats, each from its own observation of the
sampled deal. This is policy improvement by Monte Carlo rollouts (Tesauro and Galperin 1996): the
rollouts estimate what each root move is worth when the network plays on, and the player improves on
the network's own choice where they show a better move.

The rollouts are few (a rollout costs a forward pass of the network a ply), so their estimates
are noisy, and taking the best total follows the noise as often as the network's mistakes. Two
things keep the comparison fair. The root moves share the samples and a deterministic rollout
policy (the network's most likely card), so the difference between two moves on one sample is
not the luck of the hidden cards. And the network's own move is kept unless another move gains
on it by more than ``confidence`` standard errors of its paired gains: on 60 duplicate deals
against the bare network, the best total at 16 samples scored +0.03 +- 0.43 points per deal,
the same rollouts with ``confidence=1`` +0.44 +- 0.38 (and +0.69 +- 0.33 at 32 samples).

With ``seat_network`` the rollouts are played by a seat-value network instead
(``agents.seat_value``): each rollout move is the one whose afterstate the network values most
for its mover, read from that seat's view of the sampled deal (its hand, the table, the piles,
and the other hand with the stock as the cards it has not seen), as ``seat_value`` plays. Such a
network plays better than the policy networks but values every move, not every decision, in its
forward pass: one without attention (``layers=0``) is cheap enough.

The rollouts of all samples and root moves advance together, one batched forward pass of the
network a ply. Once the stock is empty the sampled deal is the whole truth to both players: the
rest is solved exactly (``AlphaBeta``), at the root as ``alphabeta`` does and, with
``exact_last_round``, inside each rollout that reaches the last round (cheaper than the
network's six more plies). Where the network's card has several captures, the rollout takes
greedy's best of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from agents.alphabeta import AlphaBeta, AlphaBetaAgent
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.guided import LeafValuer, Root, load_network
from agents.policy import SHIPPED_POLICY
from agents.seat_value import (
    NO_PLAYS,
    SeatEnsemble,
    SeatValue,
    afterstate_row,
    load_seat_network,
    seat_network_path,
)
from agents.seats import SeatView
from agents.values import CardValues
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import Deal, MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules

_MASKED = np.float32(-np.inf)


class RolloutPolicy(Protocol):
    """What plays the moves of the rollouts: a move for the seat to move in each deal, among
    ``options``, each deal's moves to choose from (its legal moves where ``None``)."""

    def choose(
        self, deals: list[Deal], root: Root, options: list[list[MaskMove]] | None = None
    ) -> list[MaskMove]: ...


class PolicyRollouts:
    """Rollout moves by a policy network: its most likely card among the legal ones, each deal
    observed by its seat to move; greedy's best capture where that card has several."""

    def __init__(self, policy: object, valuer: MoveValuer) -> None:
        self.leaf = LeafValuer(policy)
        self.valuer = valuer

    def choose(
        self, deals: list[Deal], root: Root, options: list[list[MaskMove]] | None = None
    ) -> list[MaskMove]:
        logits = self.leaf.logits(self.leaf.observations(deals, root))
        options = options or [deal.legal_mask_moves() for deal in deals]
        return [
            self.choice(deal.masks["table"], moves, row)
            for deal, moves, row in zip(deals, options, logits, strict=True)
        ]

    def choice(self, table: int, moves: list[MaskMove], logits: np.ndarray) -> MaskMove:
        """Of ``moves``, one with the network's most likely card; greedy's best capture where
        that card has several."""
        if len(moves) > 1:
            legal = np.full(NUM_CARDS, _MASKED)
            cards = [card for card, _ in moves]
            legal[cards] = logits[cards]
            card = int(legal.argmax())
            moves = [m for m in moves if m[0] == card]
            if len(moves) > 1:
                return self.valuer.best_move(table, moves, False, (0, 0))
        return moves[0]


class SeatRollouts:
    """Rollout moves by a seat-value network: the move whose afterstate it values most for the
    seat to move (``agents.seat_value``); every move of every deal in one forward pass."""

    def __init__(self, net: SeatValue | SeatEnsemble) -> None:
        self.net = net
        self._plays = NO_PLAYS if net.plays else ()  # the opponent's plays are not followed

    def choose(
        self, deals: list[Deal], root: Root, options: list[list[MaskMove]] | None = None
    ) -> list[MaskMove]:
        options = options or [deal.legal_mask_moves() for deal in deals]
        rows = [
            afterstate_row(deal, card, capture)[0] + self._plays
            for deal, moves in zip(deals, options, strict=True)
            if len(moves) > 1
            for card, capture in moves
        ]
        values = self.net.values(np.array(rows, np.int64)) if rows else np.zeros(0)
        chosen, start = [], 0
        for moves in options:
            if len(moves) > 1:
                chosen.append(moves[int(np.argmax(values[start : start + len(moves)]))])
                start += len(moves)
            else:
                chosen.append(moves[0])
        return chosen


class RolloutAgent(AlphaBetaAgent):
    """Search player: every root move rolled out by the network on sampled deals (module doc).

    About 41-48 ms of CPU a move at the defaults on the first machines measured, 22 ms on the
    ladder's (the harness's measure). With the previous network (``pretrained_v4``), over 300
    duplicate deals against that network (``scopa eval rollout:network=pretrained_v4 pretrained_v4
    --deals 300 --seed 0``): +0.272 +- 0.143 points per deal; against ``ismcts`` (300 iterations,
    ``--deals 2000 --seed 0``): +0.007 +- 0.064. With the current one, ``rollout:samples=48``
    against ``ismcts``: +0.119 +- 0.065 at 39.9 ms a move (``--deals 2000 --seed 0``).

    Args: as ``AlphaBetaAgent`` (``samples``, ``endgame_plies``, ``infer`` and its model's
        options; ``depth`` is not used), and
        network: the network that plays the rollouts: a shipped policy network by name
            (``pretrained_v5``, the default, ``agents.policy.SHIPPED_POLICY``, or
            ``pretrained_v4``) or the path of a MaskablePPO checkpoint of two-player Scopa.
        seat_network: a seat-value network plays the rollouts instead (module doc; not with
            ``network``): the path of a ``SeatValue`` or ``SeatEnsemble`` or a shipped one's name
            (``single``, ``ensemble``; ``agents.seat_value.SHIPPED_NETWORKS``). Without
            ``exact_last_round`` it plays the last round too, which it was not fitted on.
        exact_last_round: a rollout that reaches the deal's last round is finished by the
            exact solver instead of the network.
        confidence: play another move than the network's own only where its mean gain over
            it, paired sample by sample, exceeds this many standard errors (``None``: the
            best total, however small its lead).
        torch_threads: torch's threads (set for the whole process; one, as the harness runs
            every network player).
    """

    name = "rollout"
    two_player_only = "its network reads two-player positions"

    def __init__(
        self,
        rules: Rules | str | None = None,
        samples: int = 24,
        endgame_plies: int = 5,
        network: str | None = None,
        seat_network: str | None = None,
        exact_last_round: bool = True,
        confidence: float | None = 1.0,
        infer: bool = False,
        candidates: int | None = None,
        temperature: float = 50.0,
        uniform: float = 0.02,
        capture_bonus: float = 2.5,
        torch_threads: int = 1,
        seed: int | None = None,
        values: CardValues | None = None,
    ) -> None:
        super().__init__(
            rules,
            samples=samples,
            endgame_plies=endgame_plies,
            seed=seed,
            values=values,
            infer=infer,
            candidates=candidates,
            temperature=temperature,
            uniform=uniform,
            capture_bonus=capture_bonus,
        )
        import torch

        torch.set_num_threads(torch_threads)
        if network is not None and seat_network is not None:
            raise ValueError(
                f"network {network!r} and seat_network {seat_network!r} both name who plays the "
                "rollouts: give one"
            )
        self.network = network
        self.exact_last_round = exact_last_round
        if confidence is not None and confidence < 0:
            raise ValueError(f"confidence is a number of standard errors, >= 0: got {confidence}")
        self.confidence = confidence
        self.rollout_policy: RolloutPolicy
        if seat_network is None:
            self.path, policy = load_network(network or SHIPPED_POLICY)
            self.rollout_policy = PolicyRollouts(policy, self.valuer)
        else:
            self.path = seat_network_path(seat_network)
            self.rollout_policy = SeatRollouts(load_seat_network(self.path, self.rules))

    def move_values(self, view: SeatView, moves: list[MaskMove]) -> list[int]:
        """Each move's rollout value summed over the sampled deals (hundredths of a point).

        With ``confidence``, each move's mean gain on the network's own move less
        ``confidence`` standard errors, times twice the samples, and 1 for the network's move:
        it wins every tie, and another move only where that lower bound is above zero.
        """
        info = view.info
        if self.solves_exactly(info):
            return super().move_values(view, moves)  # exact: the rollouts would add nothing
        determinizer = Determinizer(view, self.rules)
        sampled = self.sampled_deals(determinizer, info)
        root = Root.of(info, sampled[0][0].dealer)
        children = []
        for deal, _ in sampled:
            for card, capture in moves:
                child = deal.copy()
                child.play_unchecked(card, capture)
                children.append(child)
        values = np.array(self.rollout_values(children, root), np.float64)
        counts = [count for _, count in sampled]
        values = np.repeat(values.reshape(len(sampled), len(moves)), counts, axis=0)
        if self.confidence is None:
            return [int(v) for v in values.sum(axis=0)]
        own = self.network_move(sampled[0][0], moves, root)
        gain = values - values[:, [own]]
        n = len(gain)
        error = gain.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros(len(moves))
        score = gain.mean(axis=0) - self.confidence * error
        totals = [2 * round(n * s) for s in score]  # doubled, so that the network's own
        totals[own] = 1  # move wins every tie
        return totals

    def points_per_total(self, info: InfoState) -> float:
        """Points per deal of one unit of ``move_values``' totals; with ``confidence`` these
        are doubled, so a move's value is the lower bound of its gain on the network's own move
        (and the network's own move is worth next to nothing, ``1 / (200 * samples)``)."""
        plain = super().points_per_total(info)
        if self.confidence is None or self.solves_exactly(info):
            return plain
        return plain / 2

    def network_move(self, deal: Deal, moves: list[MaskMove], root: Root) -> int:
        """The index in ``moves`` of the move the rollouts would choose among them for seat 0
        in ``deal`` (any sample: seat 0 observes every sample as it observes the real deal)."""
        return moves.index(self.rollout_policy.choose([deal], root, [moves])[0])

    def rollout_values(self, deals: list[Deal], root: Root) -> list[int]:
        """Play every deal to its end with the network for both seats (batched a ply); each
        one's final value for seat 0, in hundredths of a point. The deals are played in place."""
        exact = AlphaBeta(self.rules, self.valuer)
        values = [0] * len(deals)
        live: Sequence[int] = range(len(deals))
        while True:
            playing = []
            for i in live:
                deal = deals[i]
                if deal.is_over:
                    values[i] = exact.final(deal, 0)
                elif self.exact_last_round and not deal.stock:
                    values[i] = exact.value(deal, NUM_CARDS, 0)
                else:
                    playing.append(i)
            if not playing:
                return values
            chosen = self.rollout_policy.choose([deals[i] for i in playing], root)
            for i, move in zip(playing, chosen, strict=True):
                deals[i].play_unchecked(*move)
            live = playing
