"""Players named on the command line, built once per worker process."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scopa_env.errors import PlayerError
from scopa_env.rules import Rules


@dataclass(frozen=True)
class PlayerSpec:
    """A player named on the command line: ``name`` or a checkpoint path, plus options.

    Written ``name[:key=value,...]``, e.g. ``ismcts:iterations=400,exploration=0.5``; values
    are Python literals (numbers, booleans, strings).
    """

    label: str
    name: str
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def parse(cls, text: str) -> PlayerSpec:
        name, sep, rest = text.partition(":")
        options: list[tuple[str, Any]] = []
        if sep and rest:
            for item in rest.split(","):
                key, eq, value = item.partition("=")
                if not eq or not key.strip():
                    raise PlayerError(f"bad player option {item!r} in {text!r} (use key=value)")
                try:
                    parsed = ast.literal_eval(value.strip())
                except (ValueError, SyntaxError):
                    parsed = value.strip()
                options.append((key.strip(), parsed))
        return cls(label=text, name=name, options=tuple(options))

    def build(self, rules: Rules, seed: int | None = None) -> Any:
        """The player, seeded by ``seed`` unless its own options name a seed."""
        from agents import make_agent  # the players import torch lazily, only when needed

        options = {} if seed is None else {"seed": seed}
        options.update(self.options)
        return make_agent(self.name, rules=rules, **options)


_PLAYERS: dict[tuple[PlayerSpec, Rules, tuple[int, int] | None], Any] = {}


def player_for(spec: PlayerSpec, rules: Rules) -> Any:
    """One instance per spec and process (checkpoints load once); reset before every game.

    A checkpoint file rewritten in place (as training does before each evaluation) is loaded
    again: the key holds the file's size and modification time. A trained policy runs torch on
    one thread: its network is small, and more threads per process only contend for the cores
    the other workers use (24 ms of CPU a move with torch's default of 2 threads against 2.6 ms
    with one, measured on 2 shared cores).
    """
    from agents.policy import PolicyAgent
    from agents.rllib_agent import RLlibAgent

    path = Path(spec.name)
    stamp = (path.stat().st_mtime_ns, path.stat().st_size) if path.is_file() else None
    key = (spec, rules, stamp)
    if key not in _PLAYERS:
        _PLAYERS[key] = spec.build(rules)
        if isinstance(_PLAYERS[key], PolicyAgent | RLlibAgent):
            import torch

            torch.set_num_threads(1)
    return _PLAYERS[key]
