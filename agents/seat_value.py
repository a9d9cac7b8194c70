"""The decisions before the last round of a two-player deal, played by a network that values the
position each move leaves as the mover sees it.

Before the stock runs out the other hand is hidden: it and the stock are drawn from the cards
the mover has not seen. ``SeatValue`` values an *afterstate* from the mover's side: its hand
after the move, the table, both piles, the scope count, the last capture and, in place of the
other hand, the cards it has not seen. It is ``agents.last_round.LastRoundValue``'s network
with a wider row of scores at stake. ``SeatValueAgent`` plays each decision before the last
round by the move whose afterstate the network values most for it, every move valued in one
forward pass and no reply searched, and the last round as ``last_round`` does.

The features (``encode``) of a row of ``seat_rows``. The tokens are ``LastRoundValue``'s, one per
card of the mover's hand or the table (the unseen cards are no tokens). The global row is
``LastRoundValue``'s of the position with the other hand unknown, where the features of the
other hand describe the unseen cards instead (each suit's best primiera card, indices
212-247) and the other hand's size (index 321) is the hidden hand's; then ``SEAT_FEATURES``:

| index | feature |
| --- | --- |
| 322-361 | the unseen cards, one bit each |
| 362-371 | the unseen cards of each rank / 4 |
| 372 | the stock's size / 30 |
| 373 | the other hand's size / 3 |
| 374-383 | per card value 1-10: a card of that value would capture on the table |
| 384-393 | per card value: it could capture the whole table (a scopa) |
| 394-403 | per card value: the most cards it could take / 4 |
| 404-413 | the mover's hand, cards of each rank / 3 |

A network made with ``plays`` also reads what the opponent's plays this round say about the
hand it holds (``PLAY_FEATURES``, after those): the teacher, ``alphabeta_value``, draws its
sampled deals by them (``agents.inference``), and without them the network can only learn
its values averaged over the histories it cannot see. A row then carries ``PLAY_FIELDS``
more integers, the plays as ``PlayTracker.this_round`` gives them (``play_fields``). Per card
value 1-10, counts / 3; the first two count only the plays whose hand may still hold that
value (the opponent played no card of it since):

| index | feature |
| --- | --- |
| 414-423 | trails onto a table a card of that value would have captured from |
| 424-433 | plays that did not sweep a table a card of that value would have swept |
| 434-443 | the opponent's cards of that value played this round |
| 444 | the opponent's plays this round / 3 |
| 445 | its trails this round / 3 |

``training.seat_value`` fits the network to a search's values of the moves (``scopa
seat-value``), as ``training.last_round`` fits the last round's. ``SeatEnsemble`` averages
networks fitted apart (``scopa seat-ensemble``); the player plays one as it plays a network.
The shipped network, and how it was made, is in ``agents/pretrained_seat_value/``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self, cast

import numpy as np
import torch
from torch import nn

from agents.base import check_action
from agents.inference import OpponentPlay, PlayTracker
from agents.last_round import (
    GLOBAL_FEATURES,
    PRIMIERA_BUCKET,
    LastRoundValue,
    card_bits,
    in_last_round,
    one_hot,
    play_last_round,
    read_saved,
    refuse_other_rules,
    suit_bits,
)
from agents.last_round import encode as encode_last_round
from agents.seats import SeatView
from scopa_env.captures import capture_table
from scopa_env.cards import CAPTURE_VALUE
from scopa_env.engine import Deal, MaskMove
from scopa_env.errors import CheckpointError
from scopa_env.info_state import InfoState
from scopa_env.observation import OBS_SIZE
from scopa_env.players import Observation, check_seats
from scopa_env.rules import Rules, resolve_rules

SEAT_FEATURES = 92
PLAY_FEATURES = 32
#: The fields of ``afterstate_row``'s row; ``seat_rows`` adds ``PLAY_FIELDS``.
SEAT_FIELDS = 10
PLAY_FIELDS = 3
#: ``play_fields`` of a decision whose plays this round are not known (or none was made).
NO_PLAYS = (0,) * PLAY_FIELDS
SHIPPED = Path(__file__).resolve().parent / "pretrained_seat_value" / "seat_value.pt"
#: The shipped networks by the names ``network=`` takes: ``ensemble`` is three networks fitted
#: apart (``agents/pretrained_seat_value/README.md``).
SHIPPED_NETWORKS = {"single": SHIPPED, "ensemble": SHIPPED.with_name("ensemble.pt")}
_OTHER_HAND = 3  # the other hand's place among the piles and hands of ``LastRoundValue``'s row


class SeatValue(LastRoundValue):
    """The network: the point difference a deal ends with for the seat that made a move, read
    from the position that move leaves as that seat sees it (module doc).

    Args: as ``LastRoundValue``'s; ``rules`` also decide what each card value would capture.
        plays: read the opponent's plays this round too (module doc).
    """

    FORMAT = "scopa-env seat value 1"
    SHIPPED = SHIPPED
    WHAT = "seat-value network"

    def __init__(
        self,
        width: int = 128,
        layers: int = 2,
        heads: int = 4,
        rules: Rules | None = None,
        plays: bool = False,
    ) -> None:
        super().__init__(width, layers, heads, rules)
        self.plays = bool(plays)
        features = GLOBAL_FEATURES + SEAT_FEATURES + (PLAY_FEATURES if plays else 0)
        self.global_in = nn.Sequential(nn.Linear(features, width), nn.ReLU())
        self._threats = _threats(self.rules)
        self._play_features = _play_features(self._threats)

    def options(self) -> dict[str, Any]:
        return {"plays": self.plays}

    def of_rows(self, rows: np.ndarray) -> torch.Tensor:
        """``(N,)`` values of ``seat_rows`` rows, in points for the seat that moved."""
        return self(*self.inputs(rows))

    def inputs(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``forward``'s tensors for ``seat_rows`` rows: the same for every network of the same
        rules and ``plays``."""
        tokens, counts, g = encode(rows, self._threats)
        if self.plays:
            rows = np.atleast_2d(np.asarray(rows, np.int64))
            if rows.shape[1] < SEAT_FIELDS + PLAY_FIELDS:
                raise ValueError(
                    f"this network reads the opponent's plays: rows of {SEAT_FIELDS + PLAY_FIELDS} "
                    f"fields (seat_rows), not {rows.shape[1]}"
                )
            plays = rows[:, SEAT_FIELDS : SEAT_FIELDS + PLAY_FIELDS]
            g = np.concatenate(
                [g, np.stack([self._play_features(*map(int, p)) for p in plays])], axis=1
            )
        return torch.from_numpy(tokens), torch.from_numpy(counts), torch.from_numpy(g)

    def afterstate_values(self, rows: np.ndarray) -> torch.Tensor:
        return self.of_rows(rows)


class SeatEnsemble(nn.Module):
    """Seat networks fitted apart whose values of a row are averaged. Networks fitted from
    different starts err on different decisions, so their mean gives up less than any of them
    (``docs/strength.md``). Every member values a batch in the same call, those of the same
    ``plays`` from one encoding of the rows: a decision stays one forward pass, of a wider
    network.

    Args:
        members: the networks, of one rules; ``plays`` if any reads the plays.
    """

    FORMAT = "scopa-env seat value ensemble 1"

    def __init__(self, members: Sequence[SeatValue]) -> None:
        super().__init__()
        if not members:
            raise ValueError("a seat ensemble needs at least one network")
        rules = {member.rules for member in members}
        if len(rules) > 1:
            raise ValueError(
                f"a seat ensemble's networks learnt other rules: {sorted(map(str, rules))}"
            )
        self.members = nn.ModuleList(members)
        self.rules = members[0].rules
        self.plays = any(member.plays for member in members)

    @property
    def networks(self) -> list[SeatValue]:
        """The members, in order."""
        return [cast(SeatValue, member) for member in self.members]

    @property
    def width(self) -> int:
        """The widths of the members together."""
        return sum(member.width for member in self.networks)

    def of_rows(self, rows: np.ndarray) -> torch.Tensor:
        """``(N,)`` the members' mean value of ``seat_rows`` rows."""
        inputs: dict[bool, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        values = []
        for member in self.networks:
            if member.plays not in inputs:
                inputs[member.plays] = member.inputs(rows)
            values.append(member(*inputs[member.plays]))
        return torch.stack(values).mean(0)

    def afterstate_values(self, rows: np.ndarray) -> torch.Tensor:
        return self.of_rows(rows)

    @torch.no_grad()
    def values(self, rows: np.ndarray) -> np.ndarray:
        """``of_rows`` in evaluation mode, as numpy."""
        if self.training:  # switching a whole network costs more than a small batch's values
            self.eval()
        return self.of_rows(rows).numpy()

    def to_dict(self) -> dict[str, Any]:
        """What ``load_seat_network`` reads back: each member's ``to_dict``."""
        return {"format": self.FORMAT, "members": [m.to_dict() for m in self.networks]}

    @classmethod
    def from_dict(cls, saved: Any, source: str | Path) -> Self:
        """The ensemble ``to_dict`` gave, read from ``source`` (named in the errors)."""
        members = saved.get("members") if isinstance(saved, dict) else None
        if not isinstance(members, list) or not members or saved.get("format") != cls.FORMAT:
            raise CheckpointError(f"{source} is not a seat ensemble (no members)")
        nets = [SeatValue.from_dict(m, f"{source}, network {i}") for i, m in enumerate(members)]
        try:
            return cls(nets).eval()
        except ValueError as error:
            raise CheckpointError(f"{source}: {error}") from None


def seat_network_path(network: str | Path | None) -> Path:
    """The file of a seat network given by path or by shipped name (``SHIPPED_NETWORKS``;
    ``single`` where it is ``None``)."""
    return SHIPPED if network is None else Path(SHIPPED_NETWORKS.get(str(network), network))


def load_seat_network(path: str | Path | None, rules: Rules) -> SeatValue | SeatEnsemble:
    """The ``SeatValue`` or ``SeatEnsemble`` saved at ``path``, or shipped by that name
    (``seat_network_path``), refused by a player of other rules than it learnt."""
    path = seat_network_path(path)
    saved = read_saved(path, SeatValue.WHAT)
    if isinstance(saved, dict) and saved.get("format") == SeatEnsemble.FORMAT:
        net: SeatValue | SeatEnsemble = SeatEnsemble.from_dict(saved, path)
    else:
        net = SeatValue.from_dict(saved, path)
    refuse_other_rules(net.rules, rules, SeatValue.WHAT)
    return net


def _threats(rules: Rules) -> Callable[[int], np.ndarray]:
    """A memoised ``table -> (30,)``: per card value, whether it captures, whether it sweeps
    the table and the most cards it takes / 4, under ``rules``."""
    captures = capture_table(rules)

    @functools.lru_cache(maxsize=1 << 16)
    def threats(table: int) -> np.ndarray:
        out = np.zeros(30, np.float32)
        for value in range(1, 11):
            options = captures(table, value)
            if options:
                out[value - 1] = 1.0
                out[10 + value - 1] = float(table in options)
                out[20 + value - 1] = max(o.bit_count() for o in options) / 4.0
        return out

    return threats


def play_fields(plays: Sequence[OpponentPlay]) -> tuple[int, ...]:
    """The opponent's plays this round (``PlayTracker.this_round``: most recent first) as
    ``PLAY_FIELDS`` integers, each ``1 | trail << 1 | sweep << 2 | card << 3 | table << 9`` with
    the table it played on, 0 where there is none."""
    fields = list(NO_PLAYS)
    for k, play in enumerate(plays[:PLAY_FIELDS]):
        trail, sweep = play.capture == 0, play.capture != 0 and play.capture == play.table
        fields[k] = 1 | trail << 1 | sweep << 2 | play.card << 3 | play.table << 9
    return tuple(fields)


def _play_features(threats: Callable[[int], np.ndarray]) -> Callable[..., np.ndarray]:
    """A memoised ``(*play fields) -> (PLAY_FEATURES,)`` (module doc)."""

    @functools.lru_cache(maxsize=1 << 16)
    def features(*fields: int) -> np.ndarray:
        out = np.zeros(PLAY_FEATURES, np.float32)
        played_since = np.zeros(10, bool)  # values the opponent played after the play read
        for field in fields:
            if not field & 1:
                break
            trail, sweep, card, table = field >> 1 & 1, field >> 2 & 1, field >> 3 & 63, field >> 9
            held = ~played_since
            threat = threats(table)
            if trail:
                out[0:10] += (threat[0:10] > 0) & held
            if not sweep:
                out[10:20] += (threat[10:20] > 0) & held
            value = int(CAPTURE_VALUE[card])
            out[20 + value - 1] += 1
            out[30] += 1
            out[31] += trail
            played_since[value - 1] = True
        return out / 3.0

    return features


def encode(
    rows: np.ndarray, threats: Callable[[int], np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tokens, their counts and the global rows of ``(N, SEAT_FIELDS)`` rows (module doc);
    ``threats`` is a ``SeatValue``'s table of what each card value captures."""
    rows = np.atleast_2d(np.asarray(rows, np.int64))
    hand, unseen, table = rows[:, 0], rows[:, 1], rows[:, 2]
    known = rows[:, :8].copy()
    known[:, 1] = 0  # the other hand is not known: no tokens, no cards of it
    tokens, counts, g = encode_last_round(known)
    start = 104 + 9 * 4 * _OTHER_HAND  # the other hand's suits read as the unseen cards'
    g[:, start : start + 36] = 0.0
    one_hot(g, start + 9 * np.arange(4), PRIMIERA_BUCKET[suit_bits(unseen[:, None])], 9)
    g[:, 321] = rows[:, 9] / 3.0
    unseen_bits = card_bits(unseen).astype(np.float32)
    seat = np.concatenate(
        [
            unseen_bits,
            unseen_bits.reshape(-1, 4, 10).sum(axis=1) / 4.0,
            rows[:, 8:9] / 30.0,
            rows[:, 9:10] / 3.0,
            np.stack([threats(int(t)) for t in table]).reshape(len(rows), 30),
            card_bits(hand).reshape(-1, 4, 10).sum(axis=1) / 3.0,
        ],
        axis=1,
    )
    return tokens, counts, np.concatenate([g, seat], axis=1).astype(np.float32)


def seat_rows(
    info: InfoState,
    vector: np.ndarray,
    rules: Rules,
    plays: tuple[int, ...] = NO_PLAYS,
) -> tuple[list[MaskMove], list[tuple[int, ...]]]:
    """The legal moves of a two-player decision and, for each, the row of the position it
    leaves as the mover sees it (``afterstate_row``) followed by ``plays``, the opponent's
    plays this round (``play_fields``; unknown by default)."""
    deal = SeatView.from_info(info, vector).position(rules)  # the mover in seat 0
    moves = info.legal_moves(rules)
    return moves, [afterstate_row(deal, card, capture)[0] + plays for card, capture in moves]


def afterstate_row(deal: Deal, card: int, capture: int) -> tuple[tuple[int, ...], Deal]:
    """The ``SEAT_FIELDS`` row of the position a move of the seat to move leaves, as that seat
    sees it, and the deal after the move: its hand after the move, the cards it has not seen
    (the other hand and the stock), the table, its pile, the other's, its scope, the other's,
    the last capture (0 nobody's, 1 its, 2 the other's), the stock's size and the other
    hand's. Hands and stock are read before a new round is dealt: what the move leaves."""
    before = deal.view()
    hands, stock, seat = before[0], before[4], deal.current_player
    hand, other_hand = hands[seat] & ~(1 << card), hands[1 - seat].bit_count()
    child = deal.copy()
    child.play_unchecked(card, capture)
    _, table, piles, _, _, scope, last, _, live = child.view()
    last_code = 0 if last is None else 1 if last == seat else 2
    row = (
        hand, live & ~hand, table, piles[seat], piles[1 - seat],
        scope[seat], scope[1 - seat], last_code, stock, other_hand,
    )  # fmt: skip
    return row, child


class SeatValueAgent:
    """Plays the decisions before the last round of a two-player deal by ``SeatValue`` and the
    last round by ``LastRoundValue`` (module doc).

    Args:
        rules: the rules (a ``Rules``, preset name or option dict); the networks' must match.
        seed: seeds the seeds ``per_game`` gives ``fork``s; the player is deterministic.
        network: the path of a ``SeatValue`` (``scopa seat-value`` writes one) or of a
            ``SeatEnsemble`` (``scopa seat-ensemble``), or the name of a shipped one
            (``agents/pretrained_seat_value/``): ``single`` (the default) or ``ensemble``, the
            stronger (``docs/strength.md``).
        value: the path of the last round's ``LastRoundValue``; the shipped one by default.
        torch_threads: torch's threads, for the whole process (as ``last_round``'s).
    """

    name = "seat_value"
    two_player_only = "its networks read two-player positions"

    def __init__(
        self,
        rules: Rules | str | None = None,
        seed: int | None = None,
        network: str | None = None,
        value: str | None = None,
        torch_threads: int = 1,
    ) -> None:
        torch.set_num_threads(torch_threads)
        self.rules = resolve_rules(rules)
        self.path = seat_network_path(network)  # the file the ladder's journals fingerprint
        self.net = load_seat_network(self.path, self.rules)
        self.last_round = LastRoundValue.load_for(value, self.rules)
        self.tracker = PlayTracker()
        self.rng = np.random.default_rng(seed)  # seeds for ``fork``s (``per_game``)

    def reset(self, seed: int | None = None) -> None:
        """Forget the deal followed (the opponent's plays); nothing else is remembered."""
        self.tracker.reset()

    @property
    def follows_deal(self) -> bool:
        """Whether a choice depends on the deal's earlier observations (a network that reads
        the opponent's plays), so that a batch of games needs one ``fork`` a game."""
        return self.net.plays

    def fork(self, seed: int | None = None) -> Self:
        """A copy sharing the networks that follows a deal of its own."""
        twin = copy.copy(self)
        twin.tracker = PlayTracker()
        return twin

    def act(self, observation: Observation) -> int:
        vector = np.asarray(observation["observation"], np.float32)
        mask = np.asarray(observation["action_mask"])
        plays = NO_PLAYS
        if self.net.plays and vector.shape == (OBS_SIZE,):
            info = InfoState.from_observation(vector)
            self.tracker.observe(info)
            plays = play_fields(self.tracker.this_round(info))
        return int(self.choose(vector[None], mask[None], [plays])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One action per row, each row a game of its own: the opponent's plays are not known
        (``act`` follows them), and the moves of every row before the last round are valued in
        one forward pass."""
        return self.choose(observations, masks, [NO_PLAYS] * len(masks))

    def choose(
        self, observations: np.ndarray, masks: np.ndarray, plays: list[tuple[int, ...]]
    ) -> np.ndarray:
        """``act_batch`` with each row's ``play_fields``."""
        observations = np.asarray(observations, np.float32)
        if observations.shape[-1] != OBS_SIZE:  # another layout: a table of more seats
            check_seats(self, InfoState.from_observation(observations[0]).seats)
        actions = np.empty(len(masks), np.int64)
        rows: list[tuple[int, ...]] = []
        choices: list[tuple[int, list[int], int, Callable[[np.ndarray], np.ndarray]]] = []
        for i, vector in enumerate(observations):
            observation = {"observation": vector, "action_mask": masks[i]}
            info = InfoState.from_observation(vector)
            if in_last_round(info, vector):
                actions[i] = play_last_round(self.last_round, self.rules, observation, vector, info)
                continue
            moves, afterstates = seat_rows(info, vector, self.rules, plays[i])
            if len(moves) == 1:
                actions[i] = info.action(moves[0])
                continue
            valued, move_values = self.rows_to_value(info, vector, moves, afterstates)
            choices.append((i, [info.action(move) for move in moves], len(valued), move_values))
            rows.extend(valued)
        if choices:
            values = self.net.values(np.array(rows, np.int64))
            start = 0
            for i, options, n, move_values in choices:
                actions[i] = options[int(np.argmax(move_values(values[start : start + n])))]
                start += n
                check_action(
                    {"observation": observations[i], "action_mask": masks[i]},
                    actions[i],
                    self.rules,
                )
        return actions

    def rows_to_value(
        self,
        info: InfoState,
        vector: np.ndarray,
        moves: list[MaskMove],
        afterstates: list[tuple[int, ...]],
    ) -> tuple[list[tuple[int, ...]], Callable[[np.ndarray], np.ndarray]]:
        """The rows the network values for a decision with a choice, and how their values
        make each move's: here each move's afterstate, valued as it is."""
        return afterstates, _as_they_are

    def __repr__(self) -> str:
        return f"{type(self).__name__}(width={self.net.width}, rules={self.rules})"


class PretrainedAgent(SeatValueAgent):
    """The shipped agent, ``make_agent("pretrained")``: ``seat_value`` with the shipped ensemble
    (``network=ensemble``) and the shipped last-round network, one batched forward pass of its
    networks a decision and no search (``agents/pretrained/README.md``: its figures and
    recipe). The policy networks it replaced stay by name: ``pretrained_v5`` and
    ``pretrained_v4`` (``agents.policy``).

    Args: ``rules``, ``seed`` and ``torch_threads`` as ``SeatValueAgent``'s.
    """

    name = "pretrained"

    def __init__(
        self, rules: Rules | str | None = None, seed: int | None = None, torch_threads: int = 1
    ) -> None:
        super().__init__(rules, seed, network="ensemble", torch_threads=torch_threads)


def _as_they_are(values: np.ndarray) -> np.ndarray:
    return values
