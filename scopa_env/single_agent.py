"""A single-agent Gymnasium view of ``scopa_v0`` for Stable-Baselines3 and similar libraries.

The learner holds one seat and the opponent acts inside ``step()``, so every transition the
learner sees is its own and the learner always receives its terminal reward::

    from sb3_contrib import MaskablePPO
    from scopa_env.single_agent import ScopaSingleAgentEnv

    env = ScopaSingleAgentEnv(opponent=None, seat="alternate")  # None: a random legal opponent
    model = MaskablePPO("MlpPolicy", env).learn(100_000)

Observations are the ``"observation"`` vector of ``scopa_v0`` (a ``Box``); the legal actions
come from ``action_masks()`` (what sb3-contrib's ``MaskablePPO`` calls) and ``info["action_mask"]``.

Every Scopa table works (``table=`` or ``players=``, as for ``scopa_v0.env``). At a table where
each plays for themselves the learner holds one seat and the opponent plays every other seat;
in partnerships (``scopa_4``, ``scopa_6``) the learner plays every seat of its side, the usual
self-play convention, each from that seat's own observation (a partner's hand is never shown),
and the opponent plays the other side's seats. The reward is the learner's side's.

    env = ScopaSingleAgentEnv(opponent="greedy", table="scopa_4")  # the learner plays 0+2 or 1+3
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces

from scopa_env.actions import NUM_ACTIONS
from scopa_env.errors import EnvironmentArgumentError, PlayerError
from scopa_env.players import Observation, Player, check_table, make_player
from scopa_env.rules import Rules
from scopa_env.scopa_v0 import IllegalActionError, raw_env
from scopa_env.seeds import check_seed
from scopa_env.tables import Table

__all__ = ["ScopaSingleAgentEnv", "check_opponent"]

ObsDict = dict[str, np.ndarray]
OpponentLike = Player | Callable[[Observation], int] | str | None
SEATS = ("alternate", "random")
ILLEGAL_ACTIONS = ("lose", "raise")


def check_opponent(opponent: object, rules: Rules, table: Table, label: str | None = None) -> None:
    """Raise ``PlayerError`` or ``TableError`` (``ValueError``s) for an opponent built for
    other rules than the environment's, or one that cannot play at its table
    (``scopa_env.players.check_table``: two-player Scopa only, a network of another table).

    A player keeps the rules it was built with (its ``rules`` attribute, also read through a
    bound method such as ``agent.act``); with the defaults in a variant it would value cards as
    in the default game. The target is left out: players read it from the observation.
    """
    check_table(opponent, table, label)
    owner = getattr(opponent, "__self__", opponent)
    theirs = getattr(owner, "rules", None)
    if isinstance(theirs, Rules) and dataclasses.replace(theirs, target=rules.target) != rules:
        raise PlayerError(
            f"the opponent {owner!r} was built for other rules than the environment's ({rules}); "
            "build it with rules=env.rules, or pass its name to have it built so"
        )


def _resolve_opponent(
    opponent: OpponentLike, rules: Rules, table: Table
) -> tuple[Callable[[ObsDict], int] | None, Callable[..., Any] | None]:
    """The opponent's move function and its optional ``reset(seed=...)``.

    ``None`` stands for the environment's own random player. A name is built by
    ``scopa_env.players.make_player`` with the environment's rules.
    """
    if opponent is None:
        return None, None
    label = opponent if isinstance(opponent, str) else None
    if isinstance(opponent, str):
        opponent = make_player(opponent, rules=rules)
    check_opponent(opponent, rules, table, label)
    reset = getattr(opponent, "reset", None)
    reset = reset if callable(reset) else None
    act = getattr(opponent, "act", None)
    if callable(act):
        return act, reset
    if callable(opponent):
        return opponent, reset
    raise PlayerError(
        "opponent must be None, an agent name, an object with act(observation) -> int or a "
        f"callable(observation) -> int; got {opponent!r}"
    )


class ScopaSingleAgentEnv(gymnasium.Env[np.ndarray, np.int64]):
    """Scopa against a fixed opponent, from one seat, as a Gymnasium environment.

    Args:
        opponent: ``None`` (uniformly random legal moves, seeded by ``reset``), an object with
            ``act(observation_dict) -> int``, a callable on the observation dict, or the name
            of a player (``scopa_env.players.make_player(name)``). An opponent with a
            ``reset(seed=...)`` method is reset with a seed from this environment every
            episode, so seeded runs repeat exactly.
        seat: the learner's seat: 0, 1 (any seat of the table), ``"alternate"`` (0 then 1
            then 0..., one side after the other, restarting at 0 whenever ``reset`` gets a
            seed) or ``"random"`` (a random side). ``reset(options={"seat": s})`` overrides it
            for one episode. In partnerships the learner plays every seat of that seat's side.
        rules, episode, reward, table, players: as for ``scopa_v0.env``.
        illegal_action: ``"lose"``: an illegal action ends the episode with
            ``illegal_reward`` (so random exploration and ``check_env`` are safe); ``"raise"``:
            raise ``IllegalActionError``.
        illegal_reward: the reward for an illegal action under ``"lose"``.
        render_mode: ``None``, ``"human"``, ``"ansi"`` or ``"rgb_array"``; the picture shows
            the learner's hand.

    Other ``reset`` options (``"deck"``, ``"first_player"``) go to ``scopa_v0``.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        opponent: OpponentLike = None,
        seat: int | Literal["alternate", "random"] = "alternate",
        rules: Rules | str | dict[str, Any] | None = None,
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        illegal_action: Literal["lose", "raise"] = "lose",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        table: Table | str | None = None,
        players: int | None = None,
    ) -> None:
        # Each environment its own: Gymnasium 1.2's SyncVectorEnv writes its autoreset mode
        # into its first environment's metadata, which would otherwise be this class's.
        self.metadata = {**self.metadata, "render_modes": list(self.metadata["render_modes"])}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise EnvironmentArgumentError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.aec = raw_env(
            rules=rules,
            episode=episode,
            reward=reward,
            render_mode="ansi" if render_mode == "human" else render_mode,
            table=table,
            players=players,
        )
        self.table: Table = self.aec.table
        self.seat_mode = self._check_seat(seat, "seat")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise EnvironmentArgumentError(
                f"illegal_action must be one of {list(ILLEGAL_ACTIONS)}, got {illegal_action!r}"
            )
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self._opponent, self._opponent_reset = _resolve_opponent(
            opponent, self.aec.rules, self.table
        )
        space = self.aec.observation_space("player_0")
        assert isinstance(space, spaces.Dict)
        self.observation_space = space["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._episodes = 0
        self._seat = self.seat_mode if isinstance(self.seat_mode, int) else 0
        self._learners: frozenset[str] = frozenset()
        self._obs: ObsDict = {}
        self._over = True

    def _check_seat(self, seat: Any, what: str) -> int | str:
        if isinstance(seat, str) and seat in SEATS:
            return seat
        players = self.table.players
        if (
            not isinstance(seat, bool)
            and isinstance(seat, int | np.integer)
            and 0 <= seat < players
        ):
            return int(seat)
        seats = "0, 1" if players == 2 else f"a seat 0..{players - 1}"
        raise EnvironmentArgumentError(
            f"{what} must be {seats}, 'alternate' or 'random', got {seat!r}"
        )

    @property
    def seat(self) -> int:
        """The learner's seat this episode (0 or 1 with two players)."""
        return self._seat

    @property
    def agent(self) -> str:
        """The learner's agent name in the underlying ``scopa_v0`` environment (its seat's)."""
        return self.table.agents[self._seat]

    @property
    def learner_agents(self) -> tuple[str, ...]:
        """Every agent the learner plays: its seat, and its partners' in partnerships."""
        t = self.table
        return tuple(t.agents[s] for s in t.seats_of(t.side_of(self._seat)))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        check_seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0
        options = dict(options or {})
        seat = self._check_seat(options.pop("seat", self.seat_mode), "options['seat']")
        if seat == "alternate":
            seat = self._episodes % self.table.sides
        elif seat == "random":
            seat = int(self.np_random.integers(self.table.sides))
        self._seat = int(seat)
        self._learners = frozenset(self.learner_agents)
        self._episodes += 1
        self.aec.show_hands = self.agent
        self.aec.reset(seed=int(self.np_random.integers(2**63)), options=options or None)
        if self._opponent_reset is not None:  # the agents' convention: reset(seed=) per game
            self._opponent_reset(seed=int(self.np_random.integers(2**63)))
        self._over = False
        self._play_opponent()  # no reward yet: a deal cannot end before the learner plays
        if self.render_mode == "human":
            self.render()
        return self._obs["observation"].copy(), self._info()

    def step(self, action: int | np.integer) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._over:
            raise RuntimeError("the episode is over; call reset() before step()")
        aec = self.aec
        try:
            aec.step(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._over = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs["observation"].copy(), self.illegal_reward, True, False, info
        reward = self._play_opponent(aec.rewards[self.agent])
        if self.render_mode == "human":
            self.render()
        return self._obs["observation"].copy(), reward, self._over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as booleans (what sb3-contrib's ``MaskablePPO`` reads)."""
        if not self._obs:
            raise RuntimeError("call reset() before action_masks()")
        return self._obs["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # an unbound TypeVar
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        picture = self.aec.render()
        if self.render_mode == "human":
            print(picture)
            return None
        return picture

    def close(self) -> None:
        self.aec.close()

    # Internals ------------------------------------------------------------------------------

    def _play_opponent(self, reward: float = 0.0) -> float:
        """Let the opponent move until the learner is to move or the game ends; return the
        learner's reward since its own action (``reward``, what that action earned)."""
        aec, learner, learners = self.aec, self.agent, self._learners
        while not aec.terminations[learner] and aec.agent_selection not in learners:
            observation = aec.observe(aec.agent_selection)
            if self._opponent is None:
                legal = np.flatnonzero(observation["action_mask"])
                action = int(legal[self.np_random.integers(len(legal))])
            else:
                action = self._opponent(observation)
            try:
                aec.step(action)
            except IllegalActionError as error:
                raise IllegalActionError(f"the opponent chose an illegal action: {error}") from None
            reward += aec.rewards[learner]
        self._over = aec.terminations[learner]
        self._obs = aec.observe(learner if self._over else aec.agent_selection)
        return float(reward)

    def _info(self) -> dict[str, Any]:
        info = dict(self.aec.infos[self.agent])
        info["action_mask"] = self._obs["action_mask"].copy()
        return info
