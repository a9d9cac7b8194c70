"""Fit ``agents.last_round.LastRoundValue`` to a search's values of the last round's moves.

A warm start with a search teacher saves, for every decision, the search's value of each legal
action in points per deal (``training.warm_start``). In the last round of a two-player deal
``alphabeta`` solves to the end, so those values are exact. ``afterstates_of`` turns each
such decision into the positions its moves leave and the value of each action: a card with
several captures, or a table card picked toward them, is worth its best capture. ``fit``
trains the network so that, per action, the best of its moves' values (the network's value
of the position for the seat that moved, ``afterstate_values``; exact where the move ends the
deal) matches the search's. The loss is on each decision's values less their mean, as only
the order of a decision's moves decides the play, plus a twentieth of the plain squared error
to anchor the level (``LEVEL_WEIGHT``). ``regret`` is what the network's pick gives up by the
search's values, the figure ``scopa imitation`` reports for a policy network. Given a
``progress`` file, ``fit`` saves itself there after each epoch and a stopped fit carries on
from its last saved epoch, ending with the weights an uninterrupted fit ends with. The same
fit, on other decisions' moves (``moves_of``), teaches ``agents.seat_value.SeatValue``
(``training.seat_value``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from agents.deal_value import POSITION_FIELDS, position
from agents.last_round import LastRoundValue, afterstates, final_value, in_last_round
from agents.seats import SeatView
from evaluation.records import atomic_path
from scopa_env.engine import MaskMove
from scopa_env.errors import CheckpointError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules
from training.checkpoints import identity_differences
from training.warm_start import Decisions, actions_toward


class Judge(Protocol):
    """What ``regret`` reads: a network's values of afterstates (a ``LastRoundValue`` or an
    ensemble of them, ``agents.seat_value.SeatEnsemble``)."""

    def afterstate_values(self, rows: np.ndarray) -> torch.Tensor: ...

    def eval(self) -> Any: ...


@dataclass(frozen=True)
class Afterstates:
    """The last round's decisions as the positions their moves leave.

    ``rows`` are position rows (``agents.deal_value.position``) from the side of the seat to
    move next, one per move and action it leads toward (a move toward two table cards in the
    pick phase counts twice); ``exact`` is the mover's value of a move that ends the deal (NaN
    for the others); ``pair`` the index of that move's action among the actions, sorted.
    Per action: ``target``, the search's value, and ``decision``, its decision's index, sorted.
    """

    rows: np.ndarray
    exact: np.ndarray
    pair: np.ndarray
    target: np.ndarray
    decision: np.ndarray

    @property
    def decisions(self) -> int:
        return int(self.decision[-1]) + 1 if len(self.decision) else 0


#: A move, the row of the position it leaves and its exact value (NaN: the deal goes on).
Afterstate = tuple[MaskMove, tuple[int, ...], float]
#: A decision's moves as ``Afterstate``s, or ``None`` for a decision the fit leaves out.
MovesOf = Callable[[InfoState, np.ndarray, Rules], list[Afterstate] | None]


def last_round_moves(info: InfoState, obs: np.ndarray, rules: Rules) -> list[Afterstate] | None:
    """The moves of a last-round decision as position rows from the side of the seat to move
    next (``agents.deal_value.position``), a move that ends the deal valued exactly."""
    if not in_last_round(info, obs):
        return None
    deal = SeatView.from_info(info, obs).position(rules)
    moves = info.legal_moves(rules)
    out = []
    for move, child in zip(moves, afterstates(deal, moves), strict=True):
        if child.is_over:
            out.append((move, (0,) * POSITION_FIELDS, final_value(child, deal.current_player)))
        else:
            out.append((move, position(child), np.nan))
    return out


def afterstates_of(
    decisions: Decisions,
    rules: Rules,
    moves_of: MovesOf = last_round_moves,
    fields: int = POSITION_FIELDS,
    extra: Sequence[tuple[int, ...]] | None = None,
) -> Afterstates:
    """The decisions with a choice, every legal action of which the search valued, that
    ``moves_of`` keeps (by default those of the last round of two-player deals), as
    ``Afterstates`` of its rows of ``fields`` integers. ``extra`` holds per decision the
    integers that end each of its rows, what ``moves_of`` cannot read from the observation
    alone (``training.seat_value``: the opponent's plays this round)."""
    if decisions.values is None:
        raise ValueError("the tasks hold no search values: collect them with a search teacher")
    rows: list[tuple[int, ...]] = []
    exact: list[float] = []
    pair: list[int] = []
    target: list[float] = []
    decision: list[int] = []
    kept = 0
    columns = zip(decisions.obs, decisions.masks, decisions.values, strict=True)
    for i, (obs, mask, values) in enumerate(columns):
        if mask.sum() < 2 or np.isnan(values[mask]).any():
            continue
        info = InfoState.from_observation(obs)
        moves = moves_of(info, obs, rules)
        if moves is None:
            continue
        index: dict[int, int] = {}
        tail = () if extra is None else extra[i]
        for move, row, end in moves:
            for action in actions_toward(info, move):
                if action not in index:
                    index[action] = len(target)
                    target.append(float(values[action]))
                    decision.append(kept)
                rows.append(row + tail)
                exact.append(end)
                pair.append(index[action])
        kept += 1
    order = np.argsort(np.array(pair, np.int64), kind="stable")
    return Afterstates(
        rows=np.array(rows, np.int64).reshape(-1, fields)[order],
        exact=np.array(exact, np.float32)[order],
        pair=np.array(pair, np.int64)[order],
        target=np.array(target, np.float32),
        decision=np.array(decision, np.int64),
    )


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The indices ``starts[i]:ends[i]`` of every ``i``, concatenated."""
    lengths = ends - starts
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return offsets + np.arange(lengths.sum())


class _Batches:
    """Index arithmetic over ``Afterstates``: the actions of some decisions, and their rows."""

    def __init__(self, data: Afterstates) -> None:
        self.data = data
        self.pair_start = np.searchsorted(data.decision, np.arange(data.decisions + 1))
        self.row_start = np.searchsorted(data.pair, np.arange(len(data.target) + 1))

    def predict(self, net: Judge, pairs: np.ndarray) -> torch.Tensor:
        """The network's value of each action in ``pairs`` for its mover: its best move's."""
        data = self.data
        rows = _ranges(self.row_start[pairs], self.row_start[pairs + 1])
        local = torch.from_numpy(np.repeat(np.arange(len(pairs)), np.diff(self.row_start)[pairs]))
        value = torch.from_numpy(data.exact[rows])
        live = np.flatnonzero(np.isnan(data.exact[rows]))
        if len(live):
            live_rows = data.rows[rows[live]]
            value = value.index_put((torch.from_numpy(live),), net.afterstate_values(live_rows))
        best = torch.full((len(pairs),), -torch.inf)
        return best.scatter_reduce(0, local, value, "amax")

    def pairs_of(self, decisions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The actions of ``decisions`` and, for each, its decision's place in ``decisions``."""
        starts, ends = self.pair_start[decisions], self.pair_start[decisions + 1]
        return _ranges(starts, ends), np.repeat(np.arange(len(decisions)), ends - starts)


#: The weight of the plain squared error in ``fit``'s loss, beside the centred one.
LEVEL_WEIGHT = 0.05


#: The temperature of ``fit``'s softmax pick, in points.
PICK_TEMPERATURE = 0.05


def _pick_regret(
    predicted: torch.Tensor, target: torch.Tensor, owner: np.ndarray, n: int, temperature: float
) -> torch.Tensor:
    """The mean over the decisions of the search's regret of a pick drawn from the softmax of
    ``predicted / temperature`` over each decision's actions."""
    index = torch.from_numpy(owner)
    logits = predicted / temperature
    top = torch.full((n,), -torch.inf).scatter_reduce(0, index, logits.detach(), "amax")
    weights = torch.exp(logits - top[index])
    p = weights / torch.zeros(n).index_add_(0, index, weights)[index]
    best = torch.full((n,), -torch.inf).scatter_reduce(0, index, target, "amax")
    return (p * (best[index] - target)).sum() / n


def _loss(
    predicted: torch.Tensor, target: torch.Tensor, owner: np.ndarray, n: int, level: float
) -> torch.Tensor:
    error = predicted - target
    index = torch.from_numpy(owner)
    sizes = torch.zeros(n).index_add_(0, index, torch.ones_like(error))
    mean = torch.zeros(n).index_add_(0, index, error) / sizes
    return ((error - mean[index]) ** 2).mean() + level * (error**2).mean()


def regret(net: Judge, data: Afterstates, chunk: int = 4096) -> tuple[float, float]:
    """The mean, over the decisions, of the search's best value minus its value of the
    network's pick (points per decision), and its 95% interval's half-width."""
    batches = _Batches(data)
    predicted = np.empty(len(data.target))
    with torch.no_grad():
        net.eval()
        for start in range(0, len(data.target), chunk):
            pairs = np.arange(start, min(start + chunk, len(data.target)))
            predicted[pairs] = batches.predict(net, pairs).numpy()
    first = batches.pair_start[:-1]  # each decision's actions are contiguous, in order
    pick = np.lexsort((-predicted, data.decision))[first]  # its first best-valued action
    loss = np.maximum.reduceat(data.target, first) - data.target[pick]
    half = 1.96 * loss.std(ddof=1) / np.sqrt(len(loss)) if len(loss) > 1 else float("nan")
    return float(loss.mean()), float(half)


def fit(
    data: Afterstates,
    net: LastRoundValue,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    after_epoch: Callable[[int, float], None] | None = None,
    progress: Path | None = None,
    identity: Mapping[str, Any] | None = None,
    level_weight: float = LEVEL_WEIGHT,
    pick_weight: float = 0.0,
    pick_temperature: float = PICK_TEMPERATURE,
) -> float:
    """Train ``net`` on ``data`` (module doc), one-cycle learning rate; returns the last
    epoch's mean loss. ``after_epoch(epoch, loss)`` is called after each epoch.
    ``level_weight`` weighs the plain squared error beside the centred one: more of it ties
    the values of different positions to one scale, as a search comparing them needs.
    ``pick_weight`` adds the expected regret of a softmax pick (``pick_temperature`` in points)
    by the network's values: a loss on the choice the player makes, where the squared errors
    count every action's value alike.

    With ``progress``, the fit's whole state is written there atomically after each epoch, and
    a fit that finds one there carries on after its epoch. ``identity`` (the arguments that
    shape the fit) is saved with it; a saved fit of another identity is refused, naming what
    differs. A file that cannot be read is warned about and the fit starts over.
    """
    if data.decisions == 0:
        raise ValueError("no decision to fit")
    identity = dict(identity or {})
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    batches = _Batches(data)
    target = torch.from_numpy(data.target)
    steps_per_epoch = max(data.decisions // batch_size, 1)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, learning_rate, total_steps=epochs * steps_per_epoch
    )
    mean_loss, first = float("nan"), 0
    saved = _saved_fit(progress, identity) if progress is not None else None
    if saved is not None:
        net.load_state_dict(saved["net"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        torch.set_rng_state(saved["torch_rng"])
        rng.bit_generator.state = saved["numpy_rng"]
        mean_loss, first = saved["loss"], saved["epoch"] + 1
    for epoch in range(first, epochs):
        net.train()
        order = rng.permutation(data.decisions)
        total = 0.0
        for step in range(steps_per_epoch):
            decisions = order[step * batch_size : (step + 1) * batch_size]
            pairs, owner = batches.pairs_of(decisions)
            predicted = batches.predict(net, pairs)
            loss = _loss(predicted, target[pairs], owner, len(decisions), level_weight)
            if pick_weight:
                loss = loss + pick_weight * _pick_regret(
                    predicted, target[pairs], owner, len(decisions), pick_temperature
                )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total += loss.item()
        mean_loss = total / steps_per_epoch
        if progress is not None:
            state = {
                "identity": identity,
                "epoch": epoch,
                "loss": mean_loss,
                "net": net.state_dict(),
                "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(),
                "torch_rng": torch.get_rng_state(),
                "numpy_rng": rng.bit_generator.state,
            }
            save(state, progress)
        if after_epoch is not None:
            after_epoch(epoch, mean_loss)
    return mean_loss


#: What ``fit`` saves after each epoch.
_FIT_STATE = {"identity", "epoch", "loss", "net", "optimizer", "schedule", "torch_rng", "numpy_rng"}


def _saved_fit(progress: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    """The fit saved at ``progress``, if any: refused if of another identity, warned about and
    passed over if unreadable or incomplete."""
    if not progress.is_file():
        return None
    try:
        saved = torch.load(progress, map_location="cpu", weights_only=True)
        missing = sorted(_FIT_STATE - saved.keys())
    except Exception as error:  # noqa: BLE001 - torch raises many kinds for a bad file
        saved, missing = {}, [f"a readable file ({type(error).__name__})"]
    found = saved.get("identity")
    shown = identity_differences(found, identity) if isinstance(found, dict) else ""
    if shown:
        raise CheckpointError(
            f"{progress} holds a stopped fit of other arguments ({shown}); run it with the same "
            "arguments, or delete the file to start over"
        )
    if missing:
        warnings.warn(
            f"{progress} is not a saved fit (no {', '.join(missing)}); fitting from the start",
            stacklevel=3,
        )
        return None
    return dict(saved)


def save(net: LastRoundValue | dict[str, Any], path: Path) -> None:
    """Write the network where ``LastRoundValue.load`` reads it (or a fit's state where
    ``fit`` reads it back), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(net.to_dict() if isinstance(net, LastRoundValue) else net, tmp)
