"""Information-set Monte Carlo tree search (SO-ISMCTS, Cowling, Powley and Whitehouse 2012).

Every iteration plays a deal drawn from those consistent with everything the player has seen
(``Determinizer``): below the root move it descends one shared tree of later moves, restricted
to the moves legal in that deal and chosen by UCB1 with availability counts, expands the
greedy-best untried move, plays the deal to its end with the greedy player (random moves with
probability ``epsilon``), and backs up the deal's point difference (divided by
``reward_scale``), each node from the view of the side of the player who made its move.

At every table: the determinization deals every hidden hand (all other seats' and the stock,
``agents.determinize``), and a side's point difference is its points minus the mean of the
other sides' (the environments' reward; at two sides, the difference), so partners share
their captures and any opponent's sweep counts against the side.

At the root the budget is spent by sequential halving (Karnin et al. 2013): in each round every
surviving root move is tried on the *same* sampled deals, and the worse half is dropped. Sharing
the samples (common random numbers) cancels most of the luck of the hidden cards from the
comparison, which matters at a budget of a hundred or so iterations. Against greedy at 150
iterations, plain SO-ISMCTS (UCB at the root, a fresh sample per iteration) scored +0.75 ± 0.32
points per deal (100 duplicate pairs), this scheme +1.04 ± 0.19 (300 pairs; +1.00 without the
tree below the root).

The budget is a number of iterations (reproducible from the seed, whatever the machine's load),
optionally capped by wall-clock time per move.

Besides its move, the search knows how good it found every root move: ``act_batch_with_values``
returns those estimates, which behaviour cloning uses to weigh each decision by its stakes.
"""

from __future__ import annotations

import math
import random
import time

import numpy as np

from agents.base import Observation, RuleAgent
from agents.determinize import Determinizer
from agents.greedy import MoveValuer
from agents.seats import SeatView
from agents.values import CardValues
from scopa_env.actions import NUM_ACTIONS
from scopa_env.engine import Deal, MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules

DEFAULT_ITERATIONS = 300
_MAX_PLANS = 4096


class _Node:
    """A move in the shared tree; statistics are from the view of ``player``, who made it."""

    __slots__ = ("player", "visits", "total", "avail", "children")

    def __init__(self, player: int) -> None:
        self.player = player
        self.visits = 0
        self.total = 0.0
        self.avail = 1
        self.children: dict[MaskMove, _Node] = {}


class ISMCTSAgent(RuleAgent):
    """Search player: SO-ISMCTS with greedy rollouts to the end of the deal.

    The default budget is about 50 ms of CPU a move on the project's reference machine.

    Args:
        rules: the rules (a ``Rules``, preset name or option dict).
        iterations: iterations per decision (the default is about 50 ms a move here).
        time_limit: optional cap in seconds per decision; makes play depend on machine speed.
        exploration: the UCB1 constant, in units of ``reward_scale`` points.
        epsilon: probability of a uniformly random move in a rollout.
        reward_scale: points of deal difference that map to a reward of 1.
        halving: spend the root budget by sequential halving (else evenly over root moves).
        tree: search the moves after the root move (else flat Monte Carlo per root move).
        seed: seed of the player's own randomness (determinizations, rollouts).
    """

    name = "ismcts"

    def __init__(
        self,
        rules: Rules | str | None = None,
        iterations: int = DEFAULT_ITERATIONS,
        time_limit: float | None = None,
        exploration: float = 0.7,
        epsilon: float = 0.0,
        reward_scale: float = 4.0,
        halving: bool = True,
        tree: bool = True,
        seed: int | None = None,
        values: CardValues | None = None,
    ) -> None:
        super().__init__(rules, seed)
        self.halving = halving
        self.tree = tree
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        self.iterations = iterations
        self.time_limit = time_limit
        self.exploration = exploration
        self.epsilon = epsilon
        self.reward_scale = reward_scale
        self.valuer = MoveValuer(self.rules, values)
        #: The rollouts' greedy player at tables of more seats (``GreedyAgent``'s there).
        self.table_valuer = MoveValuer(self.rules, values, leave_risk=True)
        self._random = random.Random(int(self.rng.integers(2**63)))
        self._plans: dict[tuple[int, int, int, int], MaskMove] = {}
        self.last_iterations = 0
        #: The last search's value of each action (mean point difference per deal; NaN where
        #: not searched), or ``None`` before any search.
        self.last_values: np.ndarray | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self._random = random.Random(int(self.rng.integers(2**63)))
        self._plans.clear()

    def act_with_values(self, observation: Observation) -> tuple[int, np.ndarray]:
        """``act``, and the search's value of each action: the mean point difference per deal.

        A card with several captures is worth its best one. Actions that were not searched are
        NaN, as is the whole row of a decision that was not searched (one legal move, or a pick
        of a capture already planned).
        """
        self.last_values = None
        action = self.act(observation)
        if self.last_values is None:
            return action, np.full(NUM_ACTIONS, np.nan, np.float32)
        return action, self.last_values

    def act_batch_with_values(
        self, observations: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``act_with_values`` on each row: actions ``(N,)`` and values ``(N, 80)``."""
        actions = np.empty(len(masks), np.int64)
        values = np.empty((len(masks), NUM_ACTIONS), np.float32)
        for i, (obs, mask) in enumerate(zip(observations, masks, strict=True)):
            actions[i], values[i] = self.act_with_values({"observation": obs, "action_mask": mask})
        return actions, values

    def choose(self, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        raise TypeError("the search player reads every seat: call act (or choose_seen)")

    def choose_seen(self, vector: np.ndarray, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        # The picks that finish a capture follow the move searched when its card was played;
        # plans are kept per position, so one player can serve a batch of games.
        key = (info.full_hand, info.table, info.piles[0], info.piles[1])
        if info.in_pick_phase:
            plan = self._plans.get(key)
            if plan in moves:
                return plan
        move = self.search(SeatView.from_info(info, np.asarray(vector, np.float32)), moves)
        self._plans[key] = move
        if len(self._plans) > _MAX_PLANS:
            del self._plans[next(iter(self._plans))]
        return move

    def search(self, view: SeatView, root_moves: list[MaskMove]) -> MaskMove:
        """The best of ``root_moves`` after the iteration budget (or the time limit)."""
        info = view.info
        determinizer = self.determinizer(view)
        valuer = self.valuer if view.table.players == 2 else self.table_valuer
        k = len(root_moves)
        bonus = self.root_bonus(root_moves) or [0.0] * k
        children = [_Node(player=0) for _ in range(k)]
        totals = [0.0] * k
        counts = [0] * k
        alive = list(range(k))
        rounds = max(1, math.ceil(math.log2(k))) if self.halving else 1
        plies_left = info.cards_to_play - 1
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        iterations = 0
        for round_ in range(rounds):
            samples = max(1, self.iterations // (rounds * len(alive)))
            for _ in range(samples):
                if deadline is not None and iterations and time.perf_counter() > deadline:
                    break
                deal = determinizer.sample(self.rng)
                for i in alive:
                    card, capture = root_moves[i]
                    branch = deal.copy()
                    branch.play_unchecked(card, capture)
                    table = info.table ^ capture if capture else info.table | 1 << card
                    totals[i] += self._iterate(branch, children[i], table, plies_left, valuer)
                    counts[i] += 1
                iterations += len(alive)
            alive.sort(key=lambda i: -(totals[i] / max(counts[i], 1) + bonus[i]))
            if round_ < rounds - 1:
                alive = alive[: math.ceil(len(alive) / 2)]
        self.last_iterations = iterations
        self.last_values = np.full(NUM_ACTIONS, np.nan, np.float32)
        for i, move in enumerate(root_moves):
            if counts[i]:
                a = info.action(move)  # a card's captures share its action: keep the best
                self.last_values[a] = np.fmax(
                    self.last_values[a], self.reward_scale * totals[i] / counts[i]
                )
        return root_moves[alive[0]]

    def determinizer(self, view: SeatView) -> Determinizer:
        """What the search draws its deals from: uniform over those consistent with ``view``
        (``agents.ismcts_value`` can weigh them by the opponent's plays)."""
        return Determinizer(view, self.rules)

    def root_bonus(self, root_moves: list[MaskMove]) -> list[float] | None:
        """What each root move's mean reward is credited with when the root moves are ranked
        (at each round of the halving and at the end); none here (``agents.ismcts_prior``
        credits a network's prior)."""
        return None

    def _iterate(
        self, deal: Deal, node: _Node, table: int, plies_left: int, valuer: MoveValuer
    ) -> float:
        """One ISMCTS iteration below a root move on a sampled deal; returns the reward.

        Descends the tree of later moves (UCB1 with availability counts over the moves legal
        in this deal), expands the greedy-best untried move, values the position it reaches
        (``leaf_rewards``: a rollout), and backs up.
        """
        path = [node]
        if self.tree:
            c = self.exploration
            while plies_left:
                player = deal.current_player
                moves = deal.legal_mask_moves()
                children = node.children
                untried = [m for m in moves if m not in children]
                if untried:
                    piles = _mover_piles(deal) if self.rules.napola else (0, 0)
                    move = valuer.best_move(table, untried, plies_left == 1, piles)
                    for m in moves:
                        if m in children:
                            children[m].avail += 1
                    node = children[move] = _Node(player)
                else:
                    best_score = -math.inf
                    move = moves[0]
                    for m in moves:
                        child = children[m]
                        child.avail += 1
                        score = child.total / child.visits + c * math.sqrt(
                            math.log(child.avail) / child.visits
                        )
                        if score > best_score:
                            best_score, move = score, m
                    node = children[move]
                path.append(node)
                card, capture = move
                deal.play_unchecked(card, capture)
                table = table ^ capture if capture else table | 1 << card
                plies_left -= 1
                if untried:
                    break
        rewards = self.leaf_rewards(deal, table, plies_left, valuer)
        sides = len(rewards)
        for n in path:
            n.visits += 1
            n.total += rewards[n.player % sides]
        return rewards[0]

    def leaf_rewards(
        self, deal: Deal, table: int, plies_left: int, valuer: MoveValuer
    ) -> list[float]:
        """Each side's reward for the position an iteration's tree ends in: the greedy
        rollout's result (``agents.ismcts_value`` mixes in a learnt value). ``deal`` may be
        played on."""
        self._rollout(deal, table, plies_left, self._random, valuer)
        return side_rewards(deal, self.reward_scale)

    def _rollout(
        self, deal: Deal, table: int, plies_left: int, rnd: random.Random, valuer: MoveValuer
    ) -> None:
        """Play to the end of the deal: greedy, with random moves at rate ``epsilon``."""
        best_move = valuer.best_move
        epsilon = self.epsilon
        napola = self.rules.napola  # only napola values depend on the piles
        while plies_left:
            moves = deal.legal_mask_moves()
            if len(moves) == 1:
                card, capture = moves[0]
            elif epsilon and rnd.random() < epsilon:
                card, capture = moves[rnd.randrange(len(moves))]
            else:
                piles = _mover_piles(deal) if napola else (0, 0)
                card, capture = best_move(table, moves, plies_left == 1, piles)
            deal.play_unchecked(card, capture)
            table = table ^ capture if capture else table | 1 << card
            plies_left -= 1


def side_rewards(deal: Deal, scale: float) -> list[float]:
    """Per side of a finished deal: its points minus the mean of the other sides', / ``scale``.

    At two sides the difference, exactly (``(t1 - t0) / s == -((t0 - t1) / s)``).
    """
    totals = [s.total for s in deal.score()]
    others = len(totals) - 1
    everyone = sum(totals)
    return [(t - (everyone - t) / others) / scale for t in totals]


def _mover_piles(deal: Deal) -> tuple[int, int]:
    """The captures of the side to move and of every other side together, as card masks."""
    piles = deal.masks["piles"]
    sides = deal.kind.sides
    side = deal.current_player % sides
    mine = theirs = 0
    for seat, pile in enumerate(piles):
        if seat % sides == side:
            mine |= pile
        else:
            theirs |= pile
    return mine, theirs
