"""``CardPolicy`` with an oracle critic: a value that also sees the hidden cards, in training.

A deal's points depend mostly on cards the seat cannot see, so a critic that reads only the
observation explains little of the return (60-65% of its variance from the alphabeta clone)
and PPO's advantages are mostly the luck of the deal. Here the training environment appends
``scopa_env.privileged``'s block (the other hands and the stock) to each observation; the
actor is a ``CardNet`` on the ordinary observation alone (its first ``width`` floats), and the
value reads that network's value features, detached (so the value loss never moves the
actor), beside ``CardOracle``'s reading of the whole widened observation. The value head
starts as the clone's own (the oracle's columns at zero), so PPO's first advantages are the
clone's.

A player never sees the block: ``save_for_play`` writes a plain ``CardPolicy`` with the
actor's weights, which is what ``clone.zip``, ``best.zip`` and ``final.zip`` hold and
``make_agent`` plays; only the resumable checkpoints keep the oracle model.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from agents.card_policy import CardNet, CardPolicy
from scopa_env.cards import NUM_CARDS

#: The width of the oracle's features beside the actor's value features.
ORACLE_WIDTH = 256
#: The oracle's per-card width.
CARD_WIDTH = 64
#: Adam's eps for the critic's parameters (see ``OracleCardPolicy._build``).
CRITIC_EPS = 1e-8


class CardOracle(nn.Module):
    """The oracle's reading of the widened observation, with weights shared by the 40 cards.

    Each card's planes, the seat's and the hidden ones (whose hand holds it, whether it is in
    the stock), with its rank and suit, go through one small network; the sum and the maximum
    over the cards, with the observation's scalar features, through another. An MLP over the
    raw floats memorised the deals it was fitted on instead: on the clone's play, 85% of the
    returns' variance explained on its deals and 16% on others, against 42% and 35% for this
    network and 31% for the clone's own critic.
    """

    ranks_suits: torch.Tensor

    def __init__(self, actor: CardNet, width: int, hidden: int) -> None:
        super().__init__()
        self.planes = actor.num_planes + hidden // NUM_CARDS
        self.seen, self.width = actor.num_planes * NUM_CARDS, width
        self.register_buffer("ranks_suits", torch.cat([actor.rank, actor.suit], 1), False)
        per_card = self.planes + self.ranks_suits.shape[1]
        self.card = nn.Sequential(
            nn.Linear(per_card, CARD_WIDTH), nn.ReLU(), nn.Linear(CARD_WIDTH, CARD_WIDTH), nn.ReLU()
        )
        scalars = width - self.seen
        self.out = nn.Sequential(nn.Linear(2 * CARD_WIDTH + scalars, ORACLE_WIDTH), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        batch = obs.shape[0]
        planes = torch.cat([obs[:, : self.seen], obs[:, self.width :]], dim=1)
        cards = planes.reshape(batch, self.planes, NUM_CARDS).transpose(1, 2)
        cards = torch.cat([cards, self.ranks_suits.expand(batch, -1, -1)], dim=2)
        h = self.card(cards)
        pooled = torch.cat([h.sum(dim=1) / 10.0, h.amax(dim=1)], dim=1)
        return self.out(torch.cat([pooled, obs[:, self.seen : self.width]], dim=1))


class OracleCardNet(nn.Module):
    """The actor ``CardNet`` on ``obs[:, :width]``; the critic over the whole observation."""

    def __init__(self, width: int, hidden: int, actor: CardNet) -> None:
        super().__init__()
        self.width = width
        self.actor = actor
        self.oracle = CardOracle(actor, width, hidden)
        self.latent_dim_pi = actor.latent_dim_pi
        self.latent_dim_vf = actor.latent_dim_vf + ORACLE_WIDTH

    @property
    def play_head(self) -> nn.Module:  # CardPolicy starts the actor's heads small
        return self.actor.play_head

    @property
    def pick_head(self) -> nn.Module:
        return self.actor.pick_head

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, seen = self.actor(obs[:, : self.width])
        return logits, torch.cat([seen.detach(), self.oracle(obs)], dim=1)

    def forward_actor(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor.forward_actor(obs[:, : self.width])

    def forward_critic(self, obs: torch.Tensor) -> torch.Tensor:
        return self.forward(obs)[1]


class OracleCardPolicy(CardPolicy):
    """``CardPolicy`` whose observation space is the observation plus ``hidden`` floats."""

    mlp_extractor: OracleCardNet  # type: ignore[assignment]  # its actor is the CardNet

    def __init__(self, *args: Any, hidden: int, **kwargs: Any) -> None:
        if hidden < 1:
            raise ValueError(f"hidden must be the width of the hidden-card block, got {hidden}")
        self.hidden = hidden
        super().__init__(*args, **kwargs)

    @property
    def card_net(self) -> CardNet:
        return self.mlp_extractor.actor

    @property
    def play_width(self) -> int:
        return self.features_dim - self.hidden

    def _build_mlp_extractor(self) -> None:
        full = self.features_dim
        self.features_dim = self.play_width  # CardPolicy checks and builds the ordinary width
        try:
            super()._build_mlp_extractor()
        finally:
            self.features_dim = full
        actor = cast(CardNet, self.mlp_extractor)  # CardPolicy's, until replaced here
        self.mlp_extractor = OracleCardNet(self.play_width, self.hidden, actor)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.value_net.weight.data[:, self.mlp_extractor.actor.latent_dim_vf :] = 0.0
        # The critic's loss is scaled down by vf_coef (so that SB3's one gradient-norm clip
        # over both networks is the actor's); Adam undoes the scale unless its eps, 1e-5 in
        # SB3, is as large as those small gradients: offline, 0.02 x the loss with eps 1e-5
        # fitted the value half as fast. Its own eps keeps its steps those of the whole loss.
        critic = [*self.mlp_extractor.oracle.parameters(), *self.value_net.parameters()]
        ids = {id(p) for p in critic}
        actor = [p for p in self.parameters() if id(p) not in ids]
        groups: list[dict[str, Any]] = [{"params": actor}, {"params": critic, "eps": CRITIC_EPS}]
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # as SB3 does
            groups,
            lr=lr_schedule(1),
            **self.optimizer_kwargs,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(hidden=self.hidden)
        return data

    def set_actor_frozen(self, frozen: bool) -> None:
        """Freeze the actor (a critic-only update: the value fits before the policy moves)."""
        for param in self.mlp_extractor.actor.parameters():
            param.requires_grad_(not frozen)

    # The plain CardPolicy's weights: the actor network and the first part of the value head.

    def play_state_dict(self) -> dict[str, torch.Tensor]:
        seen = self.mlp_extractor.actor.latent_dim_vf
        state = {f"mlp_extractor.{k}": v for k, v in self.mlp_extractor.actor.state_dict().items()}
        state["value_net.weight"] = self.value_net.weight.detach()[:, :seen].clone()
        state["value_net.bias"] = self.value_net.bias.detach().clone()
        return state

    def load_play_state_dict(self, state: Mapping[str, torch.Tensor]) -> None:
        """Load a plain ``CardPolicy``'s weights: actor and value as the clone's, the oracle's
        own part unchanged (its columns of the value head at zero)."""
        prefix = "mlp_extractor."
        actor = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
        self.mlp_extractor.actor.load_state_dict(actor)
        seen = self.mlp_extractor.actor.latent_dim_vf
        with torch.no_grad():
            self.value_net.weight[:, :seen] = state["value_net.weight"]
            self.value_net.weight[:, seen:] = 0.0
            self.value_net.bias.copy_(state["value_net.bias"])

    def play_policy(self) -> CardPolicy:
        """A plain ``CardPolicy`` on the ordinary observation, with this actor's weights."""
        space = self.observation_space
        assert isinstance(space, spaces.Box)
        width = self.play_width
        plain_space = spaces.Box(space.low[:width], space.high[:width], (width,), np.float32)
        kwargs = self._get_constructor_parameters()
        for key in ("observation_space", "action_space", "hidden"):
            kwargs.pop(key)
        plain = CardPolicy(plain_space, self.action_space, **kwargs)
        plain.load_state_dict(self.play_state_dict())
        return plain

    def play_kwargs(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The ``policy_kwargs`` a plain ``CardPolicy`` of this network is saved with."""
        return {k: v for k, v in kwargs.items() if k != "hidden"}


def save_for_play(model: Any, path: Path | str) -> None:
    """Save ``model`` as a player: an oracle model as the plain ``CardPolicy`` of its actor."""
    policy = model.policy
    if not isinstance(policy, OracleCardPolicy):
        model.save(path)
        return
    plain = policy.play_policy()
    saved = {
        "policy": policy,
        "observation_space": model.observation_space,
        "policy_class": model.policy_class,
        "policy_kwargs": model.policy_kwargs,
        "_last_obs": model._last_obs,
    }
    model.policy = plain
    model.observation_space = plain.observation_space
    model.policy_class = CardPolicy
    model.policy_kwargs = policy.play_kwargs(model.policy_kwargs)
    model._last_obs = None
    try:
        model.save(path)
    finally:
        for key, value in saved.items():
            setattr(model, key, value)
