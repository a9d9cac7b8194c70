"""The typed training configuration, validated before anything runs.

A config is a YAML file (see ``configs/``) plus ``key=value`` overrides from the command line
(dotted keys reach nested sections: ``ppo.learning_rate=1e-4``). Everything is checked by
pydantic first, so an unknown key, a wrong type or an impossible value stops the run at once
with a message that names the key, instead of failing an hour into training.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scopa_env.errors import ScopaError
from scopa_env.rules import Rules, describe_rules, resolve_rules
from scopa_env.tables import Table, resolve_table

#: The folder a relative ``export_to`` is inside: the repository, not the working directory.
REPOSITORY = Path(__file__).resolve().parents[1]
#: Opponents the self-play pool can draw: batched baselines, the warm start's roll-in player
#: and frozen copies of the learner.
POOL_MEMBERS = (
    "random",
    "greedy",
    "heuristic",
    "ismcts",
    "rollin",
    "snapshot",
    "latest",
    "start",
)
#: Baselines the periodic evaluation can play against (any ``agents.make_agent`` name works),
#: and ``clone``: the run's own warm start (``clone.zip``), PPO's starting point.
EVAL_OPPONENTS = ("random", "greedy", "heuristic", "ismcts", "clone")


class _Loader(yaml.SafeLoader):
    """Safe YAML that also reads ``1e-4`` as a float (PyYAML's YAML 1.1 wants ``1.0e-4``)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


class ConfigError(ScopaError, ValueError):
    """A config that cannot run; the message names the offending key."""


class Section(BaseModel):
    """A part of a config: unknown keys are refused and the values are checked and frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


M = TypeVar("M", bound=Section)


class PPOConfig(Section):
    """MaskablePPO's hyperparameters (sb3-contrib names) and the network."""

    #: ``card``: ``agents.card_policy.CardPolicy``, weights shared across the 40 cards (much
    #: more sample-efficient); ``mlp``: SB3's MLP with ``net_arch`` hidden layers.
    policy: Literal["card", "mlp"] = "card"
    #: ``card`` policy widths: per-card features and the global summary.
    card_width: int = Field(default=64, ge=1)
    global_width: int = Field(default=128, ge=1)
    #: ``card`` policy: add per-card lookahead features (the table each play leaves, whether
    #: it sweeps, which unseen cards could sweep or capture after it).
    card_lookahead: bool = False

    learning_rate: float = Field(default=3e-4, gt=0, le=1)
    #: ``linear`` decays the learning rate to ``lr_final_fraction`` of it over the run.
    lr_schedule: Literal["constant", "linear"] = "constant"
    lr_final_fraction: float = Field(default=0.1, ge=0, le=1)
    n_steps: int = Field(default=128, ge=1)
    batch_size: int = Field(default=1024, ge=2)
    n_epochs: int = Field(default=4, ge=1)
    gamma: float = Field(default=1.0, ge=0, le=1)
    gae_lambda: float = Field(default=0.95, ge=0, le=1)
    clip_range: float = Field(default=0.2, gt=0, le=1)
    ent_coef: float = Field(default=0.005, ge=0)
    vf_coef: float = Field(default=0.5, ge=0)
    max_grad_norm: float = Field(default=0.5, gt=0)
    target_kl: float | None = Field(default=None, gt=0)
    #: ``mlp`` policy hidden layers (separate actor and critic networks of this shape).
    net_arch: list[int] = Field(default_factory=lambda: [256, 256], min_length=1)
    activation: Literal["relu", "tanh"] = "relu"
    #: ``card`` policy: a value function that also sees the hidden cards (the other hands and
    #: the stock) during training, while the policy reads only its observation
    #: (``agents.oracle_policy``); the saved players are ordinary ``CardPolicy`` models.
    oracle_critic: bool = False
    #: With ``oracle_critic``: the first this many PPO updates move only the critic, so the
    #: value fits the hidden cards before the policy follows its advantages.
    critic_warmup: int = Field(default=0, ge=0)
    #: ``card`` policy started from a warm start: divide its action logits by this once, when
    #: PPO starts (the heads' weights, so checkpoints carry it). The argmax, how every
    #: evaluation and ``make_agent`` play, stays the clone's; above 1 the policy PPO samples
    #: is softer, below 1 closer to that argmax play. The pool's ``start`` stays the clone as
    #: cloned. 1: unchanged.
    init_temperature: float = Field(default=1.0, gt=0, le=100)

    @model_validator(mode="after")
    def _softening_needs_card_heads(self) -> PPOConfig:
        if self.init_temperature != 1 and self.policy != "card":
            raise ValueError(
                f"init_temperature={self.init_temperature:g} scales the card policy's logit "
                f"heads, which needs policy: card, not {self.policy!r}"
            )
        return self

    @model_validator(mode="after")
    def _oracle_is_a_card_critic(self) -> PPOConfig:
        if self.oracle_critic and self.policy != "card":
            raise ValueError(
                f"oracle_critic needs policy: card (agents.oracle_policy), not {self.policy!r}"
            )
        if self.critic_warmup and not self.oracle_critic:
            raise ValueError(
                f"critic_warmup={self.critic_warmup} freezes the actor apart from its critic, "
                "which needs oracle_critic: true"
            )
        return self

    @field_validator("net_arch")
    @classmethod
    def _positive_widths(cls, widths: list[int]) -> list[int]:
        if any(w < 1 for w in widths):
            raise ValueError("every layer width must be at least 1")
        return widths


class SelfPlayConfig(Section):
    """The opponent pool: baselines and frozen snapshots of the learner."""

    #: Freeze a copy of the learner into the pool every this many PPO updates.
    snapshot_every: int = Field(default=10, ge=1)
    #: Keep at most this many snapshots (the oldest is dropped first).
    max_snapshots: int = Field(default=8, ge=1)
    #: The environments are split into this many equal groups; before every rollout each group
    #: draws its opponent from the pool, so one rollout mixes opponents as configured.
    groups: int = Field(default=8, ge=1)
    #: Probability of each pool member: ``random``, ``greedy``, ``heuristic``, ``ismcts`` (the
    #: baselines; the search player for a warm start's decisions against it, too slow for
    #: PPO), ``rollin`` (another copy of ``warm_start.rollin``: DAgger against itself),
    #: ``snapshot`` (a uniformly chosen frozen snapshot), ``latest`` (the newest snapshot) and
    #: ``start`` (the run's starting point, its clone, frozen before the first update and kept
    #: all run: what PPO has to beat head to head). Until the first snapshot exists, the
    #: snapshot share goes to the baselines.
    opponents: dict[str, float] = Field(default_factory=lambda: {"random": 0.5, "greedy": 0.5})
    #: ``start``: each deal's reward is the learner's points minus those of a shadow game of
    #: the same deck, the run's start (its clone, frozen) in the learner's seats against the
    #: same opponent (``training.deal_baseline``): a baseline that cancels the deal's luck.
    #: ``null``: the points alone. Training statistics stay the learner's own points.
    baseline: Literal["start"] | None = None
    #: How the baseline's start plays: ``argmax`` (its most likely move) or ``sample``.
    baseline_play: Literal["argmax", "sample"] = "argmax"

    @field_validator("opponents")
    @classmethod
    def _probabilities(cls, probs: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(probs) - set(POOL_MEMBERS))
        if unknown:
            raise ValueError(f"unknown opponent(s) {unknown}; choose from {list(POOL_MEMBERS)}")
        if any(p < 0 for p in probs.values()):
            raise ValueError("probabilities must be non-negative")
        total = sum(probs.values())
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"probabilities must sum to 1, they sum to {total:g}")
        if not any(
            p > 0 for name, p in probs.items() if name not in ("snapshot", "latest", "start")
        ):
            raise ValueError(
                "random, greedy or heuristic needs a positive probability (before any snapshot)"
            )
        return probs


#: The teachers that value every legal move (``training.warm_start.with_values``).
SEARCH_TEACHERS = ("ismcts", "alphabeta", "alphabeta_value", "rollout")


class WarmStartConfig(Section):
    """Behaviour cloning of a rule-based teacher before PPO (see ``training.warm_start``)."""

    #: ``greedy``, ``heuristic``, or a search that values every move it plays, ``ismcts``,
    #: ``alphabeta``, ``alphabeta_value`` or ``rollout`` (a network's play improved by
    #: rollouts: with ``finetune_from`` that network, a step of expert iteration); ``null``
    #: starts PPO from a random network.
    teacher: (
        Literal["greedy", "heuristic", "ismcts", "alphabeta", "alphabeta_value", "rollout"] | None
    ) = None
    #: The teacher's own options (its constructor's keywords), e.g. ``{iterations: 150}``.
    teacher_options: dict[str, int | float | bool | str] = Field(default_factory=dict)
    #: Teacher decisions to clone (played against the pool's baselines).
    samples: int = Field(default=200_000, ge=1)
    #: ``null``: play them in the training environment. A number: play them in that many
    #: processes, in tasks of ``task_samples`` saved to the run folder as they finish, so a slow
    #: teacher (the search player) uses every core and an interrupted collection resumes.
    workers: int | None = Field(default=None, ge=1)
    task_samples: int = Field(default=5_000, ge=1)
    #: With ``workers``: ``null`` runs the tasks in local processes; ``local`` starts Ray on
    #: this machine; an address (``auto``, ``HOST:PORT``) runs them on that Ray cluster
    #: (``evaluation.ray_backend``). The decisions are the same wherever they ran.
    ray: str | None = Field(default=None, min_length=1)
    epochs: int = Field(default=5, ge=1)
    batch_size: int = Field(default=1024, ge=1)
    learning_rate: float = Field(default=1e-3, gt=0, le=1)
    #: ``null``: fit the actor to the teacher's moves. A number (points per deal), with a
    #: search teacher: fit it to a softmax of the search's values of its moves at this
    #: temperature, so near-ties between moves are learnt as such.
    temperature: float | None = Field(default=None, gt=0)
    #: With a search teacher: add this many times the actor's expected regret (the points
    #: per deal its choice gives up, by the search's values) to the loss, so each decision
    #: counts by its stakes.
    regret_weight: float = Field(default=0.0, ge=0)
    #: A saved model (``clone.zip`` of an earlier run with the same ``ppo`` network, or
    #: ``pretrained_v5``, the shipped policy network) whose weights PPO starts from instead of
    #: cloning the teacher again, so a recipe's PPO phase can be tried without paying for the
    #: teacher's decisions; ``teacher`` then only names what that clone was taught by (for the
    #: report), and nothing is collected.
    init_from: str | None = Field(default=None, min_length=1)
    #: A saved model (``pretrained_v5``: the shipped policy network, or a path such as a
    #: run's ``clone.zip``, with the same ``ppo`` network) whose weights the cloning starts from
    #: instead of fresh ones: the teacher's decisions fine-tune it.
    finetune_from: str | None = Field(default=None, min_length=1)
    #: ``null``: the teacher plays the decisions it is cloned on. A player (a name ``scopa
    #: eval`` takes, such as ``pretrained``, or a saved model's path): that player plays the
    #: seat, and at each of its decisions the teacher's move and values are recorded, so the
    #: learner is taught on the positions its own play reaches (DAgger). With
    #: ``finetune_from``, the same network here makes a round of DAgger.
    rollin: str | None = Field(default=None, min_length=1)
    #: The roll-in player's own options (its constructor's keywords).
    rollin_options: dict[str, int | float | bool | str] = Field(default_factory=dict)
    #: With ``ppo.oracle_critic``: the starting point (the clone) then plays this many
    #: decisions against the pool, sampling its moves, and the critic alone is fitted to
    #: their returns for ``critic_epochs`` (batches of ``batch_size`` at ``learning_rate``),
    #: so PPO's first advantages come from a value that already reads the hidden cards.
    critic_samples: int = Field(default=0, ge=0)
    critic_epochs: int = Field(default=10, ge=1)

    @field_validator("init_from", "finetune_from")
    @classmethod
    def _a_saved_model(cls, path: str | None) -> str | None:
        from agents.policy import SHIPPED_CHECKPOINTS, checkpoint_path

        if path is not None and not checkpoint_path(path).is_file():
            raise ValueError(
                f"no file {path}: give a shipped network ({', '.join(SHIPPED_CHECKPOINTS)}) or "
                "the path of a saved model such as a run's clone.zip"
            )
        return path

    @model_validator(mode="after")
    def _finetune_needs_a_teacher(self) -> WarmStartConfig:
        if self.finetune_from is None:
            return self
        if self.init_from is not None:
            raise ValueError(
                "finetune_from (clone the teacher into a saved model) and init_from (start PPO "
                "from a saved model, no cloning) exclude each other: give one"
            )
        if self.teacher is None:
            raise ValueError(
                "finetune_from fine-tunes a saved model on a teacher's decisions: "
                "set warm_start.teacher"
            )
        return self

    @model_validator(mode="after")
    def _search_values_need_a_search(self) -> WarmStartConfig:
        for key, value in (
            ("temperature", self.temperature),
            ("regret_weight", self.regret_weight),
        ):
            if value and self.teacher not in SEARCH_TEACHERS:
                raise ValueError(
                    f"{key} needs a teacher that values its moves ({', '.join(SEARCH_TEACHERS)}); "
                    f"the teacher is {self.teacher!r}"
                )
        return self

    @model_validator(mode="after")
    def _rollin_is_a_player(self) -> WarmStartConfig:
        if self.rollin is None:
            if self.rollin_options:
                raise ValueError("rollin_options are given but there is no rollin player")
            return self
        if self.teacher is None or self.init_from is not None:
            raise ValueError(
                f"rollin={self.rollin!r} plays while a teacher is recorded: set warm_start.teacher "
                "(and no init_from, which collects nothing)"
            )
        from agents import AGENTS, check_options
        from agents.policy import SHIPPED_CHECKPOINTS, PolicyAgent, checkpoint_path
        from scopa_env.errors import PlayerError

        if self.rollin in AGENTS:
            factory = AGENTS[self.rollin]
        elif checkpoint_path(self.rollin).is_file():
            factory = PolicyAgent
        else:
            raise ValueError(
                f"rollin={self.rollin!r} is neither a player ({', '.join(sorted(AGENTS))}, "
                f"{', '.join(SHIPPED_CHECKPOINTS)}) nor a saved model's path"
            )
        for key in ("rules", "seed"):
            if key in self.rollin_options:
                raise ValueError(f"rollin_options: {key} comes from the run's config")
        try:
            check_options(factory, self.rollin, dict(self.rollin_options))
        except PlayerError as error:
            raise ValueError(f"rollin_options: {error}") from None
        return self

    @model_validator(mode="after")
    def _ray_runs_the_tasks(self) -> WarmStartConfig:
        if self.ray is not None and self.workers is None:
            raise ValueError(
                f"ray={self.ray!r} runs the warm start's tasks: set workers (the tasks' "
                "parallelism on a local Ray, any number on a cluster)"
            )
        return self

    @model_validator(mode="after")
    def _teacher_takes_options(self) -> WarmStartConfig:
        if not self.teacher_options:
            return self
        if self.teacher is None:
            raise ValueError("teacher_options are given but there is no teacher")
        import inspect

        from agents import AGENTS

        accepted = set(inspect.signature(AGENTS[self.teacher]).parameters) - {"rules", "seed"}
        unknown = sorted(set(self.teacher_options) - accepted)
        if unknown:
            raise ValueError(
                f"teacher {self.teacher!r} has no option(s) {unknown}; it takes {sorted(accepted)}"
            )
        return self


class EvalConfig(Section):
    """Periodic and final evaluation through the duplicate-deal harness."""

    #: Evaluate (and maybe keep as best) every this many PPO updates; 0 turns it off.
    every: int = Field(default=20, ge=0)
    #: Duplicate deals per opponent in a periodic evaluation (each deck is played twice).
    deals: int = Field(default=200, ge=1)
    #: Duplicate deals per opponent in the final evaluation; 0 skips it.
    final_deals: int = Field(default=1000, ge=0)
    #: Duplicate matches (to the rules' target) per opponent in the final evaluation.
    final_matches: int = Field(default=0, ge=0)
    opponents: list[str] = Field(
        default_factory=lambda: ["random", "greedy", "heuristic"], min_length=1
    )
    #: Opponents of the final evaluation; ``null`` means the same as ``opponents``.
    final_opponents: list[str] | None = None
    #: The opponent whose points per deal decides the best checkpoint.
    best_against: str = "greedy"
    #: Processes for the final evaluation (periodic ones play in this process).
    workers: int = Field(default=1, ge=1)
    #: The checkpoint the final evaluation (and ``export_to``) uses: the last or the best.
    final_checkpoint: Literal["final", "best"] = "final"
    #: Seed of the evaluation decks (fixed, so every evaluation plays the same deals).
    seed: int = Field(default=12345, ge=0)

    @field_validator("opponents", "final_opponents")
    @classmethod
    def _known_opponents(cls, names: list[str] | None) -> list[str] | None:
        if names is None:
            return None
        if not names:
            raise ValueError("name at least one opponent")
        unknown = sorted(set(names) - set(EVAL_OPPONENTS))
        if unknown:
            raise ValueError(f"unknown opponent(s) {unknown}; choose from {list(EVAL_OPPONENTS)}")
        return names

    @model_validator(mode="after")
    def _best_is_evaluated(self) -> EvalConfig:
        if self.best_against not in self.opponents:
            raise ValueError(f"best_against={self.best_against!r} is not in opponents")
        return self


class TrainConfig(Section):
    """One training run: environment, algorithm, self-play, evaluation and bookkeeping."""

    name: str = Field(default="run", min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    seed: int = Field(default=0, ge=0)
    #: Run folder; ``null`` means ``runs/NAME-TIMESTAMP``.
    run_dir: str | None = None
    #: A rules preset name (``napola``) or a mapping of rule options, which may name the preset
    #: it changes (``{preset: napola, target: 21}``); see ``scopa_env.rules.resolve_rules``.
    rules: str | dict[str, Any] = "scopa"
    #: The table (``scopa_env.tables``): ``scopa`` (two players), ``scopa_3`` (three for
    #: themselves), ``scopa_4``, ``scopa_6``, ``scopone``, ``scopone_scientifico``
    #: (partnerships). The learner holds one seat, or every seat of its side, and the pool's
    #: opponents every other seat (``training.selfplay``).
    table: str = "scopa"
    #: ``deal``: an episode is one deal; ``match``: a match to the target.
    episode: Literal["deal", "match"] = "deal"
    #: ``points``: each deal's point difference; ``match``: +1/-1 when the match ends.
    reward: Literal["points", "match"] = "points"
    #: Weight of potential-based shaping by capture-pile material (0: off). It sums to zero
    #: over each episode, so it changes no optimal policy; it speeds up early learning.
    shaping: float = Field(default=0.0, ge=0)
    total_timesteps: int = Field(default=1_000_000, ge=1)
    n_envs: int = Field(default=256, ge=1)
    #: Torch intra-op threads; pinned so runs are reproducible and share the CPU politely.
    torch_threads: int = Field(default=1, ge=1)
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    #: Save a resumable checkpoint every this many PPO updates.
    checkpoint_every: int = Field(default=10, ge=1)
    #: Ship the evaluated checkpoint to this folder: ``model.zip``, ``model.json`` (config,
    #: seed, steps, wall time, evaluation), ``README.md`` (the run report), the curve. A
    #: relative path is inside the repository (``agents/pretrained_v5`` is the shipped
    #: policy network), wherever the command runs.
    export_to: str | None = None
    #: Replace an agent already in ``export_to``; without it a run that would overwrite one
    #: (the shipped agent above all) is refused before it starts.
    export_overwrite: bool = False
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    warm_start: WarmStartConfig = Field(default_factory=WarmStartConfig)
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)

    @field_validator("rules")
    @classmethod
    def _valid_rules(cls, rules: str | dict[str, Any]) -> str | dict[str, Any]:
        resolve_rules(rules)  # raises ValueError with the rules' own message
        return rules

    @field_validator("table")
    @classmethod
    def _known_table(cls, table: str) -> str:
        resolve_table(table)  # raises TableError (a ValueError) naming the tables
        return table

    @model_validator(mode="after")
    def _critic_fit_and_softening_need_a_start(self) -> TrainConfig:
        ws = self.warm_start
        if ws.critic_samples and not self.ppo.oracle_critic:
            raise ValueError(
                "warm_start.critic_samples fits the critic alone, which needs ppo.oracle_critic"
            )
        if self.ppo.init_temperature != 1 and ws.teacher is None and ws.init_from is None:
            raise ValueError(
                f"ppo.init_temperature={self.ppo.init_temperature:g} softens the warm start's "
                "clone, but warm_start.teacher and warm_start.init_from are null"
            )
        if ws.critic_samples and ws.teacher is None and ws.init_from is None:
            raise ValueError(
                "warm_start.critic_samples fits the critic to the starting point's play, but "
                "warm_start.teacher and warm_start.init_from are null"
            )
        return self

    @model_validator(mode="after")
    def _deal_baseline_has_a_deal_and_a_start(self) -> TrainConfig:
        if self.selfplay.baseline is None:
            return self
        ws = self.warm_start
        if self.episode != "deal":
            raise ValueError(
                f"selfplay.baseline={self.selfplay.baseline!r} replays each deal's deck, which "
                f"needs episode: deal (episode is {self.episode!r})"
            )
        if ws.teacher is None and ws.init_from is None:
            raise ValueError(
                f"selfplay.baseline={self.selfplay.baseline!r} plays the run's start, but "
                "warm_start.teacher and warm_start.init_from are null"
            )
        if ws.critic_samples:
            raise ValueError(
                "warm_start.critic_samples fits the critic to returns without the deal "
                "baseline, which selfplay.baseline then changes: set one of them off"
            )
        return self

    @model_validator(mode="after")
    def _shaping_reads_two_players(self) -> TrainConfig:
        if self.shaping and self.table != "scopa":
            raise ValueError(
                f"shaping reads the two-player observation; set shaping=0 at table {self.table!r}"
            )
        return self

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        rollout = self.ppo.n_steps * self.n_envs
        if self.ppo.batch_size > rollout:
            raise ValueError(
                f"ppo.batch_size={self.ppo.batch_size} exceeds the rollout size "
                f"ppo.n_steps * n_envs = {rollout}"
            )
        named = set(self.eval.opponents) | set(self.eval.final_opponents or ())
        if "clone" in named and self.warm_start.teacher is None and not self.warm_start.init_from:
            raise ValueError(
                "eval opponent 'clone' is the run's warm start, but warm_start.teacher and "
                "warm_start.init_from are null"
            )
        if self.n_envs % self.selfplay.groups:
            raise ValueError(
                f"n_envs={self.n_envs} must be a multiple of selfplay.groups={self.selfplay.groups}"
            )
        if self.selfplay.opponents.get("rollin") is not None and self.warm_start.rollin is None:
            raise ValueError(
                "selfplay.opponents names 'rollin', the warm start's roll-in player, but "
                "warm_start.rollin is null"
            )
        return self

    @property
    def rollout_size(self) -> int:
        return self.ppo.n_steps * self.n_envs

    @property
    def total_updates(self) -> int:
        """PPO updates in the run (SB3 finishes the rollout that crosses total_timesteps)."""
        return -(-self.total_timesteps // self.rollout_size)

    def resolved_rules(self) -> Rules:
        return resolve_rules(self.rules)

    def resolved_table(self) -> Table:
        return resolve_table(self.table)

    def export_dir(self) -> Path | None:
        """``export_to`` as a folder: an absolute path as it is, else inside the repository."""
        if self.export_to is None:
            return None
        return REPOSITORY / self.export_to

    def check_export(self) -> None:
        """Refuse to overwrite an exported agent unless ``export_overwrite`` says so."""
        dest = self.export_dir()
        if dest is not None and (dest / "model.zip").exists() and not self.export_overwrite:
            raise ConfigError(
                f"export_to={self.export_to!r} ({dest}) already holds an agent (model.zip); "
                "set export_overwrite=true to replace it on purpose, or export elsewhere"
            )


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["ppo.n_epochs=2", "name=x"]`` -> nested dict; values are parsed as YAML scalars."""
    tree: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} is not of the form key=value")
        node = tree
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override")
        try:
            node[parts[-1]] = _yaml(raw) if raw else ""
        except yaml.YAMLError as error:
            problem = getattr(error, "problem", None) or "not a YAML value"
            raise ConfigError(
                f"override {item!r}: {raw!r} is not a YAML value ({problem}); quote a string, "
                "write a list as [1, 2]"
            ) from None
    return tree


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if key == "rules":
            merged[key] = _merge_rules(merged.get(key), value)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _merge_rules(base: Any, update: Any) -> Any:
    """A preset name replaces the config's rules; options change them.

    ``rules.target=21`` (or ``rules={target: 21}``) on ``rules: napola`` gives
    ``{preset: napola, target: 21}``: napola played to 21, not the default game to 21.
    """
    if not isinstance(update, dict):
        return update
    if isinstance(base, str):
        base = {"preset": base}
    return {**base, **update} if isinstance(base, dict) else update


def _format_errors(error: ValidationError, source: str) -> str:
    lines = [f"invalid config {source}:"]
    for err in error.errors():
        key = ".".join(str(part) for part in err["loc"]) or "config"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        lines.append(f"  {key}: {message}")
    return "\n".join(lines)


def validate(data: dict[str, Any], source: str = "") -> TrainConfig:
    """A ``TrainConfig`` from a plain mapping, or ``ConfigError`` naming every bad key."""
    return validate_model(TrainConfig, data, source)


def validate_model(model: type[M], data: dict[str, Any], source: str = "") -> M:
    """``validate`` for any config model of the project (``training.deal_value``'s too)."""
    if not isinstance(data, dict):
        raise ConfigError(f"invalid config {source}: the top level must be a mapping")
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as error:
        raise ConfigError(_format_errors(error, source)) from None


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """Read a YAML config (or the defaults when ``path`` is None) and apply overrides."""
    return load_model(TrainConfig, path, overrides)


def load_model(model: type[M], path: str | Path | None, overrides: list[str] | None = None) -> M:
    """``load_config`` for any config model of the project."""
    data: dict[str, Any] = {}
    source = "(defaults)"
    if path is not None:
        source = str(path)
        try:
            loaded = _yaml(Path(path).read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist") from None
        except yaml.YAMLError as error:
            raise ConfigError(f"config file {path} is not valid YAML: {error}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"invalid config {path}: the top level must be a mapping")
        data = loaded or {}
    if overrides:
        data = _merge(data, parse_overrides(overrides))
        source += " with overrides"
    return validate_model(model, data, source)


#: What a run's checkpoints fix: the network's shape and the game it learnt.
FIXED_ON_RESUME = (
    "rules",
    "table",
    "ppo.policy",
    "ppo.card_width",
    "ppo.global_width",
    "ppo.card_lookahead",
    "ppo.oracle_critic",
    "ppo.net_arch",
    "ppo.activation",
    "ppo.init_temperature",
    "selfplay.baseline",  # the reward the critic learnt, and a start the pool must hold
)


#: What a run's saved warm-start tasks were played with. A resume that plays the missing
#: tasks (no checkpoint yet) plays them with the same, or the decisions of two setups would mix.
FIXED_BY_TASKS = (
    "seed",
    "episode",
    "reward",
    "shaping",
    "ppo.gamma",
    "warm_start.teacher",
    "warm_start.teacher_options",
    "warm_start.rollin",
    "warm_start.rollin_options",
    "warm_start.task_samples",
    "selfplay.opponents",
    "selfplay.groups",
    "selfplay.max_snapshots",
    "selfplay.baseline_play",
)


def check_resume(saved: TrainConfig, config: TrainConfig, tasks_saved: bool = False) -> None:
    """Refuse to resume a run with a config that contradicts what its checkpoints hold.

    The network's shape (its weights would not fit) and the rules (the variant would change
    mid-run) stay as the run's ``config.yaml`` has them, and so does what played the saved
    warm-start tasks while they are still to be read (``tasks_saved``); anything else, such
    as a longer ``total_timesteps``, more warm-start samples or another evaluation, may change.
    """
    changed = []
    for key in FIXED_ON_RESUME + (FIXED_BY_TASKS if tasks_saved else ()):
        if key == "rules":
            old, new = saved.resolved_rules(), config.resolved_rules()
            shown = (describe_rules(old), describe_rules(new))
        elif "." not in key:
            old, new = getattr(saved, key), getattr(config, key)
            shown = (repr(old), repr(new))
        else:
            section, name = key.split(".")
            old, new = (
                getattr(getattr(saved, section), name),
                getattr(getattr(config, section), name),
            )
            shown = (repr(old), repr(new))
        if old != new:
            changed.append(f"{key} is {shown[0]} in the run, {shown[1]} asked")
    if changed:
        raise ConfigError(
            "cannot resume with a change the checkpoints or saved tasks do not allow: "
            + "; ".join(changed)
            + ". Start a new run for it (scopa train --config ...)"
        )


def dump_config(config: TrainConfig) -> str:
    """The config as YAML, every field spelled out, so a run folder documents itself."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)


def is_rllib_config(path: Path) -> bool:
    """Whether the YAML at ``path`` asks for RLlib (``engine: rllib``, ``training.rllib_train``)."""
    data = _yaml(Path(path).read_text())
    return isinstance(data, dict) and data.get("engine") == "rllib"
