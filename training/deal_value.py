"""Train ``agents.deal_value.DealValue`` on the shipped network's self-play, from a config.

Read top to bottom: ``train_deal_value`` (self-play, fit, save), then the pieces it uses.

    scopa value --config configs/deal_value.yaml --out runs/value   # a new network
    scopa value --config configs/deal_value.yaml --out agents/pretrained_value --overwrite

1. **Self-play.** ``deals`` fresh two-player deals are played by the network for both seats
   (its most likely card, every deal of a chunk batched into one forward pass a ply), spread
   over ``workers`` processes in chunks of ``chunk`` deals, each chunk seeded from ``seed``
   and its index, so the data does not depend on the number of workers. Each position with
   cards left in the stock is recorded (``agents.deal_value.position``). Once the stock is
   empty the deal is solved exactly (``agents.alphabeta.AlphaBeta``), as the searches solve
   the last round; every recorded position's target is the deal's final point difference
   for its seat to move.
2. **Fit.** A two-layer ReLU network of ``width`` minimises the squared error with Adam and
   a one-cycle learning rate, holding out every ``holdout_every``-th deal to report R^2 on
   positions of deals it never saw.
3. **Save.** ``deal_value.npz`` (the weights, written atomically), ``config.yaml`` and
   ``report.md`` (rows, R^2, times) in the output folder.

The run is a few minutes on two cores, so it is not checkpointed: an interrupted run leaves
no weights behind and is run again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import Field

from agents.deal_value import POSITION_FIELDS, DealValue, position
from evaluation.records import atomic_path, folder_lock, library_versions, write_text
from evaluation.workers import WorkerPool
from training.config import _Section

#: The output folder's weights (``agents.deal_value.SHIPPED`` is this file in the shipped one).
WEIGHTS = "deal_value.npz"
#: Training positions the report's training R^2 is measured on (the first ones).
R2_ROWS = 500_000


class DealValueConfig(_Section):
    """What ``train_deal_value`` plays and fits (``configs/deal_value.yaml``)."""

    #: The network that plays both seats: ``pretrained`` or a MaskablePPO checkpoint's path.
    network: str = Field(default="pretrained")
    deals: int = Field(default=300_000, ge=1)
    #: Deals played together (one forward pass a ply) and seeded together.
    chunk: int = Field(default=500, ge=1)
    workers: int = Field(default=2, ge=1)
    seed: int = Field(default=0, ge=0)
    width: int = Field(default=256, ge=1)
    epochs: int = Field(default=3, ge=1)
    batch_size: int = Field(default=2048, ge=1)
    #: The one-cycle schedule's peak learning rate.
    learning_rate: float = Field(default=2e-3, gt=0)
    #: Every this-th deal is held out of the fit, to measure it.
    holdout_every: int = Field(default=20, ge=2)
    torch_threads: int = Field(default=2, ge=1)


@dataclass(frozen=True)
class SelfPlay:
    """Positions (``(N, POSITION_FIELDS)`` rows), their targets in points for the seat to
    move, and the index of the deal each came from."""

    rows: np.ndarray
    targets: np.ndarray
    deals: np.ndarray


def train_deal_value(config: DealValueConfig, out: Path) -> dict[str, Any]:
    """Self-play, fit and save into ``out``; returns what ``report.md`` records."""
    with folder_lock(out):
        started = time.perf_counter()
        data = self_play(config)
        played = time.perf_counter()
        network, fit = fit_value(data, config)
        finished = time.perf_counter()
        arrays: dict[str, Any] = {k: v.astype(np.float32) for k, v in network.arrays.items()}
        with atomic_path(out / WEIGHTS) as tmp:
            np.savez(tmp, **arrays)
        summary = {
            "positions": len(data.rows),
            "deals": config.deals,
            **fit,
            "self_play_s": round(played - started, 1),
            "fit_s": round(finished - played, 1),
            "versions": library_versions(),
        }
        write_text(out / "config.yaml", yaml.safe_dump(config.model_dump(mode="json")))
        write_text(out / "report.md", _report(summary))
        return summary


def self_play(config: DealValueConfig) -> SelfPlay:
    """Every chunk of ``config.deals`` played by the network, over ``config.workers``."""
    chunks = [
        (config.network, index, min(config.chunk, config.deals - start), config.seed)
        for index, start in enumerate(range(0, config.deals, config.chunk))
    ]
    if config.workers == 1:
        parts = {task[1]: _play_chunk(task) for task in chunks}
    else:
        with WorkerPool(min(config.workers, len(chunks))) as pool:
            parts = {task[1]: part for task, part in pool.results(_play_chunk, chunks)}
    ordered = [parts[index] for index in range(len(chunks))]
    return SelfPlay(
        np.concatenate([p.rows for p in ordered]),
        np.concatenate([p.targets for p in ordered]),
        np.concatenate([p.deals + index * config.chunk for index, p in enumerate(ordered)]),
    )


_PLAYERS: dict[str, Any] = {}


def _play_chunk(task: tuple[str, int, int, int]) -> SelfPlay:
    """One chunk of deals played by the network: ``(network, index, deals, seed)``."""
    import torch

    from agents.alphabeta import AlphaBeta
    from agents.guided import Root
    from agents.rollout import RolloutAgent
    from agents.values import POINT
    from scopa_env.cards import NUM_CARDS
    from scopa_env.engine import Deal
    from scopa_env.observation import deal_blocks

    network, index, count, seed = task
    torch.set_num_threads(1)
    if network not in _PLAYERS:  # a worker loads the network once
        _PLAYERS[network] = RolloutAgent(network=network)
    player = _PLAYERS[network]
    exact = AlphaBeta(player.rules, player.valuer)
    rng = np.random.default_rng([seed, index])
    deals = [Deal.new(rng, first_player=int(rng.integers(2))) for _ in range(count)]
    target = player.rules.target
    roots = [Root(deal_blocks((0, 0), target, dealer), (0, 0)) for dealer in (0, 1)]
    rows: list[tuple[int, ...]] = []
    movers: list[int] = []
    owners: list[int] = []
    final = np.zeros(count)  # each deal's point difference for seat 0
    live = list(range(count))
    while live:
        playing = []
        for i in live:
            deal = deals[i]
            if not deal.stock:
                final[i] = exact.value(deal, NUM_CARDS, 0) / POINT
                continue
            rows.append(position(deal))
            movers.append(deal.current_player)
            owners.append(i)
            playing.append(i)
        for dealer in (0, 1):
            batch = [i for i in playing if deals[i].dealer == dealer]
            if not batch:
                continue
            seen = player.leaf.observations([deals[i] for i in batch], roots[dealer])
            for i, logits in zip(batch, player.leaf.logits(seen), strict=True):
                deal = deals[i]
                move = player.network_choice(deal.masks["table"], deal.legal_mask_moves(), logits)
                deal.play_unchecked(*move)
        live = playing
    deal_of = np.array(owners, np.int64)
    sign = np.where(np.array(movers) == 0, 1.0, -1.0)
    table = np.array(rows, np.int64).reshape(-1, POSITION_FIELDS)
    return SelfPlay(table, (sign * final[deal_of]).astype(np.float32), deal_of)


def fit_value(data: SelfPlay, config: DealValueConfig) -> tuple[DealValue, dict[str, float]]:
    """The network fitted to ``data`` and its squared errors: held-out R^2 and the rest."""
    import torch
    from torch import nn

    from agents.deal_value import NUM_FEATURES, encode

    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    held = data.deals % config.holdout_every == 0
    train_rows, train_y = data.rows[~held], torch.from_numpy(data.targets[~held])
    test_rows, test_y = data.rows[held], torch.from_numpy(data.targets[held])
    width = config.width
    net = nn.Sequential(
        nn.Linear(NUM_FEATURES, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
        nn.Linear(width, 1),
    )  # fmt: skip
    steps_per_epoch = max(1, len(train_rows) // config.batch_size)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=config.learning_rate, total_steps=config.epochs * steps_per_epoch
    )
    for _ in range(config.epochs):
        order = torch.randperm(len(train_rows)).numpy()
        for step in range(steps_per_epoch):
            batch = order[step * config.batch_size : (step + 1) * config.batch_size]
            x = torch.from_numpy(encode(train_rows[batch]))
            loss = nn.functional.mse_loss(net(x).squeeze(-1), train_y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
    layers = [m for m in net if isinstance(m, nn.Linear)]
    arrays = {}
    for k, layer in enumerate(layers, start=1):
        arrays[f"w{k}"] = layer.weight.detach().numpy().T.copy()
        arrays[f"b{k}"] = layer.bias.detach().numpy().copy()
    value = DealValue(**arrays)

    def r2(rows: np.ndarray, y: torch.Tensor) -> float:
        if len(y) < 2:
            return float("nan")
        parts = [value.values(rows[k : k + 65536]) for k in range(0, len(rows), 65536)]
        predicted = np.concatenate(parts)
        error = float(np.mean((predicted - y.numpy()) ** 2))
        return round(1.0 - error / float(y.var()), 4)

    return value, {
        "train_positions": len(train_rows),
        "held_out_positions": len(test_rows),
        "target_std": round(float(data.targets.std()), 4),
        "train_r2": r2(train_rows[:R2_ROWS], train_y[:R2_ROWS]),
        "held_out_r2": r2(test_rows, test_y),
    }


def _report(summary: dict[str, Any]) -> str:
    lines = ["# DealValue training run", "", "| | |", "| --- | --- |"]
    lines += [f"| {key} | {value} |" for key, value in summary.items() if key != "versions"]
    lines += ["", "Libraries: " + ", ".join(f"{k} {v}" for k, v in summary["versions"].items())]
    return "\n".join(lines) + "\n"
