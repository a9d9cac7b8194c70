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
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch
from gymnasium import spaces

from agents.base import reset_agent
from scopa_env.privileged import with_hidden
from scopa_env.vector_env import ScopaVecEnv
from training.deal_baseline import DealBaseline

if TYPE_CHECKING:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

#: The players a pool can hold beside snapshots (``ismcts``: for collecting decisions against
#: the search player, at its defaults; at some 16 ms a move it is too slow for PPO; ``rollin``:
#: a copy of the warm start's roll-in player).
BASELINES = ("random", "greedy", "heuristic", "ismcts", "rollin")
SNAPSHOT_KINDS = ("snapshot", "latest", "start")


@dataclass
class Snapshot:
    """A frozen copy of the learner's policy weights, tagged with the update it was taken at."""

    update: int
    state_dict: dict[str, torch.Tensor]
    #: ``snapshot``, or ``start``: the run's starting point (its clone), kept for the whole run.
    kind: str = "snapshot"

    @property
    def name(self) -> str:
        return f"{self.kind}@{self.update}"


@dataclass
class OpponentPool:
    """Draws opponents with the configured probabilities; holds the snapshots.

    ``probs`` maps ``random``, ``greedy``, ``heuristic``, ``snapshot``, ``latest`` and
    ``start`` to probabilities. Until the first snapshot exists (or the start is set) those
    kinds' share is spread over the baselines in proportion to theirs, so training can start
    before any snapshot is taken.
    """

    probs: Mapping[str, float]
    max_snapshots: int
    seed: int
    snapshots: list[Snapshot] = field(default_factory=list)
    #: The starting point, frozen before the first update (``set_start``); never dropped.
    start: Snapshot | None = None

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def add_snapshot(self, update: int, state_dict: Mapping[str, torch.Tensor]) -> Snapshot:
        """Freeze a copy of ``state_dict`` (tensors are cloned to CPU) into the pool."""
        frozen = {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}
        snapshot = Snapshot(update, frozen)
        self.snapshots.append(snapshot)
        del self.snapshots[: -self.max_snapshots]
        return snapshot

    def set_start(self, state_dict: Mapping[str, torch.Tensor]) -> None:
        """Freeze the starting point (the clone) as the pool member ``start``."""
        frozen = {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}
        self.start = Snapshot(0, frozen, kind="start")

    def effective_probs(self) -> dict[str, float]:
        """The probabilities actually used now (snapshot kinds only once a snapshot exists)."""
        probs = {k: float(v) for k, v in self.probs.items() if v > 0}
        ready = {"snapshot": bool(self.snapshots), "latest": bool(self.snapshots)}
        ready["start"] = self.start is not None
        if all(ready.get(k, True) for k in probs):
            return probs
        baseline = {k: v for k, v in probs.items() if k in BASELINES}
        total = sum(baseline.values())
        if not any(ready.get(k, False) for k in probs):
            return {k: v / total for k, v in baseline.items()}
        kept = {k: v for k, v in probs.items() if ready.get(k, True)}
        free = 1.0 - sum(kept.values())
        return {k: v + free * v / total if k in BASELINES else v for k, v in kept.items()}

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
            elif kind == "start":
                assert self.start is not None
                members.append(self.start)
            else:
                members.append(kind)
        return members

    # Checkpointing: the pool is part of a run's state, so --resume restores it exactly.

    def state_dict(self) -> dict[str, Any]:
        return {
            "rng": self.rng.bit_generator.state,
            "snapshots": [(s.update, s.state_dict) for s in self.snapshots],
            "start": None if self.start is None else self.start.state_dict,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.snapshots = [Snapshot(update, weights) for update, weights in state["snapshots"]]
        start = state.get("start")  # absent in checkpoints written before the start member
        self.start = None if start is None else Snapshot(0, start, kind="start")


class FrozenPolicy:
    """A snapshot playing as an opponent: the policy network with fixed weights, batched.

    It samples from the masked action distribution (not the argmax), so the learner meets the
    spread of play the snapshot really had, with its own torch generator so the opponent's
    draws never touch the learner's random streams. ``greedy`` plays the most likely legal
    move instead (the deal baseline's reference: no noise of its own).
    """

    def __init__(self, policy: MaskableActorCriticPolicy, seed: int, greedy: bool = False) -> None:
        self.policy = copy.deepcopy(policy).to("cpu").eval()
        self.greedy = greedy
        for param in self.policy.parameters():
            param.requires_grad_(False)
        self.generator = torch.Generator().manual_seed(seed)
        self.loaded: str | None = None

    def load(self, snapshot: Snapshot) -> None:
        if self.loaded != snapshot.name:
            self.policy.load_state_dict(snapshot.state_dict)
            self.loaded = snapshot.name

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, sampled from the policy restricted to the legal actions."""
        from stable_baselines3.common.policies import BasePolicy

        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        # The base class's method, as sb3-contrib's get_distribution calls it: the actor's
        # features alone, whether or not the critic shares the extractor.
        features = BasePolicy.extract_features(
            self.policy, obs_t, self.policy.pi_features_extractor
        )
        logits = self.policy.action_net(self.policy.mlp_extractor.forward_actor(features))
        logits = logits.masked_fill(torch.as_tensor(masks) == 0, float("-inf"))
        if self.greedy:
            return logits.argmax(dim=-1).numpy()
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
        player: Any
        if isinstance(self.member, Snapshot):
            assert self.frozen is not None  # set() refuses a snapshot without a policy
            player = self.frozen
        else:
            player = self.baselines[self.member]
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
        """A baseline's name, ``snapshot`` or ``start``: what training statistics are grouped by."""
        return self.member.kind if isinstance(self.member, Snapshot) else self.member


class PoolOpponents:
    """The opponents of all groups as one batched move function for ``LearnerBatch``.

    Rows are split by the pool member their game's group drew, one batched call per distinct
    member however many groups drew it.
    """

    def __init__(self, opponents: list[SwitchableOpponent], group_of: np.ndarray) -> None:
        self.opponents = opponents
        self.group_of = group_of

    def act_games(self, games: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = np.empty(games.size, np.intp)
        members = np.array([o.name for o in self.opponents])[self.group_of[games]]
        for name in dict.fromkeys(members.tolist()):
            rows = members == name
            player = next(o for o in self.opponents if o.name == name)
            actions[rows] = player.act_batch(obs[rows], masks[rows])
        return actions


class PoolVecEnv(ScopaVecEnv):
    """The learner against the pool, as one SB3 ``VecEnv`` over the batched engine.

    It is ``scopa_env.vector_env.ScopaVecEnv`` (the learner acts in every game at each step,
    the opponents move inside it, the learner's side alternates per game and episode) at any
    ``table``: the learner holds one seat at a free-for-all table (``scopa``, ``scopa_3``) and
    every seat of its side at a partnership table, playing its partners' seats too (the usual
    self-play convention: a partner plays as well as the learner), while a game's pool member
    plays every other seat, so one opponent policy sits in all the other sides' seats. It has
    per-game opponents: the games are split into ``groups`` equal blocks and
    ``draw_opponents`` gives each block a fresh draw from the pool. It also shapes rewards,
    keeps results per opponent kind and times itself, for the run report's environment share.

    ``deal_baseline="start"`` subtracts from each deal's reward the points of the pool's
    ``start`` on the same deck in the learner's seats against the same opponent
    (``training.deal_baseline``; ``baseline_play``: its ``argmax`` move or a ``sample``), once
    ``attach_policy`` finds the start set. The shadows' opponents are copies of the groups'
    with their own random streams; the results per opponent kind stay the learner's own points.
    """

    def __init__(
        self,
        num_envs: int,
        groups: int,
        pool: OpponentPool,
        baselines: Mapping[str, Any],
        rules: Any = None,
        table: Any = None,
        episode: Literal["match", "deal"] = "deal",
        reward: Literal["match", "points"] = "points",
        seed: int = 0,
        shaping: float = 0.0,
        gamma: float = 1.0,
        hidden: bool = False,
        deal_baseline: str | None = None,
        baseline_play: str = "argmax",
    ) -> None:
        if num_envs % groups:
            raise ValueError(f"num_envs={num_envs} must be a multiple of groups={groups}")
        self.pool = pool
        self.groups = groups
        self.baselines = dict(baselines)
        self.opponents = [SwitchableOpponent(self.baselines) for _ in range(groups)]
        self.group_of = np.arange(num_envs) // (num_envs // groups)
        super().__init__(
            num_envs,
            rules,
            opponent=PoolOpponents(self.opponents, self.group_of),
            table=table,
            episode=episode,
            reward=reward,
            seed=seed,
        )
        self.engine = self.batch.engine
        self.env_seconds = 0.0
        self.results: dict[str, tuple[float, int]] = {}
        self.baseline_results: dict[str, tuple[float, int]] = {}
        self.deal_baseline: DealBaseline | None = None
        #: Whether the games are dealt (``reset`` has been called).
        self.dealt = False
        self.baseline_play = baseline_play
        if deal_baseline is not None:
            if deal_baseline != "start":
                raise ValueError(f"deal_baseline must be 'start' or None, got {deal_baseline!r}")
            if episode != "deal":
                raise ValueError("deal_baseline needs episode='deal': a shadow plays one deal")
            if baseline_play not in ("argmax", "sample"):
                raise ValueError(
                    f"baseline_play must be 'argmax' or 'sample', got {baseline_play!r}"
                )
            self.shadow_baselines = copy.deepcopy(self.baselines)
            self.shadow_opponents = [
                SwitchableOpponent(self.shadow_baselines) for _ in range(groups)
            ]
            self.deal_baseline = DealBaseline(
                num_envs,
                self.engine.rules,
                self.engine.table,
                reward,
                PoolOpponents(self.shadow_opponents, self.group_of),
            )
        self.shaping = MaterialPotential(self.engine.rules, shaping, gamma) if shaping else None
        self.potential = np.zeros(num_envs, np.float32)
        #: The observation's own width; with ``hidden`` (an oracle critic's training) each
        #: observation is followed by ``scopa_env.privileged``'s block of the hidden cards.
        self.play_width = self.engine.obs_size
        self.hidden = hidden
        if hidden:
            self.observation_space: spaces.Box = with_hidden(
                self.observation_space, self.engine.table.players
            )

    @property
    def seat(self) -> np.ndarray:
        """The learner's seat in every game."""
        return self.batch.seat

    # Pool -------------------------------------------------------------------------------

    def attach_policy(self, policy: MaskableActorCriticPolicy) -> None:
        """Give every group a frozen copy of the learner's network to load snapshots into."""
        base = 0 if self._seed is None else self._seed
        for g, opponent in enumerate(self.opponents):
            opponent.frozen = FrozenPolicy(policy, seed=base + 104729 * (g + 1))
        if self.deal_baseline is None:
            return
        for g, opponent in enumerate(self.shadow_opponents):
            opponent.frozen = FrozenPolicy(policy, seed=base + 130363 * (g + 1))
        if self.pool.start is not None:
            greedy = self.baseline_play == "argmax"
            reference = FrozenPolicy(policy, seed=base + 179424673, greedy=greedy)
            reference.load(self.pool.start)
            self.set_reference(reference)

    def set_reference(self, reference: Any) -> None:
        """Play the deal baseline's shadows with ``reference`` (``act_batch(obs, masks)``),
        from the deals now in progress on."""
        if self.deal_baseline is None:
            raise RuntimeError("this environment has no deal baseline (deal_baseline=None)")
        self.deal_baseline.reference = reference
        for shadow, opponent in zip(self.shadow_opponents, self.opponents, strict=True):
            shadow.set(opponent.member)
        if self.dealt:
            self.deal_baseline.record(np.arange(self.num_envs), self.engine, self.seat)

    def draw_opponents(self) -> list[str]:
        """Every group draws its opponent for the next rollout; returns their names."""
        members = self.pool.sample(self.groups)
        baseline = self.deal_baseline
        if baseline is not None and baseline.active:
            baseline.flush()  # the pending shadows meet the opponents their deals began with
            for shadow, member in zip(self.shadow_opponents, members, strict=True):
                shadow.set(member)
        for opponent, member in zip(self.opponents, members, strict=True):
            opponent.set(member)
        return [opponent.name for opponent in self.opponents]

    def restart(self, seed: int) -> np.ndarray:
        """Deal every game afresh from ``seed`` alone, the opponents' draws seeded from it too.

        Nothing the games did before carries over, so the run that wrote a checkpoint and a run
        resumed from it, both restarted here, play the same games from then on.
        """
        for i, name in enumerate(sorted(self.baselines)):
            reset_agent(self.baselines[name], seed + 15485863 * (i + 1))
        for g, opponent in enumerate(self.opponents):
            if opponent.frozen is not None:
                opponent.frozen.generator.manual_seed(seed + 104729 * (g + 1))
        if self.deal_baseline is not None:
            for i, name in enumerate(sorted(self.shadow_baselines)):
                reset_agent(self.shadow_baselines[name], seed + 32452843 * (i + 1))
            for g, opponent in enumerate(self.shadow_opponents):
                if opponent.frozen is not None:
                    opponent.frozen.generator.manual_seed(seed + 130363 * (g + 1))
            reference = self.deal_baseline.reference
            if isinstance(reference, FrozenPolicy):
                reference.generator.manual_seed(seed + 179424673)
        self.seed(seed)
        return self.reset()

    def take_results(self) -> dict[str, tuple[float, int]]:
        """Mean learner return and episode count per opponent kind, since the last call."""
        results = {k: (total / count, count) for k, (total, count) in self.results.items()}
        self.results = {}
        return results

    def take_baseline_results(self) -> dict[str, tuple[float, int]]:
        """Mean shadow points (the deal baseline's) and deal count per opponent kind, since
        the last call; empty without a deal baseline."""
        results = {k: (total / count, count) for k, (total, count) in self.baseline_results.items()}
        self.baseline_results = {}
        return results

    def take_timers(self) -> tuple[float, float]:
        """Seconds in the environment and, within it, in opponent moves, since last call."""
        env_s, self.env_seconds = self.env_seconds, 0.0
        opp_s = sum(opponent.seconds for opponent in self.opponents)
        for opponent in self.opponents:
            opponent.seconds = 0.0
        return env_s, opp_s

    # Stepping: the vector environment's, with shaping, statistics and timing -----------

    def reset(self) -> np.ndarray:
        start = time.perf_counter()
        obs = self._widen(super().reset())
        self.dealt = True
        if self.deal_baseline is not None:
            self.deal_baseline.clear()
            self.deal_baseline.record(np.arange(self.num_envs), self.engine, self.seat)
        if self.shaping is not None:
            self.potential = self.shaping(self.engine.obs)
        self.env_seconds += time.perf_counter() - start
        return obs

    def _widen(self, obs: np.ndarray) -> np.ndarray:
        """The learner's observations, with the hidden cards when training an oracle critic."""
        if not self.hidden:
            return obs
        return np.concatenate([obs, self.engine.hidden()], axis=1)

    def step_wait(self) -> Any:
        start = time.perf_counter()
        obs, rewards, dones, infos = super().step_wait()
        obs = self._widen(obs)
        if self.hidden:  # an episode ends with every card played: nothing is hidden
            extra = self.observation_space.shape[0] - self.play_width
            for game in np.flatnonzero(dones):
                final = infos[game]["terminal_observation"]
                infos[game]["terminal_observation"] = np.concatenate(
                    [final, np.zeros(extra, np.float32)]
                )
        if self.shaping is not None:  # the statistics count the game's own points only
            rewards = rewards + self.shaping.reward(self.potential, self.engine.obs, dones)
            self.potential = self.shaping(self.engine.obs)
        baseline = self.deal_baseline
        ended = np.flatnonzero(dones)
        if baseline is not None and baseline.active and ended.shape[0]:
            shadow = baseline.take(ended)
            rewards = rewards.copy()
            rewards[ended] -= shadow
            baseline.record(ended, self.engine, self.seat)  # the deals they start now
            kinds = np.array([o.kind for o in self.opponents])[self.group_of[ended]]
            for kind in np.unique(kinds).tolist():
                rows = kinds == kind
                total, count = self.baseline_results.get(kind, (0.0, 0))
                self.baseline_results[kind] = (
                    total + float(shadow[rows].sum()),
                    count + int(rows.sum()),
                )
        for game in ended:
            kind = self.opponents[self.group_of[game]].kind
            total, count = self.results.get(kind, (0.0, 0))
            self.results[kind] = (total + infos[game]["episode"]["r"], count + 1)
        self.env_seconds += time.perf_counter() - start
        return obs, rewards, dones, infos

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the deals; takes effect at the next ``reset``."""
        self._seed = seed
        return [seed] * self.num_envs

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        start = time.perf_counter()
        result = super().env_method(method_name, *method_args, indices=indices, **method_kwargs)
        self.env_seconds += time.perf_counter() - start
        return result
