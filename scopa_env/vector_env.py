"""Vectorized single-agent Scopa on the batched engine: Gymnasium ``VectorEnv``, SB3 ``VecEnv``.

Both are learner-centric like ``scopa_env.single_agent``: the learner acts in every game at each
``step``, and the opponents' moves happen inside it, for the whole batch at once (one engine step
per round of opponent moves), so every transition is the learner's own and the learner always
receives its terminal reward::

    from sb3_contrib import MaskablePPO
    from scopa_env.vector_env import ScopaVecEnv

    venv = ScopaVecEnv(1024, opponent="random")     # SB3 VecEnv; ScopaVectorEnv for Gymnasium
    model = MaskablePPO("MlpPolicy", venv).learn(1_000_000)
    venv4 = ScopaVecEnv(1024, table="scopa_4")      # the learner plays seats 0+2 or 1+3

Every table of ``scopa_env.tables`` plays (``table=``). At a free-for-all table (``scopa``,
``scopa_3``) the learner holds one seat and every other seat is an opponent; at a partnership
table (``scopa_4``, ``scopa_6``, the Scopone tables) it holds every seat of its side, playing
its partners' seats too from each seat's own observation (the usual self-play convention), and
the other side's seats are opponents. Observations are the AEC environment's observation vector
of the table (373 float32 for two players; ``BatchedScopa.obs_size``) from the seat to act;
legal actions come from ``action_masks()`` (``(N, 80)`` bool, what sb3-contrib's
``MaskablePPO`` reads through ``env_method("action_masks")``) and ``infos["action_mask"]``.
Rewards are the learner's side's.

=============  ==================================================================================
Argument       Meaning
=============  ==================================================================================
``opponent``   ``"random"`` / ``None`` (uniform legal moves, sampled from the engine's bit masks),
               a player's name (``"greedy"``...; needs ``act_batch``), an object with
               ``act_batch(obs, masks)``, or a callable ``(obs (n, size), masks (n, 80)) -> (n,)``,
               e.g. a frozen policy evaluated on the whole batch (``sb3_opponent``); an object
               with ``act_games(games, obs, masks)`` is also told which games the rows are,
               so it can play each game differently (the self-play pool does). It plays every
               seat that is not the learner's, each from that seat's observation
``seat``       the learner's side, named by its first seat: ``"alternate"`` (game ``i`` starts
               on side ``i % sides`` and moves to the next side every episode) or a seat
               ``0 .. sides - 1``; ``seat`` arrays and infos hold it per game
``table``      a table of ``scopa_env.tables`` (two-player Scopa by default)
``rules``      as the AEC environment; so are ``episode`` and ``reward``
=============  ==================================================================================

Episodes reset automatically in the same step (Gymnasium's ``SAME_STEP`` mode): the returned
observation starts the next episode and the final one is ``infos["final_obs"]`` (Gymnasium) or
``infos[i]["terminal_observation"]`` (SB3).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypedDict, Unpack

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from scopa_env.actions import NUM_ACTIONS
from scopa_env.batched import BatchedScopa, BatchStep, random_legal_actions
from scopa_env.errors import EnvironmentArgumentError, PlayerError
from scopa_env.players import make_player
from scopa_env.rules import Rules, resolve_rules
from scopa_env.seeds import check_seed
from scopa_env.single_agent import check_opponent
from scopa_env.tables import Table, resolve_table

__all__ = ["BatchOptions", "LearnerBatch", "ScopaVecEnv", "ScopaVectorEnv", "sb3_opponent"]

#: Built on first access by the module's ``__getattr__`` (it imports SB3, hence torch).
ScopaVecEnv: type[Any]

BatchOpponent = Callable[[np.ndarray, np.ndarray], np.ndarray]
GameOpponent = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
OpponentLike = BatchOpponent | str | None | Any


class BatchOptions(TypedDict, total=False):
    """The options of ``LearnerBatch`` that both vector environments take as keywords."""

    opponent: OpponentLike
    seat: int | Literal["alternate"]
    table: Table | str | None
    episode: Literal["match", "deal"]
    reward: Literal["match", "points"]
    seed: int | None


def sb3_opponent(model: Any, deterministic: bool = False) -> BatchOpponent:
    """A frozen SB3 / sb3-contrib model as a batched opponent (masked when it supports masks)."""
    masked = "action_masks" in inspect.signature(model.predict).parameters

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if masked:
            actions, _ = model.predict(obs, action_masks=masks != 0, deterministic=deterministic)
        else:
            actions, _ = model.predict(obs, deterministic=deterministic)
        return np.asarray(actions)

    return act


def _resolve_opponent(
    opponent: OpponentLike, rules: Rules, table: Table, seed: int | None
) -> GameOpponent | None:
    """The move function ``(games, obs, masks) -> actions``, or ``None`` for the engine's own
    random player."""
    if opponent is None or opponent == "random":
        return None
    label = opponent if isinstance(opponent, str) else None
    if isinstance(opponent, str):
        opponent = make_player(opponent, rules=rules, seed=seed)
    check_opponent(opponent, rules, table, label)
    act_games = getattr(opponent, "act_games", None)
    if callable(act_games):
        return act_games
    act = getattr(opponent, "act_batch", None)
    act = act if callable(act) else opponent if callable(opponent) else None
    if act is not None:
        return lambda games, obs, masks: act(obs, masks)
    raise PlayerError(
        "opponent must be 'random', None, an agents name, an object with act_batch(obs, masks) "
        f"or a callable(obs, masks) -> actions; got {opponent!r}"
    )


class LearnerBatch:
    """The learner-centric loop over ``BatchedScopa`` shared by both vector environments.

    ``step`` applies the learner's actions, then lets the opponents move in every game where
    one is to act, repeatedly, until the learner's side is to act everywhere. Rewards are the
    learner's side's (summed over the engine steps of one learner step); ``final_obs`` holds the
    view of each game whose episode ended from the learner's seat ``seat`` (its side's first).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | dict[str, Any] | None = None,
        *,
        opponent: OpponentLike = "random",
        seat: int | Literal["alternate"] = "alternate",
        table: Table | str | None = None,
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        seed: int | None = None,
    ) -> None:
        self.table = resolve_table(table)
        self.sides = self.table.sides
        sides = range(self.sides)
        if seat != "alternate" and (
            isinstance(seat, bool) or not isinstance(seat, int | np.integer) or seat not in sides
        ):
            firsts = ", ".join(map(str, sides))
            raise EnvironmentArgumentError(
                f"seat must be 'alternate' or the first seat of a side ({firsts}) at "
                f"{self.table.name}, got {seat!r}"
            )
        self.rules = resolve_rules(rules)
        self.seat_mode = seat
        self.engine = BatchedScopa(
            num_envs, self.rules, table=self.table, episode=episode, reward=reward, seed=seed
        )
        self.num_envs = num_envs
        self.opponent = _resolve_opponent(opponent, self.rules, self.table, seed)
        self.rng = self._opponent_rng(seed)
        self.seat = self._initial_seats()
        self.final_obs = np.zeros((num_envs, self.engine.obs_size), np.float32)
        self.won = np.zeros(num_envs, np.float32)

    @staticmethod
    def _opponent_rng(seed: int | None) -> np.random.Generator:
        """The random opponent's generator: its own stream, apart from the deals'."""
        return np.random.default_rng(None if seed is None else [seed, 1])

    def _initial_seats(self) -> np.ndarray:
        if self.seat_mode == "alternate":
            return (np.arange(self.num_envs) % self.sides).astype(np.int8)
        return np.full(self.num_envs, self.seat_mode, np.int8)

    def learner_to_act(self) -> np.ndarray:
        """Whether the seat to act in each game is on the learner's side."""
        return self.engine.player % self.sides == self.seat

    @property
    def obs(self) -> np.ndarray:
        return self.engine.obs

    @property
    def mask(self) -> np.ndarray:
        return self.engine.mask

    def reset(self, seed: int | None = None) -> None:
        check_seed(seed)
        if seed is not None:
            self.rng = self._opponent_rng(seed)
        self.engine.reset(seed=seed)
        self.seat = self._initial_seats()
        rewards = np.zeros(self.num_envs, np.float32)
        done = np.zeros(self.num_envs, bool)
        self._opponents_move(rewards, done)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Learner actions in; ``(rewards, terminated)`` out (obs and masks: ``obs``, ``mask``)."""
        rewards = np.zeros(self.num_envs, np.float32)
        done = np.zeros(self.num_envs, bool)
        games = np.arange(self.num_envs)
        self._collect(games, self.engine.step(actions), rewards, done)
        self._opponents_move(rewards, done)
        return rewards, done

    def _opponents_move(self, rewards: np.ndarray, done: np.ndarray) -> None:
        engine = self.engine
        while True:
            games = np.flatnonzero(engine.player % self.sides != self.seat)
            if not games.shape[0]:
                return
            if self.opponent is None:
                cards, offset = engine.legal_actions_bits()
                actions = random_legal_actions(cards[games], self.rng) + offset[games]
            else:
                actions = np.asarray(self.opponent(games, engine.obs[games], engine.mask[games]))
            self._collect(games, engine.step_games(games, actions), rewards, done)

    def _collect(
        self, games: np.ndarray, result: BatchStep, rewards: np.ndarray, done: np.ndarray
    ) -> None:
        seat = self.seat[games]  # the learner's side, and its first seat
        rows = np.arange(games.shape[0])
        # A deal cannot end on an opponent's first moves of the next episode, so nothing here
        # belongs to an episode that starts within this step.
        rewards[games] += result.rewards[rows, seat]
        if not result.infos or "_final_obs" not in result.infos:
            return
        ended = np.flatnonzero(result.terminated)
        g = games[ended]
        done[g] = True
        self.final_obs[g] = result.infos["final_obs"][ended, seat[ended]]
        winner = result.infos["winner"][ended]
        self.won[g] = np.where(winner < 0, 0.0, np.where(winner == seat[ended], 1.0, -1.0))
        if self.seat_mode == "alternate":
            self.seat[g] = (self.seat[g] + 1) % self.sides


class ScopaVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games from the learner's side, as a Gymnasium ``VectorEnv``.

    Arguments as ``LearnerBatch`` (see the module docstring). ``copy=False`` returns the engine's
    observation buffer itself (overwritten by the next step) instead of a copy.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | dict[str, Any] | None = None,
        *,
        copy: bool = True,
        **options: Unpack[BatchOptions],
    ) -> None:
        self.batch = LearnerBatch(num_envs, rules, **options)
        self.num_envs = num_envs
        self.copy = copy
        engine = self.batch.engine
        self.single_observation_space = spaces.Box(
            0.0, engine.obs_high, (engine.obs_size,), np.float32
        )
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self._started = False

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None and not isinstance(seed, int | np.integer):
            for each in seed if isinstance(seed, Sequence) else [seed]:
                check_seed(each)
            seed = int(np.asarray(seed).reshape(-1)[0])
        check_seed(seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(int(seed))
        self.batch.reset(None if seed is None else int(seed))
        self._started = True
        return self._obs(), {"action_mask": self.batch.mask.copy(), "seat": self.batch.seat.copy()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        rewards, done = self.batch.step(np.asarray(actions))
        infos: dict[str, Any] = {
            "action_mask": self.batch.mask.copy(),
            "seat": self.batch.seat.copy(),
        }
        if done.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            ended = np.flatnonzero(done)
            final_obs[ended] = list(self.batch.final_obs[ended])
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            infos["final_info"] = {"outcome": self.batch.won.copy(), "_outcome": done.copy()}
            infos["_final_info"] = done
        return self._obs(), rewards, done, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, 80)`` bool."""
        return self.batch.mask != 0

    def _obs(self) -> np.ndarray:
        return self.batch.obs.copy() if self.copy else self.batch.obs


class _SB3Methods:
    """``num_envs`` games from the learner's side, as a Stable-Baselines3 ``VecEnv``.

    Arguments as ``LearnerBatch`` (see the module docstring). ``env_method("action_masks")`` and
    ``has_attr("action_masks")`` serve sb3-contrib's ``MaskablePPO``. The class is built on first
    use (``from scopa_env.vector_env import ScopaVecEnv``), so that importing this module does
    not import SB3 and torch.
    """

    num_envs: int
    _seeds: list[int | None]
    _get_indices: Any
    _reset_seeds: Any

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | dict[str, Any] | None = None,
        **options: Unpack[BatchOptions],
    ) -> None:
        self.batch = LearnerBatch(num_envs, rules, **options)
        self.render_mode = None
        self._seed = options.get("seed")
        self._actions: np.ndarray | None = None
        self._return = np.zeros(num_envs, np.float64)
        self._length = np.zeros(num_envs, np.int64)
        engine = self.batch.engine
        observation_space = spaces.Box(0.0, engine.obs_high, (engine.obs_size,), np.float32)
        super().__init__(num_envs, observation_space, spaces.Discrete(NUM_ACTIONS))  # type: ignore[call-arg]

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds[0] is not None else self._seed
        self.batch.reset(seed)
        self._seed = None
        self._reset_seeds()
        self._return[:] = 0.0
        self._length[:] = 0
        return self.batch.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        rewards, done = self.batch.step(self._actions)
        self._actions = None
        self._return += rewards
        self._length += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for game in np.flatnonzero(done).tolist():
            infos[game] = {
                "terminal_observation": self.batch.final_obs[game].copy(),
                "TimeLimit.truncated": False,
                "episode": {"r": float(self._return[game]), "l": int(self._length[game])},
                "outcome": float(self.batch.won[game]),
            }
        self._return[done] = 0.0
        self._length[done] = 0
        return self.batch.obs.copy(), rewards, done, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, 80)`` bool."""
        return self.batch.mask != 0

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.action_masks()[rows])
        method = getattr(self, method_name)
        return [method(*method_args, **method_kwargs)] * len(rows)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> list[Any]:
        return [None] * self.num_envs


def __getattr__(name: str) -> Any:
    """Build ``ScopaVecEnv`` (an SB3 ``VecEnv`` subclass) when it is first asked for."""
    if name != "ScopaVecEnv":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as error:  # pragma: no cover - needs the train extra missing
        raise ImportError(
            "ScopaVecEnv needs stable-baselines3: pip install 'scopa-env[train]'"
        ) from error
    cls = type("ScopaVecEnv", (_SB3Methods, VecEnv), {"__module__": __name__})
    cls.__doc__ = _SB3Methods.__doc__
    globals()["ScopaVecEnv"] = cls
    return cls
