"""A search guided by a network: determinized minimax whose leaves the network values.

Each decision samples ``samples`` deals consistent with what the player has seen, as
``agents.alphabeta`` does, and enumerates every line of ``depth`` plies from each root move in
each of them; the positions at the end of the lines (the leaves) are valued by the network's
value head in one batched forward pass, each observed by the seat to move in it, and the lines
are reduced by minimax per sample. The root moves share the samples and the move with the best
total wins. Once at most ``endgame_plies`` plies follow the root move, the rest of the deal is
solved exactly (``AlphaBetaAgent``'s endgame).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.alphabeta import AlphaBeta, AlphaBetaAgent
from agents.determinize import Determinizer
from agents.seats import SeatView
from agents.values import POINT, CardValues
from scopa_env.engine import Deal, MaskMove
from scopa_env.errors import PlayerError
from scopa_env.info_state import InfoState
from scopa_env.observation import OBS_SIZE, deal_block, encode_view, writer
from scopa_env.rules import Rules


@dataclass(frozen=True)
class Root:
    """What every position searched from one decision shares with its observation: each
    seat's ``deal_block`` and the cards each played before the decision (a sampled deal
    starts with none played)."""

    block: tuple[tuple[float, ...], tuple[float, ...]]
    played: tuple[int, int]

    @classmethod
    def of(cls, info: InfoState, dealer: int) -> Root:
        block = tuple(deal_block(info.match_score, info.target, dealer, p) for p in (0, 1))
        return cls(block, info.played)  # type: ignore[arg-type]


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
        out = np.empty((len(deals), OBS_SIZE), np.float32)
        write = self._write
        block, before = root.block, root.played
        for row, deal in enumerate(deals):
            seat = deal.current_player
            hands, table, piles, played, *rest = deal.view()
            played = [before[0] | played[0], before[1] | played[1]]
            out[row] = encode_view(
                (hands, table, piles, played, *rest), seat, None, 0, block[seat], write
            )
        return out

    def evaluate(self, deals: list[Deal], root: Root) -> tuple[np.ndarray, np.ndarray]:
        """Each deal's value for seat 0 in points (the network's, for the seat to move), and
        the network's 80 action logits for the seat to move, in one forward pass."""
        if not deals:
            return np.zeros(0), np.zeros((0, 80), np.float32)
        import torch

        policy = self.policy
        obs = torch.as_tensor(self.observations(deals, root))
        with torch.inference_mode():
            latent_pi, latent_vf = policy.mlp_extractor(policy.extract_features(obs))
            logits = policy.action_net(latent_pi).numpy()
            value = policy.value_net(latent_vf).numpy()[:, 0].astype(np.float64)
        seats = np.fromiter((d.current_player for d in deals), np.int64, len(deals))
        return np.where(seats == 0, value, -value), logits

    def values(self, deals: list[Deal], root: Root) -> np.ndarray:
        """Each deal's value for seat 0 in points (the network's, for the seat to move)."""
        return self.evaluate(deals, root)[0]


def load_network(network: str) -> Any:
    """The SB3 policy of a player name that ``make_agent`` builds from a checkpoint
    (``pretrained``), or of a checkpoint's path."""
    from agents import make_agent
    from agents.policy import PolicyAgent, load_policy_checkpoint

    path = Path(network)
    if path.suffix == ".zip" or path.is_file():
        model = load_policy_checkpoint(path)
    else:
        agent = make_agent(network)
        if not isinstance(agent, PolicyAgent):
            raise PlayerError(
                f"network {network!r} is not a network player: give 'pretrained' or the path "
                "of a MaskablePPO .zip checkpoint"
            )
        model = agent.model
    space = model.observation_space
    if getattr(space, "shape", None) != (OBS_SIZE,):
        raise PlayerError(
            f"network {network!r} reads observations of shape {getattr(space, 'shape', space)}, "
            f"not two-player Scopa's ({OBS_SIZE},)"
        )
    return model.policy


class GuidedAgent(AlphaBetaAgent):
    """Search player: minimax on sampled deals whose leaves the network values.

    Args: as ``AlphaBetaAgent``, and
        network: the network whose value head values the leaves: ``pretrained`` (whatever
            ``make_agent("pretrained")`` loads) or the path of a MaskablePPO checkpoint of
            two-player Scopa.
        blend: the network's share of a leaf's value, the rest the material balance.
        torch_threads: torch's threads (set for the whole process; one, as the harness runs
            every network player).
    """

    name = "guided"

    def __init__(
        self,
        rules: Rules | str | None = None,
        samples: int = 16,
        depth: int = 2,
        endgame_plies: int = 5,
        network: str = "pretrained",
        blend: float = 1.0,
        replies: str = "min",
        exact_last_round: bool = False,
        torch_threads: int = 1,
        seed: int | None = None,
        values: CardValues | None = None,
    ) -> None:
        super().__init__(rules, samples, depth, endgame_plies, seed, values)
        if not 0.0 <= blend <= 1.0:
            raise ValueError(
                f"blend is the network's weight in the leaf value, 0 to 1: got {blend}"
            )
        import torch

        torch.set_num_threads(torch_threads)
        self.network = network
        self.blend = float(blend)
        if replies not in ("min", "policy"):
            raise ValueError(f"replies is 'min' or 'policy', got {replies!r}")
        self.policy_replies = replies == "policy"
        self.exact_last_round = exact_last_round
        self.leaf = LeafValuer(load_network(network))

    def move_values(self, view: SeatView, moves: list[MaskMove]) -> list[int]:
        info = view.info
        if info.cards_to_play - 1 <= self.endgame_plies:
            return super().move_values(view, moves)
        determinizer = Determinizer(view, self.rules)
        deals = [determinizer.sample(self.rng) for _ in range(self.samples)]
        search = _Tree(self.policy_replies, self.exact_last_round)
        trees = []
        for deal in deals:
            for card, capture in moves:
                child = deal.copy()
                child.play_unchecked(card, capture)
                trees.append(search.expand(child, self.depth - 1))
        values, logits = self.leaf.evaluate(search.positions, Root.of(info, deals[0].dealer))
        exact = AlphaBeta(self.rules, self.valuer)
        if self.blend < 1.0:
            material = np.fromiter(
                (exact.material(d, 0) for d in search.positions), np.float64, len(values)
            )
            values = self.blend * values + (1.0 - self.blend) / POINT * material
        totals = [0.0] * len(moves)
        for k, tree in enumerate(trees):
            totals[k % len(moves)] += search.reduce(tree, values, logits, exact)
        return [round(POINT * t) for t in totals]


_TO_THE_END = 40  # plies: more than any deal has left


class _Tree:
    """Every line of a few plies from a position, and its minimax value once the network has
    valued the positions it ends in (``positions``).

    A node is the index of a leaf in ``positions``, a ``Deal`` to solve exactly (finished or,
    with ``exact_last_round``, in its last round: with the stock empty the sampled deal is the
    true one to both players), or ``(player, index,
    cards, children)``: the player to move, the index in ``positions`` of a node whose policy
    weighs the opponent's replies (-1 for others), and each child's card.
    """

    def __init__(self, policy_replies: bool, exact_last_round: bool) -> None:
        self.positions: list[Deal] = []
        self.policy_replies = policy_replies
        self.exact_last_round = exact_last_round

    def expand(self, deal: Deal, depth: int) -> Any:
        if deal.is_over or (self.exact_last_round and not deal.stock):
            return deal
        if depth == 0:
            self.positions.append(deal)
            return len(self.positions) - 1
        player = deal.current_player
        index = -1
        if player == 1 and self.policy_replies:
            self.positions.append(deal)
            index = len(self.positions) - 1
        moves = deal.legal_mask_moves()
        children = []
        for card, capture in moves:
            child = deal.copy()
            child.play_unchecked(card, capture)
            children.append(self.expand(child, depth - 1))
        return player, index, [card for card, _ in moves], children

    def reduce(self, node: Any, values: np.ndarray, logits: np.ndarray, exact: AlphaBeta) -> float:
        """The node's value for seat 0 in points: the best for the player to move, or, where
        the policy weighs the replies, each card's best capture weighted by its probability."""
        if isinstance(node, int):
            return float(values[node])
        if isinstance(node, Deal):  # finished, or in its last round: solved exactly
            return exact.value(node, _TO_THE_END, 0) / POINT
        player, index, cards, children = node
        scores = [self.reduce(c, values, logits, exact) for c in children]
        if player == 0:
            return max(scores)
        if index < 0:
            return min(scores)
        best: dict[int, float] = {}
        for card, score in zip(cards, scores, strict=True):
            best[card] = min(score, best.get(card, score))
        weights = np.exp(logits[index, list(best)] - logits[index, list(best)].max())
        return float(weights @ np.fromiter(best.values(), np.float64) / weights.sum())
