"""A policy network that shares its weights across the 40 cards.

Scopa's rules are the same for every suit: a card captures by rank and sum, whatever its suit.
A plain MLP over the 373-float observation has to learn that 40 times over (once per card id),
and on a laptop budget it never quite does: cloning even the greedy player tops out near 90%
agreement and plays far worse than the teacher. ``CardNet`` instead runs one small network on
every card (its planes, rank, suit and the rank/sum facts that decide captures) plus a global
summary of the position, and reads the logit of "play card c" and "pick table card c" from
card c's own features. The capture facts follow the rules: with ``capture_sum`` (scopa a
quindici) a card takes the table cards that make that sum with it, not those worth its own
value. At every table the network reads the table's own layout (``agents.layouts``, by the
observation's width): its card planes, whatever their number, and its ``table`` and ``unseen``
planes by name, so the shared per-card weights see every seat's piles and plays as planes. It
plugs into sb3-contrib as ``CardPolicy`` (``MaskablePPO(CardPolicy,
...)``), saves and loads like any SB3 policy, and is chosen with ``ppo.policy: card``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from agents.layouts import layout_for_table, layout_of
from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, SUIT
from scopa_env.errors import TableError
from scopa_env.tables import resolve_table

_OTHER_CARD_FEATURES = 10 + 4 + 1 + 4  # beside the planes: rank, suit, value, capture facts
_LOOKAHEAD_FEATURES = 7  # see CardNet.lookahead_facts
_MAX_SUM = 10  # classic captures: a card takes table cards summing to its value, at most 10


def _subset_sum_table(
    max_sum: int = _MAX_SUM,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Caps, mixed-radix strides and the reachable sums ``0..max_sum`` of every capped count
    vector."""
    caps = np.minimum(max_sum // np.arange(1, 11), 4)
    strides = np.concatenate([[1], np.cumprod(caps[:-1] + 1)])
    combos = int(np.prod(caps + 1))
    counts = (np.arange(combos)[:, None] // strides) % (caps + 1)
    reach = np.zeros((combos, max_sum + 1), bool)
    reach[:, 0] = True
    for v in range(1, 11):
        for k in range(1, int(caps[v - 1]) + 1):
            has = counts[:, v - 1] >= k
            shifted = np.zeros_like(reach)
            shifted[:, v:] = reach[:, : max_sum + 1 - v]
            reach |= shifted & has[:, None]
    return (
        torch.as_tensor(caps, dtype=torch.long),
        torch.as_tensor(strides, dtype=torch.long),
        torch.as_tensor(reach, dtype=torch.float32),
    )


class CardNet(nn.Module):
    """Per-card features with shared weights, a global summary, 80 action logits and a value.

    ``capture_sum``: ``None`` for classic captures (a card takes table cards worth its value),
    or the sum a card makes with the cards it takes (15 in scopa a quindici). Only the meaning
    of the sum-capture fact changes, and the length of the reachable-sums summary (``0..S-1``).

    ``lookahead``: add ``lookahead_facts`` to every card's input (``False`` is the original
    network, parameter for parameter, so older checkpoints load and play unchanged).
    """

    value: torch.Tensor
    capture_target: torch.Tensor
    rank: torch.Tensor
    suit: torch.Tensor
    sum_caps: torch.Tensor
    sum_strides: torch.Tensor
    sum_table: torch.Tensor
    eye: torch.Tensor

    def __init__(
        self,
        obs_size: int,
        card_width: int = 64,
        global_width: int = 128,
        capture_sum: int | None = None,
        lookahead: bool = False,
    ) -> None:
        super().__init__()
        layout = layout_of(obs_size)
        planes = self.num_planes = len(layout.planes)
        assert layout.slices[layout.planes[0]].start == 0  # the card planes come first
        self.table_plane, self.unseen_plane = layout.index("table"), layout.index("unseen")
        self.capture_sum = capture_sum
        self.lookahead = lookahead
        values = torch.as_tensor(CAPTURE_VALUE.astype("int64"))
        self.register_buffer("value", values, persistent=False)
        # Per card, the total of the table cards it captures: its value, or what makes the sum.
        target = values if capture_sum is None else capture_sum - values
        self.register_buffer("capture_target", target, persistent=False)
        self.max_sum = _MAX_SUM if capture_sum is None else capture_sum - 1
        self.register_buffer(
            "rank", nn.functional.one_hot(values - 1, 10).float(), persistent=False
        )
        suits = torch.as_tensor(SUIT.astype("int64"))
        self.register_buffer("suit", nn.functional.one_hot(suits, 4).float(), persistent=False)
        caps, strides, table = _subset_sum_table(self.max_sum)
        self.register_buffer("sum_caps", caps, persistent=False)
        self.register_buffer("sum_strides", strides, persistent=False)
        self.register_buffer("sum_table", table, persistent=False)
        summary = obs_size + planes * 10 + planes * 4 + (self.max_sum + 1)
        self.global_net = nn.Sequential(nn.Linear(summary, global_width), nn.ReLU())
        self.register_buffer("eye", torch.eye(10), persistent=False)
        card_features = planes + _OTHER_CARD_FEATURES + (_LOOKAHEAD_FEATURES if lookahead else 0)
        self.card_in = nn.Linear(card_features, card_width)
        self.card_global = nn.Linear(global_width, card_width)
        self.card_mid = nn.Linear(card_width, card_width)
        self.card_pool = nn.Linear(card_width, card_width)
        self.play_head = nn.Linear(card_width, 1)
        self.pick_head = nn.Linear(card_width, 1)
        self.value_net = nn.Sequential(
            nn.Linear(global_width + 2 * card_width, global_width), nn.ReLU()
        )
        self.latent_dim_pi = 2 * NUM_CARDS
        self.latent_dim_vf = global_width

    def _reachable_sums(self, table_by_rank: torch.Tensor) -> torch.Tensor:
        """``(B, max_sum + 1)``: 1 where some subset of the table cards sums to that value.

        Sums up to ``max_sum`` use at most ``max_sum // v`` cards of value ``v``, so the answer
        depends only on the capped count of each value: one lookup in a table built once.
        """
        counts = torch.minimum(table_by_rank.round().long(), self.sum_caps)
        return self.sum_table[(counts * self.sum_strides).sum(dim=1)]

    def capture_facts(self, table_by_rank: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The table's reachable sums and, per card ``(B, 40)``, whether some subset of the
        table makes the total that card captures."""
        reach = self._reachable_sums(table_by_rank)
        return reach, reach[:, self.capture_target]

    def lookahead_facts(
        self, table_by_rank: torch.Tensor, unseen_by_rank: torch.Tensor, captures: torch.Tensor
    ) -> torch.Tensor:
        """``(B, 40, 7)``: per card, the consequences of playing it to this table.

        ``captures`` is ``capture_facts``'s per-card fact (whether the card captures here).

        1. the total left on the table / 40: the table minus the capture total if the card
           captures (every capture set of a card has the same total), else plus its value;
        2. whether it takes the whole table (a sweep; whether a sweep scores, e.g. not on the
           last play of a deal, is for the network to tell from the global features);
        3. whether an unseen card could sweep the table left (a card worth that total, or under
           ``capture_sum`` worth the sum minus it: any such card takes the whole table, since
           a same-rank card on it would be the whole table);
        4. how many unseen cards could, / 4;
        5. how many unseen cards could capture something from the table left, / 10;
        6. the number of cards left on the table / 10;
        7. whether 5 and 6 are unknown (0 there): a sum capture whose cards depend on which
           subset is taken (classic: no same-rank card; under ``capture_sum``: every capture).

        All exact for the rules ``capture_sum`` describes; ``ace_takes_all`` is not modelled.
        """
        values = self.value.float()
        table_total = table_by_rank @ torch.arange(1, 11, dtype=values.dtype, device=values.device)
        counts = table_by_rank.sum(dim=1, keepdim=True)
        rank_idx = self.value - 1
        target = self.capture_target.float()
        left = torch.where(
            captures > 0, table_total[:, None] - target, table_total[:, None] + values
        )
        sweep = captures * (left == 0).float()
        # The rank (value) of a card that would take the whole table left.
        sweeper = left if self.capture_sum is None else self.capture_sum - left
        valid = (left >= 1) & (sweeper >= 1) & (sweeper <= 10)
        sweeper_idx = (sweeper.long() - 1).clamp(0, 9)
        sweepers = unseen_by_rank.gather(1, sweeper_idx) * valid.float()

        # Replies on the table left after a trail (a card added) or a same-rank capture (one
        # card of that rank removed), per rank of the card played: (B, 10 ranks played).
        reply_target = self.capture_target[:10]  # what a reply card of each value captures

        def capturers(after: torch.Tensor) -> torch.Tensor:
            b = after.shape[0]
            after_reach = self._reachable_sums(after.clamp(min=0).reshape(b * 10, 10))
            can = after_reach[:, reply_target].reshape(b, 10, 10)  # (B, played, reply rank)
            return (can * unseen_by_rank[:, None, :]).sum(dim=2)

        after_trail = capturers(table_by_rank[:, None, :] + self.eye)[:, rank_idx]
        after_equal = capturers(table_by_rank[:, None, :] - self.eye)[:, rank_idx]
        if self.capture_sum is None:
            equal = (table_by_rank[:, rank_idx] > 0).float()
        else:
            equal = torch.zeros_like(captures)
        trail = 1.0 - captures
        ambiguous = captures * (1.0 - equal)
        reply = trail * after_trail + equal * after_equal
        left_count = trail * (counts + 1) + equal * (counts - 1)
        return torch.stack(
            [
                left / 40.0,
                sweep,
                (sweepers > 0).float(),
                sweepers / 4.0,
                reply / 10.0,
                left_count / 10.0,
                ambiguous,
            ],
            dim=2,
        )

    def body(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The global features ``(B, global_width)`` and the per-card ones ``(B, 40, width)``
        that both heads read."""
        batch = obs.shape[0]
        n, on_table, unseen = self.num_planes, self.table_plane, self.unseen_plane
        planes = obs[:, : n * NUM_CARDS].reshape(batch, n, NUM_CARDS)
        by_rank = planes @ self.rank  # (B, planes, 10)
        by_suit = planes @ self.suit  # (B, planes, 4)
        table = planes[:, on_table]
        reach, sum_reachable = self.capture_facts(by_rank[:, on_table])
        summary = torch.cat([obs, by_rank.flatten(1), by_suit.flatten(1) / 10.0, reach], dim=1)
        g = self.global_net(summary)

        # Per card: its planes, rank, suit, value and the facts that decide its captures.
        # With capture_sum an equal card no longer captures, but its count still helps: cloning
        # the heuristic player a quindici agreed 1 point more than with the count of the single
        # table cards that make the sum.
        rank_idx = self.value - 1
        same_rank_on_table = by_rank[:, on_table, :][:, rank_idx]  # (B, 40)
        unseen_same_rank = by_rank[:, unseen, :][:, rank_idx] / 4.0
        table_total = (table * self.value).sum(dim=1, keepdim=True) / 40.0
        card_parts = [
            planes.transpose(1, 2),
            self.rank.expand(batch, -1, -1),
            self.suit.expand(batch, -1, -1),
            (self.value.float() / 10.0).expand(batch, -1).unsqueeze(2),
            same_rank_on_table.unsqueeze(2),
            sum_reachable.unsqueeze(2),
            unseen_same_rank.unsqueeze(2),
            table_total.expand(-1, NUM_CARDS).unsqueeze(2),
        ]
        if self.lookahead:
            facts = self.lookahead_facts(by_rank[:, on_table], by_rank[:, unseen], sum_reachable)
            card_parts.append(facts)
        card_x = torch.cat(card_parts, dim=2)
        h = torch.relu(self.card_in(card_x) + self.card_global(g).unsqueeze(1))
        pooled = h.amax(dim=1)
        return g, torch.relu(self.card_mid(h) + self.card_pool(pooled).unsqueeze(1))

    def action_logits(self, h: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.play_head(h).squeeze(2), self.pick_head(h).squeeze(2)], dim=1)

    def value_latent(self, g: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.value_net(torch.cat([g, h.mean(dim=1), h.amax(dim=1)], dim=1))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        g, h = self.body(obs)
        return self.action_logits(h), self.value_latent(g, h)

    def forward_actor(self, obs: torch.Tensor) -> torch.Tensor:
        return self.action_logits(self.body(obs)[1])

    def forward_critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value_latent(*self.body(obs))


class CardPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's actor-critic with ``CardNet`` in place of the MLP (same API, same saves).

    ``table``: the table it plays (``scopa_env.tables``), saved with the model so that a player
    can refuse another table's game, even one of the same observation width (Scopone's two
    tables); ``None`` (checkpoints from before tables) means the table of the width.
    """

    mlp_extractor: CardNet  # type: ignore[assignment]  # SB3 takes any module with its API

    def __init__(
        self,
        *args: Any,
        card_width: int = 64,
        global_width: int = 128,
        capture_sum: int | None = None,
        lookahead: bool = False,
        table: str | None = None,
        **kwargs: Any,
    ):
        self.table = None if table is None else resolve_table(table).name
        self.card_width = card_width
        self.global_width = global_width
        self.capture_sum = capture_sum
        self.lookahead = lookahead
        kwargs.pop("net_arch", None)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        width = layout_of(self.features_dim).width
        if self.table is not None and width != (wanted := layout_for_table(self.table).width):
            raise TableError(
                f"a CardPolicy for table {self.table!r} reads {wanted}-float observations, "
                f"but its observation space is {width} wide"
            )
        self.mlp_extractor = CardNet(
            self.features_dim, self.card_width, self.global_width, self.capture_sum, self.lookahead
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        # CardNet already emits the 80 logits; start them small, as SB3 does for its head.
        self.action_net = nn.Identity()
        for head in (self.mlp_extractor.play_head, self.mlp_extractor.pick_head):
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # as SB3 does
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    @property
    def card_net(self) -> CardNet:
        """The network that reads the observation and emits the 80 logits."""
        return self.mlp_extractor

    @torch.no_grad()
    def soften(self, temperature: float) -> None:
        """Divide every action logit by ``temperature`` (``ppo.init_temperature``).

        The logits are linear in the two heads, so scaling their weights and biases does it
        exactly: the masked argmax (the deterministic play) is unchanged, the distribution
        PPO samples and differentiates is flatter for ``temperature > 1``.
        """
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        for head in (self.card_net.play_head, self.card_net.pick_head):
            head.weight.div_(temperature)
            head.bias.div_(temperature)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        # Saved with the model, so it reloads with the capture facts it was trained on.
        data.update(
            card_width=self.card_width,
            global_width=self.global_width,
            capture_sum=self.capture_sum,
            lookahead=self.lookahead,
            table=self.table,
        )
        return data
