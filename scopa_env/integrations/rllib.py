"""RLlib: every table's AEC environment as a ``ray.rllib`` ``MultiAgentEnv`` (new API stack).

``ScopaMultiAgentEnv`` is turn-based: each step returns the observation of the one agent to
act, and RLlib sends back that agent's action alone. Each agent's observation is the dict
RLlib's action-masking example (``ActionMaskingTorchRLModule``) expects::

    {"observations": the environment's observation vector (float32),
     "action_mask":  the 80 legal actions as float32 0/1}

Rewards are the AEC environment's (``reward="points"`` by default: a side's points in the deal
minus the mean of the others'), credited on the step they happen to every agent who has
already observed; RLlib adds a reward to an agent that is not acting to its last transition,
so a deal's points reach every seat's last move. ``side_module(agent, table)`` maps the seats
of one side (partners) to one module name, ``"side_0"``, ``"side_1"``...::

    from ray.rllib.algorithms.ppo import PPOConfig
    from scopa_env.integrations.rllib import ScopaMultiAgentEnv

    config = PPOConfig().environment(
        ScopaMultiAgentEnv, env_config={"table": "scopone"}, disable_env_checking=True
    )

(RLlib's environment checker steps a sampled action that ignores the mask, which the game
refuses as illegal: turn it off.)

``env_config`` takes ``table`` (any name of ``scopa_env.tables.TABLES``) and the AEC
environment's own options (``rules``, ``episode``, ``reward``); ``episode`` defaults to
``"deal"``. Needs the ``distributed`` extra.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.typing import MultiAgentDict

from scopa_env.actions import NUM_ACTIONS
from scopa_env.capture_env import IllegalActionError
from scopa_env.environments import make_aec
from scopa_env.tables import Table, resolve_table


def side_module(agent: str, table: Table | str) -> str:
    """The module of ``agent``'s side: partners share one."""
    kind = resolve_table(table)
    return f"side_{kind.side_of(kind.agents.index(agent))}"


class ScopaMultiAgentEnv(MultiAgentEnv):
    """A table's AEC environment for RLlib; see the module docstring."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        options = {"episode": "deal", "reward": "points", **dict(config or {})}
        table = options.pop("table", "scopa")
        self.aec = make_aec(table, **options)
        self.table = self.aec.table
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        inner = self.aec.observation_spaces[self.agents[0]]["observation"]
        space = spaces.Dict(
            {
                "observations": inner,
                "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.agents}
        self._seen: set[str] = set()

    def reset(  # type: ignore[override]  # RLlib's reset differs from gymnasium's
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[MultiAgentDict, MultiAgentDict]:
        self.aec.reset(seed=seed, options=options)
        self._seen = set()
        return self._observe(), {}

    def step(self, action_dict: MultiAgentDict) -> tuple[Any, ...]:
        agent = self.aec.agent_selection
        if set(action_dict) != {agent}:
            given = sorted(cast("dict[str, Any]", action_dict))  # the agents are str
            raise IllegalActionError(f"it is {agent}'s turn; actions were given for {given}")
        self.aec.step(int(action_dict[agent]))
        rewards = {a: float(self.aec.rewards[a]) for a in self._seen}
        if all(self.aec.terminations.values()):
            return {}, rewards, {"__all__": True}, {"__all__": False}, {}
        return self._observe(), rewards, {"__all__": False}, {"__all__": False}, {}

    def _observe(self) -> MultiAgentDict:
        agent = self.aec.agent_selection
        self._seen.add(agent)
        obs = self.aec.observe(agent)
        return {
            agent: {
                "observations": obs["observation"],
                "action_mask": obs["action_mask"].astype(np.float32),
            }
        }
