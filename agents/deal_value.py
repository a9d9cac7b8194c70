"""What a sampled deal is worth: a small network over a two-player deal seen whole.

A search that samples the hidden cards (``agents.ismcts``) plays each sample as a game of
perfect information, and values the position its tree ends in by playing the rest of the
deal greedily. ``DealValue`` estimates that position's worth another way: the point difference
the deal ends with when both seats play on as the shipped network plays, learnt from the
network's self-play (``training.deal_value``). It reads the whole position, both hands
included, from the side of the seat to move; it never reads the order of the stock, which the
searching player cannot know.

The features (``encode``, one row of ``position`` each):

| index | feature |
| --- | --- |
| 0-39 | the mover's hand, one entry per card (``scopa_env.cards`` order) |
| 40-79 | the other seat's hand |
| 80-119 | the table |
| 120-159 | the mover's captures |
| 160-199 | the other seat's captures |
| 200, 201 | the mover's scope and the other seat's, halved |
| 202, 203 | the mover made the last capture; the other seat did |
| 204 | cards left in the stock, over 30 |
| 205 | the mover is the dealer (plays last in each round) |

A network saved with ``scoring`` set (``scopa value`` with ``scoring: true``) reads
``NUM_SCORING`` features more (``scoring_features``), each a fact of the position that a
2-layer network of card planes reads poorly: what each pile has towards the scoring
categories, and what the table offers each hand (a sweep needs the table's sum):

| index | feature |
| --- | --- |
| 206, 207 | the table's sum of values over 40; its cards over 10 |
| 208 | the table is worth 10 or less (a card of that value sweeps it) |
| 209 | the mover's hand holds a card of the table's sum (a sweep) |
| 210, 211 | the mover's cards over 3; those of a value on the table, over 3 |
| 212-214 | the same of the other seat's hand |
| 215, 216 | the mover's pile: its cards less 20, over 10; more than 20 |
| 217, 218 | its coins less 5, over 3; more than 5 |
| 219-226 | per suit (D, C, S, B): the best primiera value of the pile, of pile and hand, over 21 |
| 227-238 | the same of the other seat's pile |

A blind network (saved with ``blind`` set; ``scopa value`` with ``blind: true``) reads the
other seat's hand as empty, so it knows only what the mover sees: that hand is among the cards
in neither hand, pile nor table. It estimates the same difference from the mover's view.

The network is two ReLU layers and a linear output in points. It runs in numpy (about 16 µs a
position, inside the search's budget); ``training.deal_value`` fits it with torch.

An ensemble (``DealValue.ensemble``; ``scopa value-ensemble``) is networks of one width fitted
apart, each array stacked on a first axis of members, valued as their mean: networks fitted on
other self-play err on other positions, and the mean of three explains more of the variance than
any of them (``docs/strength.md``, which also finds it plays no better at the search's leaves).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from scopa_env.cards import NUM_CARDS
from scopa_env.engine import Deal
from scopa_env.errors import CheckpointError, PlayerError
from scopa_env.scoring import BEST_PRIMIERA

#: The network the project ships (``scopa value`` writes it; its README has the recipe).
SHIPPED = Path(__file__).resolve().parent / "pretrained_value" / "deal_value.npz"
#: Columns of a position row: the mover's hand, the other's hand, the table, the mover's
#: captures, the other's captures, the two scope counts, the last capturer (0 none, 1 the
#: mover, 2 the other), the stock's size and whether the mover deals.
POSITION_FIELDS = 10
NUM_FEATURES = 5 * NUM_CARDS + 6
#: The arrays of a saved network (an ensemble's have a first axis of members more).
ARRAYS = ("w1", "b1", "w2", "b2", "w3", "b3")
#: An array a saved network may hold as well: 1 when it is blind to the other hand.
BLIND = "blind"
#: An array a saved network may hold as well: 1 when it reads ``scoring_features`` too.
SCORING = "scoring"
#: The features ``scoring_features`` adds (the module doc's table, 206-238).
NUM_SCORING = 33
#: The column of a position row that holds the other seat's hand.
OTHER_HAND = 1
_BITS = np.arange(NUM_CARDS, dtype=np.int64)
_VALUES = np.arange(1, 11, dtype=np.int64)
_BEST_PRIMIERA = np.array(BEST_PRIMIERA, np.float32) / 21.0


def position(deal: Deal) -> tuple[int, ...]:
    """A two-player deal in play as a row of ``POSITION_FIELDS`` integers, from the side of
    the seat to move."""
    hands, table, piles, _played, stock, scope, last, dealer, _live = deal.view()
    if len(hands) != 2:
        raise PlayerError(f"DealValue values two-player deals; this one has {len(hands)} seats")
    me = deal.current_player
    other = 1 - me
    last_code = 0 if last is None else 1 if last == me else 2
    return (
        hands[me], hands[other], table, piles[me], piles[other],
        scope[me], scope[other], last_code, stock, int(dealer == me),
    )  # fmt: skip


def encode(rows: np.ndarray, scoring: bool = False) -> np.ndarray:
    """``(N, NUM_FEATURES)`` float32 features of ``(N, POSITION_FIELDS)`` position rows,
    with ``scoring``, ``(N, NUM_FEATURES + NUM_SCORING)``: the ``scoring_features`` after."""
    rows = np.asarray(rows, np.int64)
    if scoring:
        return np.concatenate([encode(rows), scoring_features(rows)], axis=1)
    out = np.empty((len(rows), NUM_FEATURES), np.float32)
    planes = out[:, : 5 * NUM_CARDS].reshape(len(rows), 5, NUM_CARDS)
    planes[:] = (rows[:, :5, None] >> _BITS) & 1
    scalars = out[:, 5 * NUM_CARDS :]
    scalars[:, 0:2] = rows[:, 5:7] / 2.0
    scalars[:, 2] = rows[:, 7] == 1
    scalars[:, 3] = rows[:, 7] == 2
    scalars[:, 4] = rows[:, 8] / 30.0
    scalars[:, 5] = rows[:, 9]
    return out


def scoring_features(rows: np.ndarray) -> np.ndarray:
    """``(N, NUM_SCORING)`` float32 features of position rows: the scoring categories and
    what the table offers each hand (module doc; plain rules' captures)."""
    rows = np.asarray(rows, np.int64)
    n = len(rows)
    planes = (rows[:, :5, None] >> _BITS) & 1
    by_value = planes.reshape(n, 5, 4, 10).sum(axis=2)
    table = by_value[:, 2]
    total = table @ _VALUES
    count = table.sum(axis=1)
    sweep_value = np.where((count > 0) & (total <= 10), total - 1, -1)
    out = np.empty((n, NUM_SCORING), np.float32)
    out[:, 0] = total / 40.0
    out[:, 1] = count / 10.0
    out[:, 2] = sweep_value >= 0
    column = 3
    for hand in by_value[:, 0], by_value[:, 1]:
        out[:, column] = (sweep_value >= 0) & (hand[np.arange(n), sweep_value] > 0)
        out[:, column + 1] = hand.sum(axis=1) / 3.0
        out[:, column + 2] = (hand * (table > 0)).sum(axis=1) / 3.0
        column += 3
    for pile, hand in (3, 0), (4, 1):
        cards = planes[:, pile].sum(axis=1)
        coins = planes[:, pile, :10].sum(axis=1)
        out[:, column : column + 4] = np.stack(
            [(cards - 20) / 10.0, cards > 20, (coins - 5) / 3.0, coins > 5], axis=1
        )
        for suit in range(4):
            shift = 10 * suit
            out[:, column + 4 + 2 * suit] = _BEST_PRIMIERA[rows[:, pile] >> shift & 1023]
            out[:, column + 5 + 2 * suit] = _BEST_PRIMIERA[
                (rows[:, pile] | rows[:, hand]) >> shift & 1023
            ]
        column += 12
    return out


def blinded(rows: np.ndarray) -> np.ndarray:
    """Position rows with the other seat's hand emptied: what the mover sees of them."""
    rows = np.array(rows, np.int64)
    rows[:, OTHER_HAND] = 0
    return rows


def _flag(arrays: dict[str, np.ndarray], name: str) -> bool:
    """Saved flag ``name`` popped from ``arrays`` (0 if absent)."""
    flag = np.asarray(arrays.pop(name, 0))
    if flag.shape != () or flag.item() not in (0, 1):
        raise CheckpointError(f"DealValue array {name} is 0 or 1, got {flag.tolist()!r}")
    return bool(flag.item())


class DealValue:
    """The network: each position's final point difference for the seat to move, in points.

    Args: the layers' weights and biases, ``w1`` of shape ``(features, width)``, ``w2``
        ``(width, width)``, ``w3`` ``(width, 1)``, each with a first axis of members more for
        an ensemble (module doc), ``blind`` (0 or 1, 0 if absent): whether the network
        reads the other seat's hand as empty, and ``scoring`` (the same): whether it reads the
        ``scoring_features`` too, ``features`` being ``NUM_FEATURES`` or ``NUM_FEATURES +
        NUM_SCORING`` (module doc).
    """

    def __init__(self, **arrays: np.ndarray) -> None:
        self.blind, self.scoring = (_flag(arrays, name) for name in (BLIND, SCORING))
        #: The features a position is read as: ``NUM_FEATURES``, and ``NUM_SCORING`` more.
        self.features = NUM_FEATURES + NUM_SCORING * self.scoring
        missing = sorted(set(ARRAYS) - set(arrays))
        extra = sorted(set(arrays) - set(ARRAYS))
        if missing or extra:
            raise CheckpointError(
                f"a DealValue needs arrays {sorted(ARRAYS)}; got {sorted(arrays)}"
            )
        w = {k: np.asarray(v, np.float64) for k, v in arrays.items()}
        stacked = w["b1"].ndim == 2
        members: tuple[int, ...] = (len(w["b1"]),) if stacked else ()
        width = w["b1"].shape[-1] if w["b1"].ndim in (1, 2) else -1
        shapes = {
            "w1": (self.features, width), "b1": (width,), "w2": (width, width), "b2": (width,),
            "w3": (width, 1), "b3": (1,),
        }  # fmt: skip
        for name, shape in shapes.items():
            if w[name].shape != members + shape:
                raise CheckpointError(
                    f"DealValue array {name} has shape {w[name].shape}, expected {members + shape}"
                )
        self.width = width
        self.arrays = {
            **w, BLIND: np.asarray(int(self.blind)), SCORING: np.asarray(int(self.scoring)),
        }  # fmt: skip
        if not stacked:
            w = {k: v[None] for k, v in w.items()}
        self._stacked = w  # every array with its first axis of members
        self.members = len(w["b1"])
        # The first layer of every member in one product; the second, member by member.
        self._w1 = np.concatenate(list(w["w1"]), axis=1)
        self._b1 = w["b1"].reshape(-1)
        self._w2, self._b2 = w["w2"], w["b2"][:, None, :]
        self._w3 = w["w3"][:, :, 0] / self.members
        self._b3 = float(w["b3"].mean())

    @classmethod
    def ensemble(cls, networks: Sequence[DealValue]) -> DealValue:
        """One network valuing a position as the mean of ``networks`` (of one width and
        blindness) does."""
        if not networks:
            raise ValueError("an ensemble needs at least one network")
        kinds = {(net.width, net.blind, net.scoring) for net in networks}
        if len(kinds) > 1:
            raise ValueError(
                "an ensemble's networks have one width, blindness and features: "
                f"got (width, blind, scoring) {sorted(kinds)}"
            )
        arrays = {name: np.concatenate([net._stacked[name] for net in networks]) for name in ARRAYS}
        flags = {BLIND: networks[0].blind, SCORING: networks[0].scoring}
        return cls(**arrays, **{name: np.asarray(int(flag)) for name, flag in flags.items()})

    @classmethod
    def load(cls, path: str | Path = SHIPPED) -> DealValue:
        """A network saved by ``training.deal_value`` (an ``.npz`` of ``ARRAYS``)."""
        path = Path(path)
        if not path.is_file():
            raise CheckpointError(f"no DealValue network at {path}")
        try:
            with np.load(path) as data:
                arrays = {name: data[name] for name in data.files}
        except (OSError, ValueError) as error:
            raise CheckpointError(f"{path} is not a DealValue network: {error}") from None
        try:
            return cls(**arrays)
        except CheckpointError as error:
            raise CheckpointError(f"{path}: {error}") from None

    def values(self, rows: np.ndarray) -> np.ndarray:
        """``(N,)`` values, in points for the seat to move, of ``(N, POSITION_FIELDS)`` rows."""
        if self.blind:
            rows = blinded(rows)
        first = np.maximum(encode(rows, self.scoring) @ self._w1 + self._b1, 0.0)
        first = first.reshape(len(first), self.members, self.width).transpose(1, 0, 2)
        second = np.maximum(first @ self._w2 + self._b2, 0.0)
        return np.einsum("mnw,mw->n", second, self._w3) + self._b3

    def __call__(self, deal: Deal) -> float:
        """The value of ``deal`` in points for its seat to move."""
        return float(self.values(np.array([position(deal)], np.int64))[0])
