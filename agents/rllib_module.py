"""RLlib modules (new API stack) for the game: the card network for PPO, and rule players.

``CardNetRLModule`` is ``agents.card_policy.CardNet`` as an RLlib ``TorchRLModule`` with a
value head, the same function as SB3's ``CardPolicy`` (the network's 80 logits, then
``value_net`` on its value latent), so an SB3 policy's weights load into it
(``load_card_policy``) and a behaviour clone made for SB3 warm-starts RLlib's PPO. The
observation is ``{"observations", "action_mask"}`` (``scopa_env.integrations.rllib``); illegal
actions get a logit of RLlib's ``FLOAT_MIN``, as in RLlib's action-masking example. It reads
the two-player observation layout (``scopa_env.observation``), so it plays the ``scopa``
table. ``model_config``: ``card_width``, ``global_width``, ``capture_sum``, ``lookahead``
(``CardNet``'s arguments).

``PlayerRLModule`` plays a player of the project by name (``model_config={"player":
"greedy"}``) on RLlib's env runners: the baseline opponents of the self-play pool. Never
trained. Needs the ``distributed`` extra.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from torch import nn

from agents.card_policy import CardNet

if TYPE_CHECKING:
    from gymnasium import spaces


class CardNetRLModule(TorchRLModule, ValueFunctionAPI):
    """``CardNet``'s masked logits and a value head; see the module docstring."""

    def setup(self) -> None:
        config = dict(cast("dict[str, Any]", self.model_config or {}))  # a dict from RLlib
        size = cast("Mapping[str, spaces.Box]", self.observation_space)["observations"].shape[0]
        self.net = CardNet(
            size,
            config.get("card_width", 64),
            config.get("global_width", 128),
            config.get("capture_sum"),
            config.get("lookahead", False),
        )
        self.value_net = nn.Linear(self.net.latent_dim_vf, 1)
        # As CardPolicy: the policy starts near uniform over the legal actions.
        for head in (self.net.play_head, self.net.pick_head):
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)

    def _logits_and_latent(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        logits, latent = self.net(obs["observations"])
        return logits + torch.clamp(torch.log(obs["action_mask"]), min=FLOAT_MIN), latent

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._logits_and_latent(batch)[0]}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, latent = self._logits_and_latent(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: latent}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            embeddings = self.net(batch[Columns.OBS]["observations"])[1]
        return self.value_net(embeddings).squeeze(-1)

    def load_card_policy(self, policy: Any) -> None:
        """Take the weights of an SB3 ``CardPolicy`` of the same widths."""
        self.net.load_state_dict(policy.mlp_extractor.state_dict())
        self.value_net.load_state_dict(policy.value_net.state_dict())


class PlayerRLModule(RLModule):
    """A player of ``agents.make_agent`` (``model_config["player"]``) as an RLlib module."""

    def setup(self) -> None:
        from agents import make_agent

        name = str(cast("dict[str, Any]", self.model_config or {})["player"])
        self.player = make_agent(name, seed=zlib.crc32(name.encode()))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = np.asarray(batch[Columns.OBS]["observations"], np.float32)
        masks = (np.asarray(batch[Columns.OBS]["action_mask"]) > 0).astype(np.int8)
        actions = [
            self.player.act({"observation": o, "action_mask": m})
            for o, m in zip(obs, masks, strict=True)
        ]
        return {Columns.ACTIONS: np.array(actions, np.int64)}

    def _forward_train(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.model_config} is a rule player: it is not trained")
