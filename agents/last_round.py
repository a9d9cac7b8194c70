"""The last round of a two-player deal, played by a network that values the position each move
leaves.

Once the stock is empty, each player of a two-player deal knows the other's hand: the cards
it has not seen. The last round is then a game of perfect information, at most six plies
long. The shipped policy network gives up about 0.1 points a decision there against an exact
solver (``docs/strength.md``), which a wider policy network or more exact examples did not mend.
``LastRoundValue`` values an *afterstate* instead: the position a move leaves, the other seat
to move, with both hands, the table and both piles in view. ``LastRoundAgent`` plays each
decision of the last round by the move whose afterstate is worth most to it, all of them
valued in one forward pass, and every earlier decision by its base player (the shipped
network by default). A move that ends the deal is valued exactly, by the rules' scoring. No
reply is searched: the network alone judges what follows the move.

The features of a position (``encode``), from the side of the seat to move. One token per
card still to play or on the table (``TOKEN_FEATURES``):

| index | feature |
| --- | --- |
| 0-2 | where it is: the mover's hand, the other hand, the table |
| 3-12 | its rank, one-hot |
| 13-16 | its suit, one-hot |
| 17 | its primiera value / 21 |

and one row of the scores at stake (``GLOBAL_FEATURES``):

| index | feature |
| --- | --- |
| 0-81 | the size of the mover's pile, one-hot 0-40, then the other's |
| 82-103 | the coins in the mover's pile, one-hot 0-10, then the other's |
| 104-283 | per suit, the best primiera card (none, then the 8 values; one-hot) in the mover's |
| | pile, the other's pile, the mover's hand, the other hand and the table |
| 284-292 | the scope difference, the mover's minus the other's, one-hot -4..4 (clipped) |
| 293-313 | size / 40, coins / 10, the settebello and per suit the best primiera value / 21 |
| | of the mover's pile, the other's pile and the cards still in play |
| 314-316 | the scope difference / 4, the mover's scope / 4, the other's / 4 |
| 317-319 | the last capture: nobody's, the mover's, the other's |
| 320-321 | the mover's hand size / 3, the other's / 3 |

The network embeds each token beside the global row, runs a small transformer over the
tokens, pools them and reads a value in points for the seat to move. ``training.last_round``
fits it to a search's values of the last round's moves (``scopa last-round``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Self

import numpy as np
import torch
from torch import nn

from agents.base import check_action
from agents.deal_value import position
from agents.policy import SHIPPED_POLICY
from agents.seats import SeatView
from scopa_env.cards import CAPTURE_VALUE, COINS_MASK, NUM_CARDS, SETTEBELLO
from scopa_env.engine import Deal, MaskMove
from scopa_env.errors import CheckpointError, CheckpointNotFoundError, PlayerError
from scopa_env.info_state import InfoState
from scopa_env.observation import OBS_SIZE
from scopa_env.players import Observation
from scopa_env.rules import Rules, resolve_rules
from scopa_env.scoring import BEST_PRIMIERA

#: The network the project ships (``scopa last-round`` writes one; its README has the recipe).
SHIPPED = Path(__file__).resolve().parent / "pretrained_last_round" / "last_round.pt"
#: What a saved network's ``format`` entry says.
FORMAT = "scopa-env last-round value 1"
TOKEN_FEATURES = 18
GLOBAL_FEATURES = 322
#: The primiera values, lowest first: a suit's best card buckets to its index plus one.
_PRIMIERA_VALUES = sorted({BEST_PRIMIERA[1 << rank] for rank in range(10)})
PRIMIERA_BUCKET = np.array(
    [0 if bits == 0 else _PRIMIERA_VALUES.index(BEST_PRIMIERA[bits]) + 1 for bits in range(1024)]
)
_BEST = np.array(BEST_PRIMIERA, np.float32)
_RANK = CAPTURE_VALUE.astype(np.int64) - 1
_CARD_PRIMIERA = np.array([BEST_PRIMIERA[1 << (c % 10)] for c in range(NUM_CARDS)], np.float32)


def card_bits(masks: np.ndarray) -> np.ndarray:
    """``(N, 40)`` 0/1 of ``(N,)`` card masks."""
    return (masks[:, None] >> np.arange(NUM_CARDS, dtype=np.int64)) & 1


def _count(masks: np.ndarray) -> np.ndarray:
    """``(N,)`` cards in each of ``(N,)`` card masks."""
    return card_bits(masks).sum(axis=1)


def suit_bits(masks: np.ndarray) -> np.ndarray:
    """``(N, 4 K)`` the ten bits of each suit of ``(N, K)`` card masks, suit by suit."""
    return ((masks[:, :, None] >> (10 * np.arange(4))) & 0x3FF).reshape(len(masks), -1)


def one_hot(out: np.ndarray, starts: np.ndarray | list[int], index: np.ndarray, size: int) -> None:
    """Set ``out[i, starts[j] + index[i, j]]`` (``index`` clipped to ``size``) for every
    ``(N, J)`` index: ``J`` one-hot blocks of ``size`` at once."""
    where = np.asarray(starts) + np.clip(index, 0, size - 1)
    out[np.arange(len(index))[:, None], where] = 1.0


def encode(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tokens ``(N, T, TOKEN_FEATURES)`` (zero past each row's count), their counts
    ``(N,)`` and the global rows ``(N, GLOBAL_FEATURES)`` of ``(N, POSITION_FIELDS)`` position
    rows (``agents.deal_value.position``)."""
    rows = np.atleast_2d(np.asarray(rows, np.int64))
    n = len(rows)
    mine_hand, other_hand, table, mine, other = (rows[:, i] for i in range(5))
    where = np.stack(
        [card_bits(mine_hand), card_bits(other_hand), card_bits(table)], axis=1
    )  # (N, 3, 40)
    in_play = where.any(axis=1)
    counts = in_play.sum(axis=1)
    tokens = np.zeros((n, max(int(counts.max(initial=0)), 1), TOKEN_FEATURES), np.float32)
    row, card = np.nonzero(in_play)
    slot = np.arange(len(row)) - np.searchsorted(row, row)  # the card's place in its row
    tokens[row, slot, 0:3] = where[row, :, card]
    tokens[row, slot, 3 + _RANK[card]] = 1.0
    tokens[row, slot, 13 + card // 10] = 1.0
    tokens[row, slot, 17] = _CARD_PRIMIERA[card] / 21.0

    g = np.zeros((n, GLOBAL_FEATURES), np.float32)
    piles = rows[:, 3:5].ravel()  # my pile and the other's, row by row
    one_hot(g, [0, 41], _count(piles).reshape(n, 2), 41)
    one_hot(g, [82, 93], _count(piles & COINS_MASK).reshape(n, 2), 11)
    suits = suit_bits(rows[:, [3, 4, 0, 1, 2]])  # (N, 20): my pile's suits, the other's, ...
    one_hot(g, 104 + 9 * np.arange(20), PRIMIERA_BUCKET[suits], 9)
    scope_mine, scope_other, last = rows[:, 5], rows[:, 6], rows[:, 7]
    one_hot(g, [284], (scope_mine - scope_other + 4)[:, None], 9)
    for k, masks in enumerate((mine, other, mine_hand | other_hand | table)):
        at = 293 + 7 * k
        g[:, at] = _count(masks) / 40.0
        g[:, at + 1] = _count(masks & COINS_MASK) / 10.0
        g[:, at + 2] = masks >> SETTEBELLO & 1
        g[:, at + 3 : at + 7] = _BEST[suit_bits(masks[:, None])] / 21.0
    g[:, 314] = (scope_mine - scope_other) / 4.0
    g[:, 315] = scope_mine / 4.0
    g[:, 316] = scope_other / 4.0
    one_hot(g, [317], last[:, None], 3)
    g[:, 320] = _count(mine_hand) / 3.0
    g[:, 321] = _count(other_hand) / 3.0
    return tokens, counts, g


class LastRoundValue(nn.Module):
    """The network: a position's final point difference for the seat to move (module doc).

    Args:
        width: the width of every token and of the global row's embedding.
        layers: transformer layers over the tokens; 0: none, each card token is read alone
            (its embedding plus the global row's, through a ReLU) before the pooling, a far
            cheaper network (a Deep Sets one).
        heads: attention heads of each layer (dividing ``width``).
        rules: the rules the values were learnt under; a player refuses others.
    """

    #: What a saved network's ``format`` entry says.
    FORMAT = FORMAT
    #: The network ``load_for`` loads when given no path, if the project ships one.
    SHIPPED: Path | None = SHIPPED
    WHAT = "last-round network"

    def __init__(
        self, width: int = 64, layers: int = 2, heads: int = 4, rules: Rules | None = None
    ) -> None:
        super().__init__()
        if width < 1 or layers < 0 or heads < 1 or width % heads:
            raise ValueError(
                f"{type(self).__name__} needs positive width and heads, heads dividing width, "
                f"and layers >= 0; got width={width}, layers={layers}, heads={heads}"
            )
        self.width, self.layers, self.heads = width, layers, heads
        self.rules = rules or Rules()
        self.global_in = nn.Sequential(nn.Linear(GLOBAL_FEATURES, width), nn.ReLU())
        self.token_in = nn.Linear(TOKEN_FEATURES, width)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True)
        self.encoder = (
            nn.TransformerEncoder(layer, layers, enable_nested_tensor=False) if layers else None
        )
        self.head = nn.Sequential(nn.Linear(3 * width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(
        self, tokens: torch.Tensor, counts: torch.Tensor, globals_: torch.Tensor
    ) -> torch.Tensor:
        """``(N,)`` values of encoded positions, each with at least one token."""
        g = self.global_in(globals_)
        pad = torch.arange(tokens.shape[1], device=tokens.device)[None, :] >= counts[:, None]
        h = self.token_in(tokens) + g[:, None, :]
        # Without attention (layers=0) each card is read alone, then pooled.
        h = torch.relu(h) if self.encoder is None else self.encoder(h, src_key_padding_mask=pad)
        mean = h.masked_fill(pad[..., None], 0.0).sum(1) / counts.clamp(min=1)[:, None]
        top = h.masked_fill(pad[..., None], float("-inf")).amax(1)
        return self.head(torch.cat([g, mean, top], dim=1)).squeeze(1)

    def of_rows(self, rows: np.ndarray) -> torch.Tensor:
        """``(N,)`` values of position rows of deals in play, in points for the seat to move
        (``encode``d here; differentiable, as ``training.last_round`` fits them)."""
        tokens, counts, g = encode(rows)
        return self(torch.from_numpy(tokens), torch.from_numpy(counts), torch.from_numpy(g))

    def afterstate_values(self, rows: np.ndarray) -> torch.Tensor:
        """``(N,)`` values of the afterstates ``rows`` for the seat that moved into them: the
        other seat is to move in a last-round row, so its value negated."""
        return -self.of_rows(rows)

    @torch.no_grad()
    def values(self, rows: np.ndarray) -> np.ndarray:
        """``of_rows`` in evaluation mode, as numpy."""
        if self.training:  # switching a whole network costs more than a small batch's values
            self.eval()
        return self.of_rows(rows).numpy()

    def options(self) -> dict[str, Any]:
        """The constructor's arguments beyond the shape and the rules, saved with the weights."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """What ``load`` reads back: the shape, the rules, ``options`` and the weights."""
        return {
            "format": self.FORMAT,
            "width": self.width,
            "layers": self.layers,
            "heads": self.heads,
            "rules": self.rules.to_dict(),
            "options": self.options(),
            "state_dict": self.state_dict(),
        }

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """A network saved by ``training.last_round`` (``torch.save`` of ``to_dict``)."""
        return cls.from_dict(read_saved(path, cls.WHAT), path)

    @classmethod
    def from_dict(cls, saved: Any, source: str | Path) -> Self:
        """The network ``to_dict`` gave, read from ``source`` (named in the errors)."""
        what = cls.WHAT
        if not isinstance(saved, dict) or saved.get("format") != cls.FORMAT:
            raise CheckpointError(f"{source} is not a {what} (no {cls.FORMAT!r} format)")
        try:
            net = cls(
                saved["width"],
                saved["layers"],
                saved["heads"],
                Rules(**saved["rules"]),
                **saved.get("options", {}),
            )
            net.load_state_dict(saved["state_dict"])
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            detail = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise CheckpointError(f"{source}: a broken {what} ({detail})") from None
        return net.eval()

    @classmethod
    def load_for(cls, path: str | Path | None, rules: Rules) -> Self:
        """``load`` (the shipped network where ``path`` is ``None``), refused by a player of
        other rules than the network learnt (the target score aside)."""
        if path is None:
            if cls.SHIPPED is None:
                raise PlayerError(f"no {cls.WHAT} is shipped: give the path of one")
            path = cls.SHIPPED
        net = cls.load(path)
        refuse_other_rules(net.rules, rules, cls.WHAT)
        return net


def refuse_other_rules(learnt: Rules, rules: Rules, what: str) -> None:
    """Refuse a network for a game of other rules than it learnt (the target score aside)."""
    if dataclasses.replace(learnt, target=rules.target) != rules:
        raise PlayerError(f"the {what} learnt {learnt}; the game plays {rules}")


def read_saved(path: str | Path, what: str) -> Any:
    """What ``torch.save`` wrote at ``path``, tensors and plain data only; ``what`` names the
    network expected in the errors."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointNotFoundError(f"no {what} at {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises whatever its zip or pickle reader raised
        raise CheckpointError(f"{path} is not a {what} ({type(error).__name__})") from None


def in_last_round(info: InfoState, vector: np.ndarray) -> bool:
    """Whether a decision is in the last round of a two-player deal: the stock is empty, so
    the unseen cards are the other hand."""
    return vector.shape[-1] == OBS_SIZE and info.stock_size == 0


def afterstates(deal: Deal, moves: list[MaskMove]) -> list[Deal]:
    """The positions the moves leave, the deal's seat to move having played each."""
    children = []
    for card, capture in moves:
        child = deal.copy()
        child.play_unchecked(card, capture)
        children.append(child)
    return children


def move_values(net: LastRoundValue, deal: Deal, moves: list[MaskMove]) -> np.ndarray:
    """Each move's value in points for the seat to move in ``deal``: exact for a move that
    ends the deal, the network's (negated, the other seat moving next) for the others."""
    children = afterstates(deal, moves)
    out = np.empty(len(moves))
    live = []
    for i, child in enumerate(children):
        if child.is_over:
            out[i] = final_value(child, deal.current_player)
        else:
            live.append(i)
    if live:
        out[live] = -net.values(np.array([position(children[i]) for i in live], np.int64))
    return out


def play_last_round(
    net: LastRoundValue, rules: Rules, observation: Observation, vector: np.ndarray, info: InfoState
) -> int:
    """The action of a last-round decision: the move ``move_values`` values most."""
    moves = info.legal_moves(rules)
    if len(moves) == 1:
        return info.action(moves[0])
    deal = SeatView.from_info(info, vector).position(rules)
    action = info.action(moves[int(np.argmax(move_values(net, deal, moves)))])
    check_action(observation, action, rules)
    return action


def final_value(deal: Deal, me: int) -> float:
    """The exact point difference of a finished two-player deal for seat ``me``."""
    points = [side.total for side in deal.score()]
    return float(points[me] - points[1 - me])


class LastRoundAgent:
    """Plays the last round of a two-player deal by ``LastRoundValue`` and every earlier
    decision by ``base`` (module doc).

    Args:
        rules: the rules (a ``Rules``, preset name or option dict); the network's must match.
        seed: passed to the base player.
        base: the player of the decisions before the last round: a ``make_agent`` name or a
            checkpoint's path (the shipped policy network, ``pretrained_v5``, by default).
        value: the path of a ``LastRoundValue`` (``scopa last-round``); the shipped one by
            default.
        torch_threads: torch's threads (set for the whole process; one, as the harness runs
            every network player; with torch's default, ``scopa eval --workers 2`` hung in
            its forked workers).
    """

    name = "last_round"

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        base: str = SHIPPED_POLICY,
        value: str | None = None,
        torch_threads: int = 1,
    ) -> None:
        from agents import make_agent  # the registry imports this module

        torch.set_num_threads(torch_threads)
        self.rules = resolve_rules(rules)
        self.net = LastRoundValue.load_for(value, self.rules)
        self.base = make_agent(base, rules=self.rules, seed=seed)

    def reset(self, seed: int | None = None) -> None:
        reset = getattr(self.base, "reset", None)
        if reset is not None:
            reset(seed=seed)

    def act(self, observation: Observation) -> int:
        vector = np.asarray(observation["observation"], np.float32)
        info = InfoState.from_observation(vector)
        if not in_last_round(info, vector):
            return int(self.base.act(observation))
        return play_last_round(self.net, self.rules, observation, vector, info)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row: the base player's batch for the rows before the last round."""
        actions = np.empty(len(masks), np.int64)
        infos = [InfoState.from_observation(obs) for obs in observations]
        last = np.array([in_last_round(i, o) for i, o in zip(infos, observations, strict=True)])
        if (~last).any():
            early = np.flatnonzero(~last)
            batch = getattr(self.base, "act_batch", None)
            if batch is not None:
                actions[early] = batch(observations[early], masks[early])
            else:
                for i in early:
                    actions[i] = self.base.act(_row(observations, masks, i))
        for i in np.flatnonzero(last):
            observation = _row(observations, masks, i)
            actions[i] = play_last_round(
                self.net, self.rules, observation, observations[i], infos[i]
            )
        return actions

    def __repr__(self) -> str:
        return f"LastRoundAgent(base={self.base!r}, rules={self.rules})"


def _row(observations: np.ndarray, masks: np.ndarray, i: Any) -> Observation:
    return {"observation": observations[i], "action_mask": masks[i]}
