"""Tianshou: its ``PettingZooEnv`` over any table, with infos its replay buffer can hold.

Tianshou stacks every step's info into the replay buffer's arrays, so an info key that appears
only sometimes, or changes type, leaves NaNs there and its trainer stops with
``MalformedBufferError``. The environments' infos do both (``"deal_score"`` only when a deal
ends, ``"winner"`` only when the episode ends: an agent name, partners' names or ``None``), so
``uniform_infos`` gives each agent, on every step, the same keys of the same types:

===============  ===============  =============================================================
Key              Type             Meaning
===============  ===============  =============================================================
``deal_over``    ``bool``         a deal ended since this agent last moved
``deal_points``  int64 ``(S,)``   each side's points in that deal (zeros when none ended)
``match_score``  int64 ``(S,)``   each side's match points now
``game_over``    ``bool``         the episode is over
``winner``       ``int``          the side that won the episode; -1 before the end and on a tie
===============  ===============  =============================================================

``S`` is the number of sides (``env.unwrapped.table.sides``); seat ``s`` plays for side
``s % S``. The environment's own infos are unchanged in ``env.unwrapped.infos``::

    from tianshou.env import DummyVectorEnv
    from scopa_env.integrations.tianshou import pettingzoo_env

    train_envs = DummyVectorEnv([lambda: pettingzoo_env("scopa", episode="deal")] * 8)

then Tianshou's own multi-agent recipe (``MultiAgentOffPolicyAlgorithm`` with a learner and
``MARLRandomDiscreteMaskedOffPolicyAlgorithm``, as in its tic-tac-toe example) runs unchanged;
``docs/libraries.md`` has it whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from scopa_env.environments import make_aec
from scopa_env.tables import Table

__all__ = ["UniformInfos", "pettingzoo_env", "uniform_infos"]


class UniformInfos(BaseWrapper):
    """An AEC environment of this project whose infos hold the same keys and types on every
    step (the table in the module docstring)."""

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        raw = self.env.unwrapped
        table = raw.table
        sides = table.sides
        match_score = np.asarray(raw.match.scores, np.int64)
        winners = {raw.winner_label(side): side for side in range(sides)}
        uniform = {}
        for agent, info in self.env.infos.items():
            points = np.zeros(sides, np.int64)
            if "deal_score" in info:
                points[:] = [side["total"] for side in info["deal_score"]]
            uniform[agent] = {
                "deal_over": "deal_score" in info,
                "deal_points": points,
                "match_score": match_score.copy(),
                "game_over": "winner" in info,
                "winner": winners.get(info.get("winner"), -1),
            }
        return uniform


def uniform_infos(env: Any) -> UniformInfos:
    """``env`` (any environment of this project, wrapped or raw) with uniform infos."""
    return UniformInfos(env)


def pettingzoo_env(table: Table | str | None = None, **options: Any) -> Any:
    """Tianshou's ``PettingZooEnv`` over the wrapped environment of ``table`` (see
    ``scopa_env.environments.make_aec``; ``options`` are the environment's), uniform infos."""
    from tianshou.env import PettingZooEnv

    return PettingZooEnv(uniform_infos(make_aec(table, wrapped=True, **options)))
