"""A search guided by a learnt value: determinized minimax whose leaves ``DealValue`` judges.

Each decision samples ``samples`` deals consistent with what the player has seen, as
``agents.alphabeta`` does, and expands every line of ``depth`` plies from each root move in
each of them (``agents.guided.LineSearchAgent``). The positions the lines end in are valued
in one batch by ``DealValue`` (``agents.deal_value``), which reads the sampled deal whole, both
hands included, the same perfect information each sample gives the search, and estimates the
point difference the deal ends with. ``blend`` of that and the rest ``alphabeta``'s material
balance make a leaf's value; the lines are reduced by minimax per sample, the root moves share
the samples and the best total wins. The last round is solved exactly. The samples are drawn
by the opponent's plays this round, as ``alphabeta:infer=True`` draws them (``infer=False``:
uniformly).
In a sample the opponent's best reply sees my hand; ``softmin``, ``replies=model`` and
``replies=policy`` weigh its replies instead, by how good each is for it, by how likely the
soft greedy model of ``infer`` makes each, or by the shipped network's policy from the
opponent's seat, and ``replies=blind`` has it reply as is best for it on average over hands of
mine it cannot tell from mine. My own move after the reply sees the opponent's hand too; ``infoset``
chooses it once for all the samples, by what I will know then. ``seat_weight`` mixes into each
move's value the ``seat_value`` network's (``agents.seat_value``), fitted to this search's
values of many decisions from the seat's view alone: an estimate with no sampling noise.

``guided`` is the same search with the policy network's value head at the leaves, which sees
only the seat's observation; ``ismcts_value`` puts ``DealValue`` at the leaves of ISMCTS.
Measured strength is in ``docs/strength.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agents.deal_value import SHIPPED, DealValue, position
from agents.guided import LeafValuer, LineSearchAgent, Root, load_network
from agents.inference import OpponentPlay
from agents.policy import SHIPPED_POLICY
from agents.seat_value import (
    SeatEnsemble,
    SeatValue,
    afterstate_row,
    load_seat_network,
    play_fields,
)
from agents.seats import SeatView
from agents.values import POINT, CardValues
from scopa_env.cards import NUM_CARDS
from scopa_env.engine import Deal, MaskMove
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules
from scopa_env.tables import SCOPA


class ValueAlphaBetaAgent(LineSearchAgent):
    """Search player: minimax on sampled deals whose leaves ``DealValue`` values (module doc).

    Args:
        rules: the rules (a ``Rules``, preset name or option dict).
        samples: deals sampled per decision before the last round.
        depth: plies of every line, the root move included (three: my move, the opponent's
            reply and mine, so the leaf has the opponent to move).
        late_depth: plies of every line at my later decisions of a round, once my hand holds
            fewer cards than were dealt, where the lines branch less (``None``: ``depth``).
        endgame_plies: search exactly to the end of the deal when at most this many plies
            follow the root move (the last round).
        value: the path of a ``DealValue`` network (``.npz``); the shipped one by default.
        blend: ``DealValue``'s share of a leaf's value, the rest the material balance (0.7 by
            default; 0.5 scores about 0.03 points a deal less against ISMCTS-300,
            ``docs/strength.md``).
        exact_last_round: solve exactly the lines that reach the last round inside a sample
            (on by default; about +0.02 points a deal, ``docs/strength.md``).
        seed: seed of the player's own randomness (the sampled deals).
        values: the card values of the material balance and the move ordering.
        infer: draw the sampled deals by how likely the opponent's plays this round were
            with the hand each gives it, as ``alphabeta:infer=True`` does (``AlphaBetaAgent``);
            the player then follows the deal across ``act`` calls. On by default (it adds
            about +0.06 points a deal against ISMCTS-300, ``docs/strength.md``); ``False`` draws
            them uniformly.
        candidates: deals drawn uniformly per decision before resampling (``infer`` only;
            default four times ``samples``).
        softmin: the temperature in points of the opponent's replies in each sample, each
            weighed by ``exp(-value / softmin)`` (0: its best reply alone, minimax).
        replies: ``min`` (the opponent's best reply in each sample, or the ``softmin``),
            ``model``: each reply weighed by its probability for the soft greedy opponent
            ``infer`` reads the plays with (``agents.inference.OpponentModel``), or
            ``policy``: each card of the opponent's weighed by the shipped network's policy
            from the opponent's observation, which does not see my hand (each card's best
            capture for it; ``guided``'s replies), or ``blind``: the opponent's reply chosen as
            it would choose it without seeing my hand, the one whose positions are best for it
            on average over ``blind_hands`` hands of mine and orders of the stock it cannot tell
            from the sample's (``LineTree``).
        blind_hands: how many of those hands ``replies=blind`` judges each reply over.
        network_belief: with ``infer``, weigh the candidate deals by the shipped network's
            probability of the opponent's plays this round, raised to this power, instead of
            the soft greedy model's (0: the model). The network's logits are sharper than the
            play they predict; a power below 1 tempers them.
        belief_network: the policy network ``network_belief`` reads the plays with: the shipped
            one, or a checkpoint's path, such as a network fitted to the opponent's own choices
            (``scopa train`` with the opponent as ``warm_start.teacher``).
        infoset: choose my move after each reply of the opponent's once for all the samples,
            as I will choose it knowing the reply and not the opponent's hand, rather than in
            each sample, where it sees that hand (``LineTree.reduce_shared``); while my hand
            holds two cards or more (no new cards come before that move). With
            ``replies=blind`` neither seat's choice within the three plies sees the other's hand.
        mover_view: the share of a leaf's learnt value judged from its mover's view alone,
            not the other hand, the rest ``DealValue``'s (0: ``DealValue`` alone): a judge
            that the sample's perfect information does not reach.
        view_value: that judge: ``head``, the shipped network's value head, or the path of a
            blind ``DealValue`` (``agents.deal_value``; ``scopa value`` with ``blind: true``).
        prior_weight: points per deal credited to a root move per nat of the shipped
            network's log-probability of its action (``ismcts_prior``'s prior), before the
            last round (0: none). Between moves the samples cannot tell apart, the network's
            choice wins; 0.05 costs about 0.08 points a deal against ISMCTS-300
            (``docs/strength.md``).
        seat_weight: the share of a move's value before the last round that the
            ``seat_value`` network gives (its value of the position the move leaves, from my
            seat), the rest the search's mean over the samples (0: the search alone).
        seat_network: the path of that ``SeatValue``; the shipped one by default. One that
            reads the opponent's plays this round gets them from ``infer``'s tracker.
        sweeps: a leaf whose seat to move can sweep the table is valued at the better for it
            of the leaf and each sweep (``LineSearchAgent.with_sweeps``; a quiescence search).
            Off by default: it changes nothing measurable (+0.001 +- 0.042 points a deal,
            paired over 600 decks against ISMCTS-300, ``docs/strength.md``).
    """

    name = "alphabeta_value"

    def __init__(
        self,
        rules: Rules | str | None = None,
        samples: int = 128,
        depth: int = 3,
        late_depth: int | None = None,
        endgame_plies: int = 5,
        value: str | None = None,
        blend: float = 0.7,
        exact_last_round: bool = True,
        seed: int | None = None,
        values: CardValues | None = None,
        infer: bool = True,
        candidates: int | None = None,
        softmin: float = 0.0,
        replies: str = "min",
        blind_hands: int = 4,
        network_belief: float = 0.0,
        belief_network: str = SHIPPED_POLICY,
        infoset: bool = False,
        mover_view: float = 0.0,
        view_value: str = "head",
        prior_weight: float = 0.0,
        seat_weight: float = 0.0,
        seat_network: str | None = None,
        sweeps: bool = False,
    ) -> None:
        super().__init__(
            rules, samples, depth, endgame_plies, seed, values, infer=infer, candidates=candidates
        )
        self.blend = self._check_blend(blend)
        if late_depth is not None and late_depth < 1:
            raise ValueError(f"late_depth is a number of plies, >= 1: got {late_depth}")
        self.late_depth = late_depth
        self.exact_last_round = exact_last_round
        self.sweeps = bool(sweeps)
        if softmin < 0:
            raise ValueError(f"softmin is a temperature in points, >= 0: got {softmin}")
        self.softmin = float(softmin)
        if replies not in ("min", "model", "policy", "blind"):
            raise ValueError(f"replies is 'min', 'model', 'policy' or 'blind', got {replies!r}")
        if not blind_hands >= 1:
            raise ValueError(f"blind_hands is a number of hands, >= 1: got {blind_hands}")
        self.blind_replies = int(blind_hands) if replies == "blind" else 0
        if replies != "min" and softmin:
            raise ValueError(
                f"softmin weighs the opponent's best replies: not with replies={replies!r}"
            )
        self.reply_model = self._model_replies if replies == "model" else None
        self.policy_replies = replies == "policy"
        if infoset and (softmin or replies not in ("min", "blind")):
            raise ValueError(
                f"infoset answers the opponent's best or blind replies: not with softmin or "
                f"replies={replies!r}"
            )
        self.shared_replies = bool(infoset)
        if network_belief < 0:
            raise ValueError(f"network_belief is a power, >= 0: got {network_belief}")
        if network_belief and not infer:
            raise ValueError("network_belief weighs the deals infer draws: give infer=True too")
        self.network_belief = float(network_belief)
        if not 0.0 <= mover_view <= 1.0:
            raise ValueError(f"mover_view is a share of the learnt value, 0 to 1: got {mover_view}")
        self.mover_view = float(mover_view)
        self.view_value: DealValue | None = None
        if view_value != "head":
            self.view_value = DealValue.load(view_value)
            if not self.view_value.blind:
                raise ValueError(
                    f"view_value {view_value!r} reads both hands: give a blind DealValue"
                )
        self.network: LeafValuer | None = None  # the shipped policy, where an option reads it
        if not prior_weight >= 0:
            raise ValueError(f"prior_weight is points per nat, >= 0: got {prior_weight}")
        self.prior_weight = float(prior_weight)
        self._observation: np.ndarray | None = None  # the decision's, while prior_weight reads it
        if belief_network != SHIPPED_POLICY and not network_belief:
            raise ValueError(
                f"belief_network {belief_network!r} reads the plays network_belief weighs the "
                "deals by: give network_belief too"
            )
        shipped_read = (
            (network_belief and belief_network == SHIPPED_POLICY)
            or self.policy_replies
            or (mover_view and self.view_value is None)
            or prior_weight
        )
        if shipped_read or network_belief:
            import torch

            torch.set_num_threads(1)
        if shipped_read:
            self.network = LeafValuer(load_network(SHIPPED_POLICY)[1])
        self.belief = self.network  # the network network_belief reads the plays with
        if belief_network != SHIPPED_POLICY:
            self.belief = LeafValuer(load_network(belief_network)[1])
        self.path = Path(SHIPPED if value is None else value)
        self.value = DealValue.load(self.path)
        if not 0.0 <= seat_weight <= 1.0:
            raise ValueError(f"seat_weight is a share of a move's value, 0 to 1: got {seat_weight}")
        self.seat_weight = float(seat_weight)
        self.seat_value: SeatValue | SeatEnsemble | None = None
        if seat_weight:
            import torch

            torch.set_num_threads(1)  # more only spin beside a search that fills the cores
            self.seat_value = load_seat_network(seat_network, self.rules)
            if self.seat_value.plays and not infer:
                raise ValueError(
                    f"seat_network {seat_network!r} reads the opponent's plays, which this "
                    "search follows with infer=True only"
                )

    def line_depth(self, info: InfoState) -> int:
        if self.late_depth is not None and info.hand.bit_count() < SCOPA.hand_size:
            return self.late_depth
        return super().line_depth(info)

    def leaf_values(
        self,
        positions: list[Deal],
        info: InfoState,
        deals: list[Deal],
        replies: Sequence[int] = (),
    ) -> tuple[np.ndarray, np.ndarray]:
        """``DealValue``'s value of each leaf for seat 0; a reply row (``replies``) holds the
        network's logits for the opponent instead, and NaN for a value the search never reads."""
        values = np.full(len(positions), np.nan)
        leaves = np.setdiff1d(np.arange(len(positions)), replies)
        if len(leaves):
            rows = np.array([position(positions[k]) for k in leaves], np.int64)
            movers = np.fromiter((positions[k].current_player for k in leaves), np.int64)
            leaf_values = self.value.values(rows)
            values[leaves] = np.where(movers == 0, leaf_values, -leaf_values)
            if self.mover_view:
                if self.view_value is not None:
                    seen = self.view_value.values(rows)
                    seen = np.where(movers == 0, seen, -seen)
                else:
                    assert self.network is not None
                    root = Root.of(info, deals[0].dealer)
                    seen = self.network.values([positions[k] for k in leaves], root)
                values[leaves] = (1.0 - self.mover_view) * values[leaves] + self.mover_view * seen
        logits = np.zeros((0, 0), np.float32)
        if replies and self.network is not None:
            logits = np.zeros((len(positions), 2 * NUM_CARDS), np.float32)
            seen = self.network.observations(
                [positions[row] for row in replies], Root.of(info, deals[0].dealer)
            )
            logits[list(replies)] = self.network.logits(seen)
        return values, logits

    def choose_seen(self, vector: np.ndarray, info: InfoState, moves: list[MaskMove]) -> MaskMove:
        self._observation = np.asarray(vector, np.float32)
        try:
            return super().choose_seen(vector, info, moves)
        finally:
            self._observation = None

    def move_values(self, view: SeatView, moves: list[MaskMove]) -> list[int]:
        """The searched totals, mixed with ``seat_weight``'s network and plus ``prior_weight``'s
        credit for the policy's choice in a decision (``act``), in the totals' units:
        hundredths of a point summed over the samples."""
        totals = super().move_values(view, moves)
        info = view.info
        if self.seat_value is not None and not self.solves_exactly(info):
            totals = self._mix_seat_values(view, moves, totals)
        if not self.prior_weight or self._observation is None or self.solves_exactly(info):
            return totals
        assert self.network is not None
        credit = POINT * self.deals_searched(info) * self.prior_weight
        priors = self.network.log_priors(self._observation, info, moves)
        return [total + round(credit * p) for total, p in zip(totals, priors, strict=True)]

    def _mix_seat_values(
        self, view: SeatView, moves: list[MaskMove], totals: list[int]
    ) -> list[int]:
        assert self.seat_value is not None
        deal = view.position(self.rules)
        plays = play_fields(self.tracker.this_round(view.info)) if self.seat_value.plays else ()
        rows = [afterstate_row(deal, card, capture)[0] + plays for card, capture in moves]
        seat = self.seat_value.values(np.array(rows, np.int64))
        scale = 1.0 / self.points_per_total(view.info)
        w = self.seat_weight
        return [round((1.0 - w) * t + w * scale * v) for t, v in zip(totals, seat, strict=True)]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.history.clear()

    def observe(self, info: InfoState) -> None:
        super().observe(info)
        if self.network_belief and info.pending is None:
            self.history.observe(info)

    def hand_log_likelihoods(self, hands: list[int], plays: list[OpponentPlay]) -> np.ndarray:
        """The network's, tempered by ``network_belief``, where its history holds the plays
        the tracker found; the soft greedy model's otherwise."""
        found = [p.card for p in self.history.plays] == [p.card for p in reversed(plays)]
        if not self.network_belief or self.belief is None or not found:
            return super().hand_log_likelihoods(hands, plays)
        return self.network_belief * self.history.log_likelihoods(hands, self.belief)

    def _model_replies(self, deal: Deal) -> np.ndarray:
        hands, table = deal.view()[:2]
        return self.model.probabilities(hands[deal.current_player], table)
