"""The self-play opponent pool: frozen snapshots of the learner plus baseline players.

Playing only the newest self invites cycling and forgetting; playing only baselines caps the
learner at exploiting them. The pool mixes both with configured probabilities. Before every
rollout each group of environments draws one member; a snapshot member is a frozen copy of the
policy network that acts on the whole group's batch at once, so the opponent costs one forward
pass per step however many environments it plays in.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from scopa_env.actions import NUM_ACTIONS

BASELINES = ("random", "greedy", "heuristic")
SNAPSHOT_KINDS = ("snapshot", "latest")


@dataclass
class Snapshot:
    """A frozen copy of the learner's policy weights, tagged with the update it was taken at."""

    update: int
    state_dict: dict[str, torch.Tensor]

    @property
    def name(self) -> str:
        return f"snapshot@{self.update}"


@dataclass
class OpponentPool:
    """Draws opponents with the configured probabilities; holds the snapshots.

    ``probs`` maps ``random``, ``greedy``, ``snapshot`` and ``latest`` to probabilities. Until
    the first snapshot exists the snapshot kinds' share is spread over the baselines in
    proportion to theirs, so training can start before any snapshot is taken.
    """

    probs: Mapping[str, float]
    max_snapshots: int
    seed: int
    snapshots: list[Snapshot] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def add_snapshot(self, update: int, state_dict: Mapping[str, torch.Tensor]) -> Snapshot:
        """Freeze a copy of ``state_dict`` (tensors are cloned to CPU) into the pool."""
        frozen = {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}
        snapshot = Snapshot(update, frozen)
        self.snapshots.append(snapshot)
        del self.snapshots[: -self.max_snapshots]
        return snapshot

    def effective_probs(self) -> dict[str, float]:
        """The probabilities actually used now (snapshot kinds only once a snapshot exists)."""
        probs = {k: float(v) for k, v in self.probs.items() if v > 0}
        if self.snapshots:
            return probs
        baseline = {k: v for k, v in probs.items() if k in BASELINES}
        total = sum(baseline.values())
        return {k: v / total for k, v in baseline.items()}

    def sample(self, n: int) -> list[str | Snapshot]:
        """``n`` independent draws: a baseline name or a ``Snapshot``."""
        probs = self.effective_probs()
        kinds = list(probs)
        weights = np.array([probs[k] for k in kinds])
        draws = self.rng.choice(len(kinds), size=n, p=weights / weights.sum())
        members: list[str | Snapshot] = []
        for draw in draws:
            kind = kinds[draw]
            if kind == "snapshot":
                members.append(self.snapshots[self.rng.integers(len(self.snapshots))])
            elif kind == "latest":
                members.append(self.snapshots[-1])
            else:
                members.append(kind)
        return members

    # Checkpointing: the pool is part of a run's state, so --resume restores it exactly.

    def state_dict(self) -> dict[str, Any]:
        return {
            "rng": self.rng.bit_generator.state,
            "snapshots": [(s.update, s.state_dict) for s in self.snapshots],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.snapshots = [Snapshot(update, weights) for update, weights in state["snapshots"]]


class FrozenPolicy:
    """A snapshot playing as an opponent: the policy network with fixed weights, batched.

    It samples from the masked action distribution (not the argmax), so the learner meets the
    spread of play the snapshot really had, with its own torch generator so the opponent's
    draws never touch the learner's random streams.
    """

    def __init__(self, policy: torch.nn.Module, seed: int) -> None:
        self.policy = copy.deepcopy(policy).to("cpu").eval()
        for param in self.policy.parameters():
            param.requires_grad_(False)
        self.generator = torch.Generator().manual_seed(seed)
        self.loaded: int | None = None

    def load(self, snapshot: Snapshot) -> None:
        if self.loaded != snapshot.update:
            self.policy.load_state_dict(snapshot.state_dict)
            self.loaded = snapshot.update

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, sampled from the policy restricted to the legal actions."""
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        features = self.policy.extract_features(obs_t, self.policy.pi_features_extractor)
        logits = self.policy.action_net(self.policy.mlp_extractor.forward_actor(features))
        logits = logits.masked_fill(torch.as_tensor(masks) == 0, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        return torch.multinomial(probs, 1, generator=self.generator).squeeze(1).numpy()


class MaterialPotential:
    """Potential-based reward shaping: the material of the capture piles, in points.

    ``phi(s)`` is what the learner's pile is worth minus the opponent's (card values of the
    greedy player: cards, coins, settebello, primiera cards) plus the scope difference, read
    from the learner's observation. The shaping reward ``gamma * phi(s') - phi(s)``, with
    ``phi = 0`` at the end of an episode, credits a capture at once yet sums to zero over every
    episode, so it changes no optimal policy (Ng, Harada and Russell, 1999); it only makes the
    end-of-deal points easier to attribute early in training.
    """

    def __init__(self, rules: Any, scale: float, gamma: float) -> None:
        from agents.greedy import CardValues
        from scopa_env.observation import OBS_SLICES, SCOPE_SCALE

        values = np.array(CardValues().per_card(rules), np.float32) / 100.0
        weights = np.zeros(OBS_SLICES["last_capturer"].stop, np.float32)
        weights[OBS_SLICES["my_captures"]] = values
        weights[OBS_SLICES["opp_captures"]] = -values
        scope = OBS_SLICES["scope"]
        weights[scope.start] = SCOPE_SCALE
        weights[scope.start + 1] = -SCOPE_SCALE
        self.weights = scale * weights
        self.gamma = gamma

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return obs @ self.weights

    def reward(self, before: np.ndarray, obs: np.ndarray, dones: np.ndarray) -> np.ndarray:
        after = np.where(dones, 0.0, self(obs)).astype(np.float32)
        return self.gamma * after - before


class SwitchableOpponent:
    """The opponent of one group of environments: whichever pool member it was last given.

    The vectorized environment holds this object as its (batched) opponent for the whole run;
    the pool only changes what it delegates to, between rollouts.
    """

    def __init__(self, baselines: Mapping[str, Any], frozen: FrozenPolicy | None = None) -> None:
        self.baselines = baselines
        self.frozen = frozen
        self.member: str | Snapshot = next(iter(baselines))
        self.seconds = 0.0

    def set(self, member: str | Snapshot) -> None:
        if isinstance(member, Snapshot):
            if self.frozen is None:
                raise RuntimeError("attach a policy before drawing snapshots")
            self.frozen.load(member)
        self.member = member

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        player = self.frozen if isinstance(self.member, Snapshot) else self.baselines[self.member]
        actions = player.act_batch(obs, masks)
        self.seconds += time.perf_counter() - start
        return actions

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.act_batch(obs, masks)

    @property
    def name(self) -> str:
        return self.member.name if isinstance(self.member, Snapshot) else self.member

    @property
    def kind(self) -> str:
        """``random``, ``greedy`` or ``snapshot``: what training statistics are grouped by."""
        return "snapshot" if isinstance(self.member, Snapshot) else self.member


class PoolVecEnv(VecEnv):
    """The learner against the pool, as one SB3 ``VecEnv`` over the batched engine.

    Learner-centric like ``scopa_env.vector_env``: the learner acts in every game at each
    ``step`` and the opponents move inside it, so every transition is the learner's own. What
    it adds is per-game opponents: the games are split into ``groups`` equal blocks and
    ``draw_opponents`` gives each block a fresh draw from the pool, and the opponent moves of
    all blocks go into one engine step. The learner's seat alternates per game and episode, so
    it plays both seats. It also times itself, for the run report's environment share.
    """

    def __init__(
        self,
        num_envs: int,
        groups: int,
        pool: OpponentPool,
        baselines: Mapping[str, Any],
        rules: Any = None,
        episode: str = "deal",
        reward: str = "points",
        seed: int = 0,
        shaping: float = 0.0,
        gamma: float = 1.0,
    ) -> None:
        from scopa_env.batched import BatchedScopa
        from scopa_env.observation import OBS_HIGH, OBS_SIZE

        if num_envs % groups:
            raise ValueError(f"num_envs={num_envs} must be a multiple of groups={groups}")
        observation_space = spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.render_mode = None
        super().__init__(num_envs, observation_space, spaces.Discrete(NUM_ACTIONS))
        self.engine = BatchedScopa(num_envs, rules, episode=episode, reward=reward, seed=seed)
        self.pool = pool
        self.groups = groups
        self.baselines = dict(baselines)
        self.opponents = [SwitchableOpponent(self.baselines) for _ in range(groups)]
        self.group_of = np.arange(num_envs) // (num_envs // groups)
        self.seat = (np.arange(num_envs) % 2).astype(np.int8)
        self.episode_return = np.zeros(num_envs, np.float64)
        self.episode_length = np.zeros(num_envs, np.int64)
        self.env_seconds = 0.0
        self.results: dict[str, tuple[float, int]] = {}
        self.shaping = MaterialPotential(self.engine.rules, shaping, gamma) if shaping else None
        self.potential = np.zeros(num_envs, np.float32)
        self._seed: int | None = seed
        self._actions: np.ndarray | None = None

    # Pool -----------------------------------------------------------------------------------

    def attach_policy(self, policy: torch.nn.Module) -> None:
        """Give every group a frozen copy of the learner's network to load snapshots into."""
        base = 0 if self._seed is None else self._seed
        for g, opponent in enumerate(self.opponents):
            opponent.frozen = FrozenPolicy(policy, seed=base + 104729 * (g + 1))

    def draw_opponents(self) -> list[str]:
        """Every group draws its opponent for the next rollout; returns their names."""
        members = self.pool.sample(self.groups)
        for opponent, member in zip(self.opponents, members, strict=True):
            opponent.set(member)
        return [opponent.name for opponent in self.opponents]

    def take_results(self) -> dict[str, tuple[float, int]]:
        """Mean learner return and episode count per opponent kind, since the last call."""
        results = {k: (total / count, count) for k, (total, count) in self.results.items()}
        self.results = {}
        return results

    def take_timers(self) -> tuple[float, float]:
        """Seconds spent in the environment and, within it, in opponent moves, since last call."""
        env_s, self.env_seconds = self.env_seconds, 0.0
        opp_s = sum(opponent.seconds for opponent in self.opponents)
        for opponent in self.opponents:
            opponent.seconds = 0.0
        return env_s, opp_s

    # Stepping -------------------------------------------------------------------------------

    def _opponents_move(self, rewards: np.ndarray, dones: np.ndarray, infos: list[dict]) -> None:
        """Play opponent moves until the learner is to act in every game."""
        engine = self.engine
        while True:
            games = np.flatnonzero(engine.player != self.seat)
            if games.size == 0:
                return
            obs, mask = engine.obs[games], engine.mask[games]
            actions = np.empty(games.size, np.intp)
            # One batched call per distinct member, however many groups drew it.
            members = np.array([o.name for o in self.opponents])[self.group_of[games]]
            for name in dict.fromkeys(members.tolist()):
                rows = members == name
                player = next(o for o in self.opponents if o.name == name)
                actions[rows] = player.act_batch(obs[rows], mask[rows])
            result = engine.step_games(games, actions)
            self._collect(games, result, rewards, dones, infos)

    def _collect(
        self, games: np.ndarray, result: Any, rewards: np.ndarray, dones: np.ndarray, infos: list
    ) -> None:
        """Credit the learner's rewards and close the episodes that ended in this engine step."""
        seat = self.seat[games]
        rewards[games] += result.rewards[np.arange(games.size), seat]
        ended = np.flatnonzero(result.terminated)
        if ended.size == 0:
            return
        final_obs = result.infos["final_obs"]
        for row in ended:
            game = int(games[row])
            dones[game] = True
            infos[game]["terminal_observation"] = final_obs[row, seat[row]].copy()
        self.seat[games[ended]] ^= 1  # the next episode in that game swaps seats

    def reset(self) -> np.ndarray:
        start = time.perf_counter()
        self.engine.reset(seed=self._seed)
        self._seed = None
        self.seat = (np.arange(self.num_envs) % 2).astype(np.int8)
        self.episode_return[:] = 0.0
        self.episode_length[:] = 0
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        self._opponents_move(rewards, dones, [{} for _ in range(self.num_envs)])
        if self.shaping is not None:
            self.potential = self.shaping(self.engine.obs)
        self.env_seconds += time.perf_counter() - start
        return self.engine.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> Any:
        start = time.perf_counter()
        assert self._actions is not None
        n = self.num_envs
        rewards = np.zeros(n, np.float32)
        dones = np.zeros(n, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        games = np.arange(n)
        self._collect(games, self.engine.step(self._actions), rewards, dones, infos)
        self._opponents_move(rewards, dones, infos)
        self.episode_return += rewards  # the statistics count the game's own points only
        self.episode_length += 1
        if self.shaping is not None:
            rewards = rewards + self.shaping.reward(self.potential, self.engine.obs, dones)
            self.potential = self.shaping(self.engine.obs)
        for game in np.flatnonzero(dones):
            infos[game]["episode"] = {
                "r": float(self.episode_return[game]),
                "l": int(self.episode_length[game]),
            }
            kind = self.opponents[self.group_of[game]].kind
            total, count = self.results.get(kind, (0.0, 0))
            self.results[kind] = (total + float(self.episode_return[game]), count + 1)
        self.episode_return[dones] = 0.0
        self.episode_length[dones] = 0
        self.env_seconds += time.perf_counter() - start
        return self.engine.obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(N, 80)`` bool."""
        return self.engine.mask != 0

    # The rest of SB3's VecEnv interface -------------------------------------------------------

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the deals; takes effect at the next ``reset``."""
        self._seed = seed
        return [seed] * self.num_envs

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"PoolVecEnv has no per-environment method {method_name!r}")
        start = time.perf_counter()
        masks = self.action_masks()[list(self._get_indices(indices))]
        self.env_seconds += time.perf_counter() - start
        return list(masks)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self, attr_name)

    def get_images(self) -> list[Any]:
        return []
