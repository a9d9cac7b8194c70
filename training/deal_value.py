"""Train ``agents.deal_value.DealValue`` on a player's self-play (the shipped policy network by
default), from a config.

Read top to bottom: ``train_deal_value`` (self-play, fit, save), then the pieces it uses.

    scopa value --config configs/deal_value.yaml --out runs/value   # a new network
    scopa value --config configs/deal_value.yaml --out agents/pretrained_value --overwrite

1. **Self-play.** ``deals`` fresh two-player deals are played by the network for both seats
   (its most likely card, every deal of a chunk batched into one forward pass a ply), by
   ``seat_network``, a seat-value network (the move whose afterstate it values most, batched
   the same way), or by ``player``, a rule player such as ``alphabeta``, each seat deciding
   from its own observation as it would in the environment: as ``rollout`` plays its
   rollouts (``agents.rollout``). They are spread
   over ``workers`` processes in chunks of ``chunk`` deals, each chunk seeded from ``seed``
   and its index, so the data does not depend on the number of workers. Each position with
   cards left in the stock is recorded (``agents.deal_value.position``). Once the stock is
   empty the deal is solved exactly (``agents.alphabeta.AlphaBeta``), as the searches solve
   the last round; every recorded position's target is the deal's final point difference
   for its seat to move. With ``siblings``, one position of each deal, drawn uniformly among
   those whose moves leave cards in the stock, is also branched: every legal move is played in
   a copy and each copy played on to the end by the same player, with the same stock. The
   siblings' outcomes then differ by their moves and what follows, not by the cards still to
   come, which is what a search asks of its judge: which of two close positions is better.
2. **Fit.** A two-layer ReLU network of ``width`` minimises the squared error with Adam and
   a one-cycle learning rate, holding out every ``holdout_every``-th deal to report R^2 on
   positions of deals it never saw. With ``siblings``, each step adds that weight times the
   squared error of a batch of sibling groups' values about their group's mean, against their
   outcomes about theirs (the report's sibling R^2 is measured the same way).
3. **Save.** ``deal_value.npz`` (the weights, written atomically), ``config.yaml`` and
   ``report.md`` (rows, R^2, times) in the output folder.

Nothing is lost to a stop. While it runs, ``progress/`` in the output folder keeps every
finished chunk of self-play and the fit after each epoch (model, optimizer, schedule and
torch's random state), each written atomically. Run the same command again and it reads them
back and carries on: the weights are the same, bit for bit, as an uninterrupted run's. Only
``workers`` may differ between the two commands; another config is refused, naming what
differs. ``progress/`` is removed once the weights are saved.
"""

from __future__ import annotations

import shutil
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from pydantic import Field, field_validator, model_validator

from agents.base import RuleAgent, reset_agent
from agents.deal_value import POSITION_FIELDS, DealValue, position
from agents.policy import SHIPPED_POLICY
from evaluation.players import PlayerSpec
from evaluation.progress import progress_bar
from evaluation.records import atomic_path, folder_lock, library_versions, write_text
from evaluation.workers import WorkerPool
from scopa_env.errors import ScopaError
from scopa_env.rules import Rules
from training.checkpoints import identity_differences
from training.config import ConfigError, Section

if TYPE_CHECKING:
    import torch

    from agents.alphabeta import AlphaBeta
    from scopa_env.engine import Deal, MaskMove

#: The output folder's weights (``agents.deal_value.SHIPPED`` is this file in the shipped one).
WEIGHTS = "deal_value.npz"
#: Training positions the report's training R^2 is measured on (the first ones).
R2_ROWS = 500_000
#: The output folder's record of a run in progress (removed when the run finishes).
PROGRESS = "progress"
#: Config keys an interrupted run may be continued with other values of.
FREE_ON_RESUME = frozenset({"workers"})


class DealValueConfig(Section):
    """What ``train_deal_value`` plays and fits (``configs/deal_value.yaml``)."""

    #: The network that plays both seats: a shipped policy network (``pretrained_v5``,
    #: ``pretrained_v4``) or a MaskablePPO checkpoint's path.
    network: str = Field(default=SHIPPED_POLICY)
    #: A rule player that plays both seats instead, as ``scopa eval`` names players
    #: (``alphabeta``, ``alphabeta:samples=16``); ``null``: the network. One instance plays
    #: the deals of a chunk in turn, so a player that follows the deal (``infer=True``) sees
    #: no consecutive observations and infers nothing.
    player: str | None = Field(default=None)
    #: A seat-value network that plays both seats instead of ``network``
    #: (``agents.seat_value``): a path, or a shipped one's name (``single``, ``ensemble``).
    seat_network: str | None = Field(default=None)
    #: The share of decisions where the seat to move plays a uniformly random legal move
    #: instead of the player's, so that the fit sees positions after moves the player itself
    #: seldom makes, as a search's leaves are (0: none).
    explore: float = Field(default=0.0, ge=0.0, lt=1.0)
    #: The weight of the sibling groups' differences in the fit (0: no siblings are played).
    siblings: float = Field(default=0.0, ge=0.0)
    #: Orders of the stock each sibling is played on with, its target their mean outcome: the
    #: deal's own, then shuffles of the same cards (one a group, for all its siblings alike).
    sibling_stocks: int = Field(default=1, ge=1)
    deals: int = Field(default=300_000, ge=1)
    #: Deals played together (one forward pass a ply) and seeded together.
    chunk: int = Field(default=500, ge=1)
    workers: int = Field(default=2, ge=1)
    seed: int = Field(default=0, ge=0)
    width: int = Field(default=256, ge=1)
    epochs: int = Field(default=3, ge=1)
    #: Fit a blind network, which reads the other seat's hand as empty (``agents.deal_value``):
    #: the value of a position from its mover's view, on the same self-play.
    blind: bool = Field(default=False)
    #: Fit a network that reads ``agents.deal_value.scoring_features`` too.
    scoring: bool = Field(default=False)
    batch_size: int = Field(default=2048, ge=1)
    #: The one-cycle schedule's peak learning rate.
    learning_rate: float = Field(default=2e-3, gt=0)
    #: Every this-th deal is held out of the fit, to measure it.
    holdout_every: int = Field(default=20, ge=2)
    torch_threads: int = Field(default=2, ge=1)

    @field_validator("player")
    @classmethod
    def _rule_player(cls, spec: str | None) -> str | None:
        if spec is not None:
            rule_player(spec)
        return spec

    @field_validator("seat_network")
    @classmethod
    def _seat_network_file(cls, network: str | None) -> str | None:
        from agents.seat_value import seat_network_path

        if network is not None and not seat_network_path(network).is_file():
            raise ValueError(f"no seat-value network at {seat_network_path(network)}")
        return network

    @model_validator(mode="after")
    def _one_player(self) -> DealValueConfig:
        if self.player is not None and self.seat_network is not None:
            raise ValueError(
                f"player {self.player!r} and seat_network {self.seat_network!r} both name who "
                "plays the deals: give one"
            )
        return self


def rule_player(spec: str) -> RuleAgent:
    """The two-player rule player a spec names (``name[:key=value,...]``); ``ValueError``
    naming the problem for an unknown player, a bad option or a player that is not a rule
    player (a network plays through ``network``)."""
    try:
        player = PlayerSpec.parse(spec).build(Rules())
    except (ScopaError, TypeError) as error:
        raise ValueError(f"player {spec!r}: {error}") from None
    if not isinstance(player, RuleAgent):
        raise ValueError(
            f"player {spec!r} is not a rule player (random, greedy, heuristic, ismcts, "
            "alphabeta, ...); a network plays through the network key"
        )
    return player


@dataclass(frozen=True)
class SelfPlay:
    """Positions (``(N, POSITION_FIELDS)`` rows), their targets in points for the seat to
    move, and the index of the deal each came from; then the sibling positions (the same
    three, ``sibling_deals`` naming each group by its deal), none without ``siblings``."""

    rows: np.ndarray
    targets: np.ndarray
    deals: np.ndarray
    sibling_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, POSITION_FIELDS), int))
    sibling_targets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    sibling_deals: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def arrays(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def train_deal_value(
    config: DealValueConfig, out: Path, show_progress: bool = False
) -> dict[str, Any]:
    """Self-play, fit and save into ``out``, carrying on from ``out/progress`` if a run of
    the same config was stopped there (with ``show_progress``, a bar for each on stderr);
    returns what ``report.md`` records."""
    with folder_lock(out):
        progress = Progress(out / PROGRESS, config)
        started = time.perf_counter()
        data = self_play(config, progress, show_progress)
        played = time.perf_counter()
        network, fit = fit_value(data, config, progress, show_progress)
        finished = time.perf_counter()
        save_network(network, out / WEIGHTS)
        summary = {
            "positions": len(data.rows),
            **({"sibling_positions": len(data.sibling_rows)} if config.siblings else {}),
            "deals": config.deals,
            **fit,
            "self_play_s": round(played - started, 1),
            "fit_s": round(finished - played, 1),
            "read_back": progress.read_back(),
            "versions": library_versions(),
        }
        write_text(out / "config.yaml", yaml.safe_dump(config.model_dump(mode="json")))
        write_text(out / "report.md", _report(summary))
        progress.finish()
        return summary


def save_network(network: DealValue, path: Path) -> None:
    """Write ``network`` to ``path`` (``.npz``, float32), whole or not at all."""
    arrays: dict[str, Any] = {k: v.astype(np.float32) for k, v in network.arrays.items()}
    with atomic_path(path) as tmp:
        np.savez(tmp, **arrays)


def r_squared(network: DealValue, rows: np.ndarray, targets: np.ndarray) -> float:
    """The share of the variance of ``targets`` that ``network``'s values of ``rows`` explain
    (NaN for targets that do not vary)."""
    spread = float(np.var(targets)) if len(targets) else 0.0
    if spread == 0:
        return float("nan")
    parts = [network.values(rows[k : k + 65536]) for k in range(0, len(rows), 65536)]
    error = float(np.mean((np.concatenate(parts) - targets) ** 2))
    return round(1.0 - error / spread, 4)


class Progress:
    """What a run has finished, kept in ``folder``: self-play chunks and the fit's epochs.

    A ``folder`` left by a run of another config is refused (``ConfigError`` naming the keys);
    one left by the same config is read back. A file that cannot be read is done again.
    """

    def __init__(self, folder: Path, config: DealValueConfig) -> None:
        self.folder = folder
        self.config = config
        fixed = {k: v for k, v in config.model_dump(mode="json").items() if k not in FREE_ON_RESUME}
        identity = folder / "config.yaml"
        if identity.is_file():
            # A key added since the stopped run wrote its identity had its default there.
            defaults = type(config)().model_dump(mode="json")
            found = {k: defaults.get(k) for k in fixed} | (
                yaml.safe_load(identity.read_text()) or {}
            )
            shown = identity_differences(found, fixed)
            if shown:
                raise ConfigError(
                    f"{folder} holds a stopped run of another config ({shown}); run it with "
                    "the same config, or delete the folder to start over"
                )
        else:
            folder.mkdir(parents=True, exist_ok=True)
            write_text(identity, yaml.safe_dump(fixed))
        self.resumed = {"chunks": 0, "epochs": 0}

    def chunk_path(self, index: int) -> Path:
        return self.folder / f"chunk_{index:05d}.npz"

    def load_chunk(self, index: int) -> SelfPlay | None:
        """Chunk ``index`` of self-play if a run finished it, else ``None``."""
        path = self.chunk_path(index)
        if not path.is_file():
            return None
        try:
            with np.load(path) as saved:
                part = SelfPlay(**{name: saved[name] for name in saved.files})
        except (OSError, ValueError, KeyError, TypeError) as error:
            warnings.warn(f"{path} cannot be read ({error}); playing it again", stacklevel=2)
            return None
        self.resumed["chunks"] += 1
        return part

    def save_chunk(self, index: int, part: SelfPlay) -> None:
        with atomic_path(self.chunk_path(index)) as tmp:
            np.savez_compressed(tmp, **part.arrays())

    def load_fit(self) -> dict[str, Any] | None:
        """The fit as its last finished epoch left it, if any."""
        import torch

        path = self.folder / "fit.pt"
        if not path.is_file():
            return None
        try:
            state: dict[str, Any] = torch.load(path, weights_only=False)
        except Exception as error:  # noqa: BLE001 - torch raises many kinds for a bad file
            warnings.warn(f"{path} cannot be read ({error}); fitting again", stacklevel=2)
            return None
        self.resumed["epochs"] = state["epoch"] + 1
        return state

    def save_fit(self, state: dict[str, Any]) -> None:
        import torch

        with atomic_path(self.folder / "fit.pt") as tmp:
            torch.save(state, tmp)

    def read_back(self) -> str:
        """What this run took from a stopped one, for the report."""
        chunks = -(-self.config.deals // self.config.chunk)
        return (
            f"{self.resumed['chunks']} of {chunks} chunks, "
            f"{self.resumed['epochs']} of {self.config.epochs} epochs"
        )

    def finish(self) -> None:
        shutil.rmtree(self.folder)


def self_play(
    config: DealValueConfig, progress: Progress | None = None, show_progress: bool = False
) -> SelfPlay:
    """Every chunk of ``config.deals`` played by the network (or ``config.player``, or
    ``config.seat_network``), over
    ``config.workers``; with ``progress``, chunks it holds are read back and each new one is
    saved as it finishes."""
    chunks = [
        (
            config.network,
            index,
            min(config.chunk, config.deals - start),
            config.seed,
            config.player,
            config.seat_network,
            config.explore,
            config.sibling_stocks if config.siblings > 0 else 0,
        )
        for index, start in enumerate(range(0, config.deals, config.chunk))
    ]
    parts: dict[int, SelfPlay] = {}
    if progress is not None:
        for task in chunks:
            part = progress.load_chunk(task[1])
            if part is not None:
                parts[task[1]] = part
    todo = [task for task in chunks if task[1] not in parts]
    played = config.deals - sum(task[2] for task in todo)
    bar = progress_bar(config.deals, "deal", show_progress, "self-play", played)

    def finished(task: tuple[Any, ...], part: SelfPlay) -> None:
        parts[task[1]] = part
        if progress is not None:
            progress.save_chunk(task[1], part)
        bar.update(task[2])

    with bar:
        if config.workers == 1 or len(todo) <= 1:
            for task in todo:
                finished(task, _play_chunk(task))
        else:
            with WorkerPool(min(config.workers, len(todo))) as pool:
                for task, part in pool.results(_play_chunk, todo):
                    finished(task, part)
    ordered = [parts[index] for index in range(len(chunks))]
    first = [index * config.chunk for index in range(len(chunks))]
    return SelfPlay(
        np.concatenate([p.rows for p in ordered]),
        np.concatenate([p.targets for p in ordered]),
        np.concatenate([p.deals + start for p, start in zip(ordered, first, strict=True)]),
        np.concatenate([p.sibling_rows for p in ordered]),
        np.concatenate([p.sibling_targets for p in ordered]),
        np.concatenate([p.sibling_deals + start for p, start in zip(ordered, first, strict=True)]),
    )


_PLAYERS: dict[str | None, Any] = {}


def _play_chunk(
    task: tuple[str, int, int, int, str | None, str | None, float, int],
) -> SelfPlay:
    """One chunk of deals: ``(network, index, deals, seed, player, seat_network, explore,
    stocks)``, played by ``player`` if it names one, else as ``rollout`` plays its rollouts:
    by the seat network if one is named, else by the network; a share ``explore`` of the moves
    uniformly at random. With ``stocks``, one position of each deal is branched (the module
    doc) and each sibling played on with that many orders of the stock; the branches draw from
    a generator of their own, so the deals play as without."""
    import torch

    from agents.alphabeta import AlphaBeta
    from agents.greedy import MoveValuer
    from agents.guided import Root, seat_observations
    from agents.rollout import RolloutAgent
    from scopa_env.engine import Deal
    from scopa_env.observation import deal_blocks

    network, index, count, seed, spec, seat_network, explore, stocks = task
    torch.set_num_threads(1)
    key = f"{network} {seat_network}" if spec is None else spec
    if key not in _PLAYERS:  # a worker loads each player once
        if spec is not None:
            _PLAYERS[key] = rule_player(spec)
        elif seat_network is not None:
            _PLAYERS[key] = RolloutAgent(seat_network=seat_network)
        else:
            _PLAYERS[key] = RolloutAgent(network=network)
    player = _PLAYERS[key]
    exact = AlphaBeta(player.rules, MoveValuer(player.rules))  # any move order solves alike
    rng = np.random.default_rng([seed, index])
    deals = [Deal.new(rng, first_player=int(rng.integers(2))) for _ in range(count)]
    if spec is not None:
        reset_agent(player, int(rng.integers(2**32)))
    target = player.rules.target
    roots = [Root(deal_blocks((0, 0), target, dealer), (0, 0)) for dealer in (0, 1)]

    def advance(batch: list[Deal], explore: float) -> None:
        """The player's move in each deal of ``batch`` (a share ``explore`` at random)."""
        for dealer in (0, 1):
            mine = [deal for deal in batch if deal.dealer == dealer]
            if not mine:
                continue
            if spec is None:
                moves = player.rollout_policy.choose(mine, roots[dealer])
            else:
                seen = seat_observations(mine, roots[dealer])
                moves = [_rule_move(player, d, row) for d, row in zip(mine, seen, strict=True)]
            for deal, move in zip(mine, moves, strict=True):
                if explore and rng.random() < explore:
                    legal = deal.legal_mask_moves()
                    move = legal[int(rng.integers(len(legal)))]
                deal.play_unchecked(*move)

    main = _Recorder()
    branched = _Recorder()
    branches: list[Deal] = []
    branch_at = np.full(count, -1)
    shuffles = np.random.default_rng([seed, index, 1])
    if stocks:  # a position whose every move leaves cards in the stock
        branch_at = shuffles.integers(len(deals[0].stock) - 1, size=count)
    seen_positions = np.zeros(count, np.int64)

    def branch(i: int, deal: Deal) -> None:
        moves = deal.legal_mask_moves()
        if len(moves) < 2:
            return
        for move in moves:
            sibling = deal.copy()
            sibling.play_unchecked(*move)
            branched.record(sibling, i)
            branches.append(sibling)

    def visit(i: int, deal: Deal) -> None:
        main.record(deal, i)
        if seen_positions[i] == branch_at[i]:
            branch(i, deal)
        seen_positions[i] += 1

    final = _play_to_end(deals, lambda batch: advance(batch, explore), exact, visit)
    restocked = [_restocked(branches, branched.owners, shuffles) for _ in range(1, stocks)]
    ends = np.zeros(len(branches))
    for copies in [branches, *restocked]:
        ends += _play_to_end(copies, lambda batch: advance(batch, 0.0), exact)
    rows, targets, deal_of = main.arrays(final[main.owners])
    sibling_rows, sibling_targets, sibling_deals = branched.arrays(ends / max(stocks, 1))
    return SelfPlay(rows, targets, deal_of, sibling_rows, sibling_targets, sibling_deals)


def _restocked(deals: list[Deal], groups: list[int], rng: np.random.Generator) -> list[Deal]:
    """Copies of two-player ``deals`` with their stock shuffled, alike within a group."""
    orders: dict[int, np.ndarray] = {}
    out = []
    for deal, group in zip(deals, groups, strict=True):
        stock = np.array(deal.stock)
        if group not in orders:
            orders[group] = rng.permutation(len(stock))
        other = deal.hands[1 - deal.current_player]
        out.append(deal.with_hidden_cards(deal.current_player, [*other, *stock[orders[group]]]))
    return out


class _Recorder:
    """Positions as they are met, each with its mover and the deal it belongs to."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, ...]] = []
        self.movers: list[int] = []
        self.owners: list[int] = []

    def record(self, deal: Deal, owner: int) -> None:
        self.rows.append(position(deal))
        self.movers.append(deal.current_player)
        self.owners.append(owner)

    def arrays(self, final: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows, targets (``final``, each row's deal's difference for seat 0, from its mover's
        side) and owners."""
        sign = np.where(np.array(self.movers) == 0, 1.0, -1.0)
        table = np.array(self.rows, np.int64).reshape(-1, POSITION_FIELDS)
        return table, (sign * final).astype(np.float32), np.array(self.owners, np.int64)


def _play_to_end(
    deals: list[Deal],
    advance: Callable[[list[Deal]], None],
    exact: AlphaBeta,
    visit: Callable[[int, Deal], None] | None = None,
) -> np.ndarray:
    """Each deal's point difference for seat 0 once ``advance`` has played it until the stock
    is empty and the rest is solved; ``visit(i, deal)`` first sees every position before."""
    from agents.values import POINT
    from scopa_env.cards import NUM_CARDS

    final = np.zeros(len(deals))
    live = list(range(len(deals)))
    while live:
        playing = []
        for i in live:
            if not deals[i].stock:
                final[i] = exact.value(deals[i], NUM_CARDS, 0) / POINT
                continue
            if visit is not None:
                visit(i, deals[i])
            playing.append(i)
        advance([deals[i] for i in playing])
        live = playing
    return final


def _rule_move(player: RuleAgent, deal: Deal, seen: np.ndarray) -> MaskMove:
    """The move ``player`` makes in ``deal`` from ``seen``, its seat to move's observation."""
    from scopa_env.info_state import InfoState

    moves = deal.legal_mask_moves()
    if len(moves) == 1:
        return moves[0]
    return player.choose_seen(seen, InfoState.from_observation(seen), moves)


def fit_value(
    data: SelfPlay,
    config: DealValueConfig,
    progress: Progress | None = None,
    show_progress: bool = False,
) -> tuple[DealValue, dict[str, float]]:
    """The network fitted to ``data`` and its squared errors: held-out R^2 and the rest.
    With ``progress``, the fit is saved after each epoch and carried on from the last saved;
    with ``show_progress``, a bar of its steps on stderr."""
    import torch
    from torch import nn

    from agents.deal_value import BLIND, NUM_FEATURES, NUM_SCORING, SCORING, blinded, encode

    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    held = data.deals % config.holdout_every == 0
    rows = blinded(data.rows) if config.blind else data.rows
    train_rows, train_y = rows[~held], torch.from_numpy(data.targets[~held])
    test_rows, test_y = rows[held], torch.from_numpy(data.targets[held])
    sibling_rows = blinded(data.sibling_rows) if config.blind else data.sibling_rows
    sibling_held = data.sibling_deals % config.holdout_every == 0
    train_groups, test_groups = (
        SiblingGroups.of(sibling_rows[keep], data.sibling_targets[keep], data.sibling_deals[keep])
        for keep in (~sibling_held, sibling_held)
    )
    width = config.width
    net = nn.Sequential(
        nn.Linear(NUM_FEATURES + NUM_SCORING * config.scoring, width), nn.ReLU(),
        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1),
    )  # fmt: skip
    steps_per_epoch = max(1, len(train_rows) // config.batch_size)
    groups_per_step = -(-len(train_groups) // steps_per_epoch)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=config.learning_rate, total_steps=config.epochs * steps_per_epoch
    )
    first = 0
    saved = progress.load_fit() if progress is not None else None
    if saved is not None:
        net.load_state_dict(saved["net"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        torch.set_rng_state(saved["rng"])
        first = saved["epoch"] + 1
    total = config.epochs * steps_per_epoch
    with progress_bar(total, "step", show_progress, "fit", first * steps_per_epoch) as bar:
        for epoch in range(first, config.epochs):
            order = torch.randperm(len(train_rows)).numpy()
            if config.siblings:
                group_order = torch.randperm(len(train_groups)).numpy()
            for step in range(steps_per_epoch):
                batch = order[step * config.batch_size : (step + 1) * config.batch_size]
                x = torch.from_numpy(encode(train_rows[batch], config.scoring))
                loss = nn.functional.mse_loss(net(x).squeeze(-1), train_y[batch])
                if config.siblings:
                    some = group_order[step * groups_per_step : (step + 1) * groups_per_step]
                    loss = loss + config.siblings * _sibling_loss(
                        net, train_groups, some, config.scoring
                    )
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
                bar.update()
            if progress is not None:
                progress.save_fit(
                    {
                        "epoch": epoch,
                        "net": net.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "schedule": schedule.state_dict(),
                        "rng": torch.get_rng_state(),
                    }
                )
    layers = [m for m in net if isinstance(m, nn.Linear)]
    arrays = {}
    for k, layer in enumerate(layers, start=1):
        arrays[f"w{k}"] = layer.weight.detach().numpy().T.copy()
        arrays[f"b{k}"] = layer.bias.detach().numpy().copy()
    flags = {BLIND: config.blind, SCORING: config.scoring}
    value = DealValue(**arrays, **{name: np.asarray(int(flag)) for name, flag in flags.items()})

    siblings = {
        "held_out_sibling_groups": len(test_groups),
        "held_out_sibling_r2": sibling_r_squared(value, test_groups),
    }
    return value, {
        "train_positions": len(train_rows),
        "held_out_positions": len(test_rows),
        "target_std": round(float(data.targets.std()), 4),
        "train_r2": r_squared(value, train_rows[:R2_ROWS], train_y[:R2_ROWS].numpy()),
        "held_out_r2": r_squared(value, test_rows, test_y.numpy()),
        **(siblings if config.siblings else {}),
    }


@dataclass(frozen=True)
class SiblingGroups:
    """Sibling positions in groups (those of one deal, consecutive) and their outcomes."""

    rows: np.ndarray
    targets: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, rows: np.ndarray, targets: np.ndarray, deals: np.ndarray) -> SiblingGroups:
        """The groups of ``rows``, each a run of one deal in ``deals``."""
        starts = np.flatnonzero(np.diff(deals, prepend=-1))
        return cls(rows, targets, starts, np.diff(starts, append=len(deals)))

    def __len__(self) -> int:
        return len(self.starts)

    def take(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows and outcomes of ``groups``, and each row's place among them."""
        sizes = self.sizes[groups]
        group = np.repeat(np.arange(len(groups)), sizes)
        offsets = np.arange(len(group)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        picked = np.repeat(self.starts[groups], sizes) + offsets
        return self.rows[picked], self.targets[picked], group


def _sibling_loss(
    net: torch.nn.Module, groups: SiblingGroups, some: np.ndarray, scoring: bool
) -> Any:
    """The mean squared sibling error of groups ``some`` (0 for none)."""
    import torch

    from agents.deal_value import encode

    these, outcomes, group = groups.take(some)
    if not len(these):
        return 0.0
    values = net(torch.from_numpy(encode(these, scoring))).squeeze(-1)
    return sibling_errors(values, torch.from_numpy(outcomes), torch.from_numpy(group)).pow(2).mean()


def sibling_errors(
    values: torch.Tensor, targets: torch.Tensor, group: torch.Tensor
) -> torch.Tensor:
    """Each sibling's value about its group's mean, less its outcome about the group's."""
    import torch

    count = int(group.max()) + 1 if len(group) else 0

    def total(x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(count, dtype=x.dtype).index_add_(0, group, x)

    size = total(torch.ones_like(values))

    def centred(x: torch.Tensor) -> torch.Tensor:
        return x - (total(x) / size)[group]

    return centred(values) - centred(targets)


def sibling_r_squared(network: DealValue, groups: SiblingGroups) -> float:
    """The share of the spread of sibling outcomes about their groups' means that
    ``network``'s values about theirs explain (NaN for outcomes that do not spread)."""
    import torch

    rows, targets, group = groups.take(np.arange(len(groups)))
    outcomes, at = torch.from_numpy(targets.astype(np.float64)), torch.from_numpy(group)
    spread = float(sibling_errors(torch.zeros_like(outcomes), outcomes, at).pow(2).sum())
    if spread == 0:
        return float("nan")
    values = torch.from_numpy(network.values(rows).astype(np.float64))
    error = float(sibling_errors(values, outcomes, at).pow(2).sum())
    return round(1.0 - error / spread, 4)


def _report(summary: dict[str, Any]) -> str:
    lines = ["# DealValue training run", "", "| | |", "| --- | --- |"]
    lines += [f"| {key} | {value} |" for key, value in summary.items() if key != "versions"]
    lines += ["", "Libraries: " + ", ".join(f"{k} {v}" for k, v in summary["versions"].items())]
    return "\n".join(lines) + "\n"
