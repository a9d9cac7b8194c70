"""A search guided by a network: determinized minimax whose leaves the network values.

Each decision samples ``samples`` deals consistent with what the player has seen, as
``agents.alphabeta`` does, and enumerates every line of ``depth`` plies from each root move in
each of them. The positions the lines end in (the leaves) are valued in one batched forward
pass of the shipped policy network (``pretrained_v5``, or another checkpoint), each
observed by the seat to move in it: its value head was trained on each deal's point
difference, undiscounted, so it estimates that seat's final point difference. ``blend`` mixes
in the material balance of ``agents.alphabeta``. The lines are reduced by minimax per sample,
or, with ``replies="policy"``, the opponent's cards are weighed by the network's policy (each
card's best capture for it). The root moves share the samples and the best total wins, ties to
greedy's choice. Once at most ``endgame_plies`` plies follow the root move (the last round),
the deal is solved exactly (``AlphaBetaAgent``'s endgame); ``exact_last_round`` also solves the
leaves that reach the last round inside a sample, where the sample is the whole truth.

``infer`` reads what the opponent's plays this round say about its hand: each sample is
weighted by the network's probability of those plays from the hand it gives the opponent
(``RoundHistory``, rebuilt from my consecutive observations of the deal).

What each variant scored is in the ``GuidedAgent`` docstring.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np

from agents.alphabeta import AlphaBeta, AlphaBetaAgent
from agents.base import Observation
from agents.determinize import Determinizer
from agents.inference import OpponentPlay, PlayTracker
from agents.policy import SHIPPED_POLICY
from agents.seats import SeatView
from agents.values import POINT, CardValues
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import Deal, MaskMove
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.observation import (
    OBS_SIZE,
    OBS_SLICES,
    DealView,
    ObservationWriter,
    deal_blocks,
    encode,
    mask_to_plane,
    view_features,
    writer,
)
from scopa_env.rules import Rules
from scopa_env.tables import SCOPA


@dataclass(frozen=True)
class Root:
    """What every position searched from one decision shares with its observation: each
    seat's ``deal_block`` and the cards each played before the decision (a sampled deal
    starts with none played)."""

    block: tuple[tuple[float, ...], tuple[float, ...]]
    played: tuple[int, int]

    @classmethod
    def of(cls, info: InfoState, dealer: int) -> Root:
        block = deal_blocks(info.match_score, info.target, dealer)
        return cls(block, info.played)


def seat_observations(
    deals: list[Deal], root: Root, write: ObservationWriter | None = None
) -> np.ndarray:
    """``(len(deals), OBS_SIZE)``: each two-player deal observed by its seat to move, as the
    environment would show it after ``root``'s plays."""
    out = np.empty((len(deals), OBS_SIZE), np.float32)
    write = writer() if write is None else write
    block, before = root.block, root.played
    for row, deal in enumerate(deals):
        seat = deal.current_player
        hands, table, piles, played, *rest = deal.view()
        played = [before[0] | played[0], before[1] | played[1]]
        view = cast(DealView, (hands, table, piles, played, *rest))
        out[row] = write(*view_features(view, seat, None, 0, block[seat]))
    return out


class LeafValuer:
    """The network's value of many positions in one forward pass, for the seat of each to move.

    The shipped network's value head was trained on each deal's point difference with no
    discount, so its value of a seat's observation estimates that seat's final point difference
    of the deal; a position is valued for seat 0 by negating the value of the other seat's.
    """

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self._write = writer()

    def observations(self, deals: list[Deal], root: Root) -> np.ndarray:
        """``(len(deals), OBS_SIZE)``: each deal observed by its seat to move."""
        return seat_observations(deals, root, self._write)

    def evaluate(self, deals: list[Deal], root: Root) -> tuple[np.ndarray, np.ndarray]:
        """Each deal's value for seat 0 in points (the network's, for the seat to move), and
        the network's 80 action logits for the seat to move, in one forward pass."""
        if not deals:
            return np.zeros(0), np.zeros((0, 2 * NUM_CARDS), np.float32)
        import torch

        policy = self.policy
        obs = torch.as_tensor(self.observations(deals, root))
        with torch.inference_mode():
            latent_pi, latent_vf = policy.mlp_extractor(policy.extract_features(obs))
            logits = policy.action_net(latent_pi).numpy()
            value = policy.value_net(latent_vf).numpy()[:, 0].astype(np.float64)
        seats = np.fromiter((d.current_player for d in deals), np.int64, len(deals))
        return np.where(seats == 0, value, -value), logits

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """The network's 80 action logits of each observation."""
        import torch

        policy = self.policy
        with torch.inference_mode():
            latent_pi = policy.mlp_extractor.forward_actor(
                policy.extract_features(torch.as_tensor(observations))
            )
            return policy.action_net(latent_pi).numpy()

    def values(self, deals: list[Deal], root: Root) -> np.ndarray:
        """Each deal's value for seat 0 in points (the network's, for the seat to move)."""
        return self.evaluate(deals, root)[0]

    def log_priors(
        self, observation: np.ndarray, info: InfoState, moves: list[MaskMove]
    ) -> np.ndarray:
        """Each move's log-probability under the network's policy from ``observation`` (the
        decision ``info`` reads), over the distinct legal actions of ``moves``; the captures of
        one card share its action, and so its probability, until the capture is picked."""
        logits = self.logits(np.asarray(observation, np.float32)[None])[0].astype(np.float64)
        actions = [info.action(move) for move in moves]
        legal = sorted(set(actions))
        top = logits[legal].max()
        log_total = top + np.log(np.exp(logits[legal] - top).sum())
        return logits[actions] - log_total


@dataclass(frozen=True)
class PlayObservation:
    """One play of the opponent's this round: its observation just before it, with its hand
    left out (the hand plane empty, those cards counted unseen), and the card it played."""

    observation: np.ndarray
    card: int


#: The observation before the deal's first play: no piles, sweeps or capture yet.
_DEAL_START = InfoState(0, 0, (0, 0), (0, 0), 0, None, 0, 0, 0, (0, 0), (0, 0), 0, False, None)


class RoundHistory:
    """The opponent's plays this round as it saw them, from my consecutive observations.

    ``PlayTracker`` finds each play (and forgets the history when an observation does not
    follow the previous one); the observation of mine just before the play and the one after
    it rebuild the position the opponent faced, all but its hand. Its hand then was its hand
    now plus the cards it has played since: for each sampled hand, the network's probability
    of the plays it made is a likelihood of that hand.
    """

    def __init__(self, hand_size: int = SCOPA.hand_size) -> None:
        self.tracker = PlayTracker(hand_size)
        self.plays: list[PlayObservation] = []  # this round's, oldest first
        self._deal: list[PlayObservation] = []  # one per play of ``tracker.plays``

    def clear(self) -> None:
        self.tracker.reset()
        self.plays, self._deal = [], []

    def observe(self, info: InfoState) -> None:
        """Record a play-phase observation of mine (two-player Scopa)."""
        previous, known = self.tracker.last, self.tracker.plays
        plays = self.tracker.observe(info)
        if plays is None:
            self._deal = []
        elif plays is not known:
            if known is None or plays[:-1] != known:  # the tracker started the deal over
                self._deal = []
            if plays:
                opening = not info.played[0] and len(plays) == 1
                before = _DEAL_START if opening or previous is None else previous
                self._deal.append(_seen_by_opponent(before, info, plays[-1]))
        this_round = len(self.tracker.this_round(info))
        self.plays = self._deal[len(self._deal) - this_round :]

    def log_likelihoods(self, hands: list[int], leaf: LeafValuer) -> np.ndarray:
        """Per sampled hand of the opponent now, the network's log-probability of the cards it
        played this round (0 for each when there are none)."""
        if not self.plays:
            return np.zeros(len(hands))
        rows, cards, held = [], [], []
        hand_plane, unseen_plane = OBS_SLICES["hand"], OBS_SLICES["unseen"]
        for k, play in enumerate(self.plays):
            since = 0
            for later in self.plays[k:]:
                since |= 1 << later.card
            for hand in hands:
                then = hand | since
                bits = mask_to_plane(then)
                row = play.observation.copy()
                row[hand_plane] = bits
                row[unseen_plane] -= bits
                rows.append(row)
                cards.append(play.card)
                held.append(then)
        logits = leaf.logits(np.stack(rows))[:, :NUM_CARDS].astype(np.float64)
        allowed = np.stack([mask_to_plane(h) for h in held]) > 0
        logits = np.where(allowed, logits, -np.inf)
        top = logits.max(axis=1, keepdims=True)
        log_p = logits[np.arange(len(rows)), cards] - (
            top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        )
        return log_p.reshape(len(self.plays), len(hands)).sum(axis=0)


def _seen_by_opponent(before: InfoState, after: InfoState, play: OpponentPlay) -> PlayObservation:
    """The opponent's observation as it made ``play``, its hand left out, from my observations
    just before my move that preceded the play (``before``) and just after the play."""
    card = 1 << play.card
    last = 0 if after.piles[0] != before.piles[0] else before.last_capturer
    observation = encode(
        (after.hand, 0), play.table, (after.piles[0], before.piles[1]),
        (after.played[0], after.played[1] & ~card), after.stock_size,
        (after.scope[0], before.scope[1]), last, 1 - after.is_dealer, 1,
        match_score=after.match_score, target=after.target,
    )  # fmt: skip
    return PlayObservation(observation, play.card)


def load_network(network: str) -> tuple[Path, Any]:
    """The checkpoint's path and SB3 policy of a player name that ``make_agent`` builds from a
    checkpoint (``pretrained_v5``, ``pretrained_v4``), or of a checkpoint's path. The path lets
    a caller tell which network it holds (the ladder's journals do)."""
    from agents import make_agent
    from agents.policy import PolicyAgent, load_policy_checkpoint

    path = Path(network)
    if path.suffix == ".zip" or path.is_file():
        model = load_policy_checkpoint(path)
    else:
        agent = make_agent(network)
        if not isinstance(agent, PolicyAgent):
            raise PlayerError(
                f"network {network!r} is not a policy network: give {SHIPPED_POLICY!r} or the path "
                "of a MaskablePPO .zip checkpoint"
            )
        path, model = agent.path, agent.model
    space = model.observation_space
    if getattr(space, "shape", None) != (OBS_SIZE,):
        raise PlayerError(
            f"network {network!r} reads observations of shape {getattr(space, 'shape', space)}, "
            f"not two-player Scopa's ({OBS_SIZE},)"
        )
    return path, model.policy


class LineSearchAgent(AlphaBetaAgent, ABC):
    """Minimax on sampled deals over every line of ``depth`` plies, whose leaves a learnt value
    judges (``leaf_values``), ``blend`` of it and the rest the material balance.

    The lines of each sampled deal are expanded first (``LineTree``) and all their leaves
    valued in one batch, which is what makes a network affordable inside the search. The last
    round is solved exactly (``AlphaBetaAgent``'s endgame). ``GuidedAgent`` values the leaves
    with the policy network's value head, ``agents.alphabeta_value`` with ``DealValue``.
    """

    two_player_only = "its network reads two-player positions"
    #: The learnt value's share of a leaf's value (the rest the material balance).
    blend = 1.0
    #: Whether the opponent's replies are weighed by the network's policy (``LineTree``).
    policy_replies = False
    #: Whether lines that reach the deal's last round are solved exactly inside a sample.
    exact_last_round = False
    #: The temperature in points of the opponent's replies (``LineTree``; 0: its best reply).
    softmin = 0.0
    #: Each legal move's probability for the opponent in a sampled position, weighing its
    #: replies (``LineTree``; ``None``: its best reply).
    reply_model: Callable[[Deal], np.ndarray] | None = None
    #: Whether my move after the opponent's reply is chosen once for all the samples
    #: (``LineTree.reduce_shared``) rather than in each.
    shared_replies = False
    #: Whether a leaf whose seat to move can sweep the table is valued at the better for that
    #: seat of the leaf and the sweep (``with_sweeps``).
    sweeps = False
    #: How many hands of mine the opponent's reply is judged over, it not seeing mine
    #: (``LineTree``; 0: its best reply to my hand in the sample).
    blind_replies = 0

    def new_deal_state(self) -> None:
        super().new_deal_state()
        self.history = RoundHistory()

    def _check_blend(self, blend: float) -> float:
        if not 0.0 <= blend <= 1.0:
            raise ValueError(
                f"blend is the learnt value's weight in the leaf value, 0 to 1: got {blend}"
            )
        return float(blend)

    @abstractmethod
    def leaf_values(
        self,
        positions: list[Deal],
        info: InfoState,
        deals: list[Deal],
        replies: Sequence[int] = (),
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each position's value for seat 0 in points, and the 80 action logits of its seat
        to move in the rows ``replies`` (those ``policy_replies`` weighs the opponent's replies
        by; an empty array without)."""

    def sample_weights(self, deals: list[Deal]) -> np.ndarray:
        """Each sampled deal's weight in the totals on top of the samples it stands for
        (``sampled_deals``' counts), ``len(deals)`` in all (1 each here)."""
        return np.ones(len(deals))

    def line_depth(self, info: InfoState) -> int:
        """Plies of every line searched at this decision, the root move included."""
        return self.settings(info)[1]

    def move_values(self, view: SeatView, moves: list[MaskMove]) -> list[int]:
        info = view.info
        if info.cards_to_play - 1 <= self.endgame_plies:
            return super().move_values(view, moves)
        drawn = self.sampled_deals(Determinizer(view, self.rules), info)
        deals = [deal for deal, _ in drawn]
        depth = self.line_depth(info)
        search = LineTree(
            self.policy_replies,
            self.exact_last_round,
            self.softmin,
            self.reply_model,
            self.blind_replies,
            self.rng,
        )
        trees = []
        for deal in deals:
            for card, capture in moves:
                child = deal.copy()
                child.play_unchecked(card, capture)
                trees.append(search.expand(child, depth - 1))
        values, logits = self.leaf_values(search.positions, info, deals, search.replies)
        exact = AlphaBeta(self.rules, self.valuer)
        values = self.blended(values, search.positions, exact)
        if self.sweeps:
            values = self.with_sweeps(search.positions, values, info, deals, exact)
        weights = np.array([count for _, count in drawn], np.float64) * self.sample_weights(deals)
        n = len(moves)
        if self.shared_replies and info.full_hand.bit_count() >= 2:
            totals = [
                search.reduce_shared(trees[j::n], weights, values, logits, exact) for j in range(n)
            ]
        else:
            totals = [0.0] * n
            for k, tree in enumerate(trees):
                totals[k % n] += weights[k // n] * search.reduce(tree, values, logits, exact)
        return [round(POINT * t) for t in totals]

    def blended(self, values: np.ndarray, positions: list[Deal], exact: AlphaBeta) -> np.ndarray:
        """The learnt ``values`` of ``positions`` for seat 0, ``blend``ed with their material
        balance (``AlphaBeta.material``): the leaves' values in points."""
        if self.blend == 1.0:
            return values
        material = np.fromiter((exact.material(d, 0) for d in positions), np.float64, len(values))
        return self.blend * values + (1.0 - self.blend) / POINT * material

    def with_sweeps(
        self,
        positions: list[Deal],
        values: np.ndarray,
        info: InfoState,
        deals: list[Deal],
        exact: AlphaBeta,
    ) -> np.ndarray:
        """``values`` of the leaves ``positions`` where the seat to move can sweep the table
        before the last round, each the better for that seat of its own value and the value
        of the position each sweep leaves: a quiescence search of sweeps. A sweep scores a
        point at once, and whether a hand holds one is a sum over cards that a learnt value of
        the card planes reads poorly; the search's horizon cuts it off."""
        swept: list[Deal] = []
        leaves: list[int] = []
        for k, deal in enumerate(positions):
            if not deal.stock or deal.is_over or np.isnan(values[k]):
                continue
            table = deal.masks["table"]
            for card, capture in deal.legal_mask_moves():
                if capture == table:
                    child = deal.copy()
                    child.play_unchecked(card, capture)
                    swept.append(child)
                    leaves.append(k)
        if not swept:
            return values
        out = values.copy()
        sweeps = self.blended(self.leaf_values(swept, info, deals)[0], swept, exact)
        for k, value in zip(leaves, sweeps, strict=True):
            out[k] = max(out[k], value) if positions[k].current_player == 0 else min(out[k], value)
        return out


class GuidedAgent(LineSearchAgent):
    """Search player: minimax on sampled deals whose leaves the network values (module doc).

    About 13 ms of CPU a move at the defaults (the harness's measure, on 2 shared cores). Over
    200 duplicate deals against ``alphabeta`` (``scopa eval SPEC alphabeta --deals 200 --seed 0
    --workers 1``; the guided player's CPU ms a move after the figure), the guided variants
    tied it:

    - ``guided:depth=2,blend=1.0,replies=min``: -0.302 +- 0.214, 5.0 ms (the leaf is my move);
    - ``depth=3,blend=1.0,replies=min``: -0.070 +- 0.188, 8.9 ms; with ``samples=48``
      -0.140 +- 0.273 over the first 100 deals, 27.8 ms;
    - ``depth=3,blend=0.5,replies=min``: +0.033 +- 0.172, 9.2 ms; with ``infer=1.0``
      -0.028 +- 0.174, 10.8 ms;
    - the defaults (``depth=3,blend=0.5,replies=policy``): +0.125 +- 0.168, 13.3 ms.

    Against ``ismcts`` (300 iterations) it ties in the README's strength ladder (+0.01 over
    35 duplicate deals, about 4 ms a move there).

    Args: as ``AlphaBetaAgent``, and
        network: the network whose value head values the leaves: a shipped policy network by name
            (``pretrained_v5``, the default, ``agents.policy.SHIPPED_POLICY``, or
            ``pretrained_v4``) or the path of a MaskablePPO checkpoint of two-player Scopa.
        blend: the network's share of a leaf's value, the rest the material balance.
        replies: ``min`` (the opponent's best reply in each sample) or ``policy`` (its cards
            weighed by the network's policy, each card's best capture for it).
        exact_last_round: solve exactly the leaves that reach the deal's last round.
        infer: the power of the likelihood of the opponent's plays this round that weighs
            each sample (0: every sample alike).
        torch_threads: torch's threads (set for the whole process; one, as the harness runs
            every network player).
    """

    name = "guided"

    def __init__(
        self,
        rules: Rules | str | None = None,
        samples: int = 16,
        depth: int = 3,
        endgame_plies: int = 5,
        network: str = SHIPPED_POLICY,
        blend: float = 0.5,
        replies: str = "policy",
        exact_last_round: bool = False,
        infer: float = 0.0,
        torch_threads: int = 1,
        seed: int | None = None,
        values: CardValues | None = None,
    ) -> None:
        super().__init__(rules, samples, depth, endgame_plies, seed, values)
        self.blend = self._check_blend(blend)
        import torch

        torch.set_num_threads(torch_threads)
        self.network = network
        if replies not in ("min", "policy"):
            raise ValueError(f"replies is 'min' or 'policy', got {replies!r}")
        self.policy_replies = replies == "policy"
        self.exact_last_round = exact_last_round
        if infer < 0:
            raise ValueError(f"infer weighs the opponent's plays' likelihood, >= 0: got {infer}")
        self.infer = float(infer)
        self.path, policy = load_network(network)  # the checkpoint it plays with
        self.leaf = LeafValuer(policy)

    def leaf_values(
        self,
        positions: list[Deal],
        info: InfoState,
        deals: list[Deal],
        replies: Sequence[int] = (),
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.leaf.evaluate(positions, Root.of(info, deals[0].dealer))  # every row's logits

    def sample_weights(self, deals: list[Deal]) -> np.ndarray:
        """Each sampled deal's weight, ``samples`` in all: the likelihood of the opponent's
        hand in it given the plays it made this round, raised to ``infer`` (1 each without)."""
        if not self.infer or not self.history.plays:
            return np.ones(len(deals))
        log_w = self.infer * self.history.log_likelihoods(
            [d.view()[0][1] for d in deals], self.leaf
        )
        w = np.exp(log_w - log_w.max())
        return w * (len(deals) / w.sum())

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.history.clear()

    @property
    def follows_deal(self) -> bool:
        return bool(self.infer)

    def act(self, observation: Observation) -> int:
        vector = np.asarray(observation["observation"], np.float32)
        if self.infer and vector.shape == (OBS_SIZE,):
            info = InfoState.from_observation(vector)
            if info.pending is None:
                self.history.observe(info)
        return super().act(observation)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, each row a game of its own: no history of the opponent's
        plays (the rows need not follow one another)."""
        actions = []
        for obs, mask in zip(observations, masks, strict=True):
            self.history.clear()
            actions.append(self.act({"observation": obs, "action_mask": mask}))
        self.history.clear()
        return np.array(actions, dtype=np.int64)


_TO_THE_END = 40  # plies: more than any deal has left


class Node(NamedTuple):
    """A position of ``LineTree`` with moves to search: ``player`` to move; ``row``, the row
    of ``LineTree.positions`` whose policy weighs the opponent's replies (-1 for others); each
    child's move in ``moves``; the ``reply_model``'s probability of each child where it weighs
    the opponent's replies; and with ``blind``, per child the nodes of the positions its move
    leaves in deals where my hand and the stock are dealt anew (``None`` where these do not
    apply)."""

    player: int
    row: int
    moves: list[MaskMove]
    children: list[Any]
    probabilities: np.ndarray | None = None
    guesses: list[list[Any]] | None = None


class LineTree:
    """Every line of a few plies from a position, and its minimax value once the network has
    valued the positions it ends in (``positions``).

    A node is the index of a leaf in ``positions``, a ``Deal`` to solve exactly (finished or,
    with ``exact_last_round``, in its last round: with the stock empty the sampled deal is the
    true one to both players), or a ``Node`` to search.

    The opponent's best reply in a sample sees my hand, which the real opponent does not, so
    it is better than the one the opponent finds. Three other weighings of its replies: a
    ``softmin`` temperature weighs each by ``exp(-value / softmin)``, a ``reply_model``
    gives each its probability under a model of the opponent's play, and ``blind`` has it
    choose as it would without seeing my hand: the reply whose positions are best for it on
    average over ``blind`` hands of mine it cannot tell from mine (before the last round; in
    it the opponent knows my hand).
    """

    def __init__(
        self,
        policy_replies: bool,
        exact_last_round: bool,
        softmin: float = 0.0,
        reply_model: Callable[[Deal], np.ndarray] | None = None,
        blind: int = 0,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.positions: list[Deal] = []
        #: The rows of ``positions`` whose policy weighs the opponent's replies.
        self.replies: list[int] = []
        self.policy_replies = policy_replies
        self.exact_last_round = exact_last_round
        self.softmin = softmin
        self.reply_model = reply_model
        self.blind = blind
        self.rng = np.random.default_rng() if rng is None else rng

    def expand(self, deal: Deal, depth: int) -> Any:
        if deal.is_over or (self.exact_last_round and not deal.stock):
            return deal
        if depth == 0:
            self.positions.append(deal)
            return len(self.positions) - 1
        player = deal.current_player
        row = -1
        probabilities = None
        if player == 1 and self.policy_replies:
            self.positions.append(deal)
            row = len(self.positions) - 1
            self.replies.append(row)
        elif player == 1 and self.reply_model is not None:
            probabilities = self.reply_model(deal)
        moves = deal.legal_mask_moves()
        children = []
        for card, capture in moves:
            child = deal.copy()
            child.play_unchecked(card, capture)
            children.append(self.expand(child, depth - 1))
        guesses = None
        if player == 1 and self.blind and deal.stock:
            hidden = [*deal.hands[0], *deal.stock]  # what the opponent cannot see
            deals = [
                deal.with_hidden_cards(1, self.rng.permutation(hidden).tolist())
                for _ in range(self.blind)
            ]
            guesses = []
            for card, capture in moves:
                guessed = []
                for guess in deals:
                    child = guess.copy()
                    child.play_unchecked(card, capture)
                    guessed.append(self.expand(child, 0))
                guesses.append(guessed)
        return Node(player, row, moves, children, probabilities, guesses)

    def reduce(self, node: Any, values: np.ndarray, logits: np.ndarray, exact: AlphaBeta) -> float:
        """The node's value for seat 0 in points: the best for the player to move, the value
        of the opponent's blind pick where it replies blind, or, where the policy weighs the
        replies, each card's best capture weighted by its probability (the other weighings in
        the class doc)."""
        if isinstance(node, int):
            return float(values[node])
        if isinstance(node, Deal):  # finished, or in its last round: solved exactly
            return exact.value(node, _TO_THE_END, 0) / POINT
        player, row, moves, children, probabilities, guesses = cast(Node, node)
        if guesses is not None:
            return self.reduce(
                children[self.blind_reply(guesses, values, logits, exact)], values, logits, exact
            )
        scores = [self.reduce(c, values, logits, exact) for c in children]
        if player == 0:
            return max(scores)
        if probabilities is not None:
            return float(probabilities @ np.array(scores))
        if row < 0:
            if not self.softmin:
                return min(scores)
            scored = np.array(scores)
            weights = np.exp((scored.min() - scored) / self.softmin)
            return float(weights @ scored / weights.sum())
        best: dict[int, float] = {}
        for (card, _), score in zip(moves, scores, strict=True):
            best[card] = min(score, best.get(card, score))
        weights = np.exp(logits[row, list(best)] - logits[row, list(best)].max())
        return float(weights @ np.fromiter(best.values(), np.float64) / weights.sum())

    def blind_reply(
        self, guesses: list[list[Any]], values: np.ndarray, logits: np.ndarray, exact: AlphaBeta
    ) -> int:
        """The reply the opponent picks not seeing my hand: the best for it on average over
        the deals of its ``guesses``."""
        guessed = [sum(self.reduce(g, values, logits, exact) for g in row) for row in guesses]
        return int(np.argmin(guessed))

    def reduce_shared(
        self,
        trees: list[Any],
        weights: np.ndarray,
        values: np.ndarray,
        logits: np.ndarray,
        exact: AlphaBeta,
    ) -> float:
        """The weighted total for seat 0 of one root move's trees, one per sample, with my
        move after each reply of the opponent's chosen once for every sample (not per sample).

        In a sample my best move after the reply sees the opponent's hand; the reply and the
        table are all I will see, so a move is chosen per reply. The opponent still replies as
        best it can in each sample, so a move after one reply counts only in the samples where
        that reply is its best: each reply's move starts as the best on average over the
        samples that allow the reply, then moves are changed one reply at a time while the
        total improves. Where the opponent replies blind (a node's ``guesses``), its reply in
        the sample does not depend on my moves after it, and each reply's move is the best
        over the samples where it is the reply. The caller shares only when my hand after the
        reply is the one I hold now (no new cards dealt). A sample with no reply to search is
        reduced alone.
        """
        total = 0.0
        rows: list[int] = []
        blind: dict[int, Any] = {}  # sample → the reply the opponent picks not seeing my hand
        after: dict[Any, dict[Any, dict[int, float]]] = {}  # reply → my move → sample → value
        for s, node in enumerate(trees):
            if not (
                isinstance(node, Node)
                and node.player == 1
                and node.probabilities is None
                and node.row < 0
            ):
                total += weights[s] * self.reduce(node, values, logits, exact)
                continue
            rows.append(s)
            if node.guesses is not None:
                blind[s] = node.moves[self.blind_reply(node.guesses, values, logits, exact)]
            for reply, child in zip(node.moves, node.children, strict=True):
                mine = after.setdefault(reply, {})
                if isinstance(child, Node) and child.player == 0:
                    for move, grandchild in zip(child.moves, child.children, strict=True):
                        value = self.reduce(grandchild, values, logits, exact)
                        mine.setdefault(move, {})[s] = value
                else:
                    mine.setdefault(None, {})[s] = self.reduce(child, values, logits, exact)
        if not rows:
            return total
        where = {s: row for row, s in enumerate(rows)}
        w = weights[rows]
        tables = []  # per reply (samples, my moves), +inf where the sample does not allow it
        for mine in after.values():
            table = np.full((len(rows), len(mine)), np.inf)
            for column, by_sample in enumerate(mine.values()):
                for s, value in by_sample.items():
                    table[where[s], column] = value
            tables.append(table)
        replies = list(after)
        picked = np.array([replies.index(blind[s]) if s in blind else -1 for s in rows])
        fixed = picked >= 0
        allowed = [np.isfinite(t[:, 0]) & (~fixed | (picked == r)) for r, t in enumerate(tables)]
        choice = [int(np.argmax(w[a] @ t[a])) for t, a in zip(tables, allowed, strict=True)]
        chosen = np.stack([t[:, c] for t, c in zip(tables, choice, strict=True)], axis=1)

        def sample_values(r: int, candidates: np.ndarray) -> np.ndarray:
            """Each sample's value (rows) for each move after reply ``r`` (columns), the
            other replies' moves as ``chosen``."""
            others = np.delete(chosen, r, axis=1).min(axis=1, initial=np.inf)
            out = np.minimum(others[:, None], candidates)
            kept = chosen[fixed, picked[fixed]][:, None]
            out[fixed] = np.where((picked[fixed] == r)[:, None], candidates[fixed], kept)
            return out

        improved = True
        while improved:
            improved = False
            for r, table in enumerate(tables):
                totals = w @ sample_values(r, table)
                best = int(np.argmax(totals))
                if totals[best] > totals[choice[r]] + 1e-12:
                    choice[r], improved = best, True
                    chosen[:, r] = table[:, best]
        values_now = chosen.min(axis=1)
        values_now[fixed] = chosen[fixed, picked[fixed]]
        return total + float(w @ values_now)
