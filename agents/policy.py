"""A learned player: a MaskablePPO checkpoint (sb3-contrib) played greedily and masked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Observation
from scopa_env.errors import CheckpointError, CheckpointNotFoundError

_HERE = Path(__file__).resolve().parent

#: The project's released policy networks by ``make_agent`` name: at two-player Scopa the
#: shipped agent before the seat-value ensemble (``make_agent("pretrained")``,
#: ``agents.seat_value``) replaced it and the one before that, kept so that they can be
#: compared; at the tables of three, four and six seats, at Scopone and at Scopone scientifico
#: (``scopa_3``, ``scopa_4``, ``scopa_6``, ``scopone``, ``scopone_scientifico``) a clone of
#: ``alphabeta`` at that table (``configs/clone_alphabeta.yaml``).
SHIPPED_CHECKPOINTS = {
    "pretrained_v5": _HERE / "pretrained_v5" / "model.zip",
    "pretrained_v4": _HERE / "pretrained_v4" / "model.zip",
    "pretrained_scopa_3": _HERE / "pretrained_scopa_3" / "model.zip",
    "pretrained_scopa_4": _HERE / "pretrained_scopa_4" / "model.zip",
    "pretrained_scopa_6": _HERE / "pretrained_scopa_6" / "model.zip",
    "pretrained_scopone": _HERE / "pretrained_scopone" / "model.zip",
    "pretrained_scopone_scientifico": _HERE / "pretrained_scopone_scientifico" / "model.zip",
}
#: The policy network that the players and tools built on one play by default (``guided``,
#: ``rollout``, ``ismcts_prior``, ``last_round``'s base, ``alphabeta_value``'s prior,
#: ``scopa value``, ``scopa predict``, expert iteration's fine-tuning).
SHIPPED_POLICY = "pretrained_v5"
POLICY_CHECKPOINT = SHIPPED_CHECKPOINTS[SHIPPED_POLICY]


def checkpoint_path(name: str) -> Path:
    """The checkpoint a shipped network's player name or a path names."""
    return SHIPPED_CHECKPOINTS.get(name, Path(name))


def load_policy_checkpoint(path: Path, device: str = "cpu") -> Any:
    """The ``MaskablePPO`` model saved at ``path``; ``CheckpointError`` if there is none there.

    A missing file, a zip cut short and a zip that is not an SB3 save are all the same mistake
    to the caller: the path does not name a checkpoint.
    """
    if not path.is_file():
        raise CheckpointNotFoundError(
            f"no checkpoint at {path}: give the path of a MaskablePPO .zip written by "
            "`scopa train` (or model.save)"
        )
    from sb3_contrib import MaskablePPO  # heavy (torch): imported only when needed

    try:
        return MaskablePPO.load(path, device=device)
    except Exception as error:  # SB3 raises whatever its zip, JSON or torch reader raised
        raise CheckpointError(
            f"{path} is not a loadable MaskablePPO checkpoint ({type(error).__name__}: "
            f"{str(error).splitlines()[0] if str(error) else 'no detail'})"
        ) from None


class PolicyAgent:
    """Plays a trained ``MaskablePPO`` checkpoint (a ``.zip`` written by ``model.save``).

    Acts with ``model.predict(obs, action_masks=mask, deterministic=True)`` so it only ever
    plays legal actions. The model may observe the flat vector (``Box``) or the whole dict
    (``Dict`` with the observation and the mask); the checkpoint's space decides.

    Args:
        path: the checkpoint file.
        rules: accepted for a uniform constructor; the action mask carries the rules.
        deterministic: play the most likely action (else sample from the policy).
        device: torch device for the network.
    """

    name = "policy"

    def __init__(
        self,
        path: str | Path,
        rules: object = None,
        seed: int | None = None,
        deterministic: bool = True,
        device: str = "cpu",
    ) -> None:
        del rules
        self.path = Path(path)
        self.model = load_policy_checkpoint(self.path, device)
        self.deterministic = deterministic
        self._dict_keys: tuple[str, ...] | None = None
        spaces = getattr(self.model.observation_space, "spaces", None)
        if isinstance(spaces, dict):
            self._dict_keys = tuple(spaces)
        self.reset(seed)

    @property
    def trained_table(self) -> str | None:
        """The table the network was trained for, where it records one (``CardPolicy``)."""
        return getattr(self.model.policy, "table", None)

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of the observation vector the network reads (``check_table`` compares
        it with a table's)."""
        space = self.model.observation_space
        return tuple(getattr(space, "spaces", {}).get("observation", space).shape)

    def reset(self, seed: int | None = None) -> None:
        # A deterministic policy draws nothing; sampling seeds torch's (global) generator.
        if seed is not None and not self.deterministic:
            self.model.set_random_seed(seed)

    def _model_input(self, observations: np.ndarray, masks: np.ndarray) -> Any:
        if self._dict_keys is None:
            return observations
        parts = {"observation": observations, "action_mask": masks}
        return {key: parts[key] for key in self._dict_keys}

    def act(self, observation: Observation) -> int:
        mask = np.asarray(observation["action_mask"])
        obs = np.asarray(observation["observation"], dtype=np.float32)
        action, _ = self.model.predict(
            self._model_input(obs, mask),
            action_masks=mask.astype(bool),
            deterministic=self.deterministic,
        )
        return int(action)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch ``(n, obs_size)`` with masks ``(n, 80)`` in one forward pass."""
        masks = np.asarray(masks)
        actions, _ = self.model.predict(
            self._model_input(np.asarray(observations, dtype=np.float32), masks),
            action_masks=masks.astype(bool),
            deterministic=self.deterministic,
        )
        return np.asarray(actions, dtype=np.int64)

    def __repr__(self) -> str:
        return f"PolicyAgent({str(self.path)!r})"
