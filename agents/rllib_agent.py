"""A player from an RLlib checkpoint: the learner module of ``training.rllib_train``.

``make_agent("rllib:PATH")``, or the checkpoint folder's path alone (it holds
``rllib_checkpoint.json``), loads the ``main`` module of the algorithm checkpoint at ``PATH``
(or a module checkpoint folder itself) and plays its most likely legal action, like
``PolicyAgent`` does for an SB3 checkpoint. Needs the ``distributed`` extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from scopa_env.errors import CheckpointError
from scopa_env.players import Observation

if TYPE_CHECKING:
    from ray.rllib.core.rl_module.torch import TorchRLModule

#: Where an algorithm checkpoint keeps the learner's module.
MODULE = Path("learner_group", "learner", "rl_module", "main")


def is_rllib_checkpoint(path: Path) -> bool:
    return path.is_dir() and (path / "rllib_checkpoint.json").is_file()


class RLlibAgent:
    """Plays the most likely legal action of an RLlib checkpoint's learner module."""

    def __init__(self, path: str | Path, rules: object = None, seed: int | None = None) -> None:
        del rules, seed  # the module's own; deterministic play needs no seed
        import torch
        from ray.rllib.core.rl_module.rl_module import RLModule

        path = Path(path)
        folder = path / MODULE if (path / MODULE).is_dir() else path
        if not is_rllib_checkpoint(folder) and not (folder / "module_state.pkl").is_file():
            raise CheckpointError(f"{path} is not an RLlib checkpoint (no {MODULE} in it)")
        self.module = cast("TorchRLModule", RLModule.from_checkpoint(folder))  # torch modules
        self.module.eval()
        self.torch = torch

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of the observation vector the module reads (``check_table`` compares it
        with a table's)."""
        space = cast("Any", self.module.observation_space)  # a Dict of the mask and vector
        return tuple(space["observations"].shape)

    def act(self, observation: Observation) -> int:
        torch = self.torch
        mask = np.asarray(observation["action_mask"], np.float32)
        batch = {
            "obs": {
                "observations": torch.as_tensor(observation["observation"][None]),
                "action_mask": torch.as_tensor(mask[None]),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"][0].numpy()
        return int(np.argmax(np.where(mask > 0, logits, -np.inf)))
