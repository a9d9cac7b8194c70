"""Scopa and Scopone at every table as an OpenSpiel game, ``python_scopa``.

Importing this module registers the game with ``pyspiel``::

    import pyspiel
    import scopa_env.integrations.openspiel  # noqa: F401  (registers python_scopa)

    game = pyspiel.load_game("python_scopa(table=scopone)")
    game = pyspiel.load_game("python_scopa(table=scopa_3)")
    game = pyspiel.load_game("python_scopa", {"preset": "napola", "target": 21})

The rules are the engine's (``scopa_env.engine.Deal``): this module only translates between
OpenSpiel's state API and the engine, so every capture and scoring rule has one implementation.

Parameters
----------

``table``
    a table of ``scopa_env.tables.TABLES`` (RULES.md section 8): ``scopa`` (two players),
    ``scopa_3`` (three, each for themselves), ``scopa_4`` and ``scopa_6`` (two partnerships),
    ``scopone`` and ``scopone_scientifico`` (four in two partnerships); default ``"scopa"``.
    Seat ``s`` plays for side ``s % sides``.
``preset``
    a rules preset (``scopa_env.rules.PRESETS``); default ``"scopa"``.
every field of ``scopa_env.rules.Rules``
    ``target``, ``redeal_three_kings``, ``fewest_cards_capture``, ``last_play_scopa``,
    ``ace_takes_all``, ``ace_sweep_scopa``, ``capture_sum``, ``napola``, ``re_bello``. An option
    left at its classic default keeps the preset's value (OpenSpiel fills in every default, so
    the game cannot tell an option that was left out from one set to its default). An option
    whose default is ``None`` (``capture_sum``) is an integer here, with 0 for ``None``.
``first_player``
    the seat that leads the deal; default 0. The dealer is the seat before it.

The game
--------

One episode is **one deal**. Each player's utility is its side's points in the deal minus the
mean of the other sides' points, the environments' ``reward="points"``
(``scopa_env.capture_env.side_rewards`` of ``Deal.score()``): the utilities sum to zero,
partners receive the same, and with two sides it is the point difference. ``max_utility`` is
the points of a side that takes every card and scores a scopa with each of its plays;
``min_utility`` that of a side that scores nothing while the others share every card's points
and a scopa with each of their plays (with two sides, ``-max_utility``; ``scopa_3``: 16 and
-14). The match to the target is not modelled; ``target`` only feeds the observation.

The shuffle is explicit chance: the first 40 nodes each put one card into the next position of
the deck order (40 outcomes, then 39, ... 1: 40! chance paths), and the completed order is dealt
by ``Deal.from_deck``. Under ``redeal_three_kings`` a deck whose table the engine would deal
again (``needs_redeal``) is never drawn: each chance node gives every card its exact
probability under the uniform distribution over the decks that need no redeal, which is what
``Deal.new``'s reshuffling draws from.

Actions are those of the environments (``scopa_env.actions``, 80): ``c`` plays card ``c``; when
that card has several legal captures the same player then takes table cards one at a time with
actions ``PICK_OFFSET + c`` (40 + c) until the capture is determined. Every player action is
public (cards are played face up and the cards taken are seen).

Observations
------------

The observation tensor is the vector of the table's environment (``make_aec(table)``, the match
score 0): ``scopa_env.observation`` for ``scopa``, ``scopa_env.scopone_observation`` for the two
Scopone tables and ``scopa_env.table_observation.layout_for(table)`` for ``scopa_3``,
``scopa_4`` and ``scopa_6``. The observer's named pieces are that layout's slices, so
``state.observation_tensor(p)`` equals ``env.observe(agent)["observation"]`` of the environment
at the same position and ``InfoState.from_observation`` decodes it. The information-state tensor
adds an ``actions`` piece: one one-hot row of 80 per player action so far. Both strings name
what the player knows: the information-state string the player's cards and the table as dealt,
then every action since, then the player's hand (perfect recall); the observation string the
tensor's pieces.

``state.resample_from_infostate(player, sampler)`` deals the cards the player has not seen
uniformly at random among the deals consistent with what it has seen (its own cards, the table,
every card played and by whom, in which round), at every table, which is what OpenSpiel's
``ISMCTSBot`` needs: the Python one, ``open_spiel.python.algorithms.ismcts.ISMCTSBot``; the C++
``pyspiel.ISMCTSBot`` cannot call a Python game's resampling. Bots that search the true state,
such as ``pyspiel.MCTSBot``, play the game as it is.

``ScopaGame.new_state_at(deal)`` starts a state at any engine position, with no chance nodes:
players that know only a position (``agents.openspiel_bot``, two-player Scopa, as its
``Determinizer``) search from there.

Tested in ``tests/test_openspiel.py`` at every table: ``pyspiel.random_sim_test`` with
serialization, the checks of OpenSpiel's simulation tests on every state, the shuffle's exact
probabilities, move-for-move equality (actions, observations, utilities) with ``make_aec``,
resampling, and full games of ``ISMCTSBot`` against ``pyspiel.MCTSBot``.

Bad input raises the errors of ``scopa_env.errors``: ``TableError`` for an unknown table,
``PositionError`` for a bad ``first_player``, chance outcome or position, ``IllegalMoveError``
for an illegal action (all are ``ValueError``).

Serialization is OpenSpiel's for Python games: ``state.serialize()`` holds the action history
and the pickled state, and ``pyspiel.deserialize_game_and_state`` rebuilds both from the game
string.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from functools import cache
from math import comb
from typing import Any, NamedTuple

import numpy as np
import pyspiel

from scopa_env import observation, scopone_observation, scopone_v0
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET, describe_action
from scopa_env.capture_env import side_rewards
from scopa_env.captures import capture_table, choose_capture, pickable_cards
from scopa_env.cards import (
    ALL_CARDS_MASK,
    CAPTURE_VALUE,
    KINGS_MASK,
    NUM_CARDS,
    card_name,
    cards_of,
)
from scopa_env.engine import Deal, needs_redeal
from scopa_env.errors import EnvironmentArgumentError, IllegalMoveError, PositionError
from scopa_env.rules import Rules
from scopa_env.scoring import score_piles
from scopa_env.table_observation import layout_for
from scopa_env.tables import SCOPA, TABLES, Table, resolve_table

__all__ = ["GAME_NAME", "ScopaGame", "ScopaState", "game_parameters", "rules_from_parameters"]

GAME_NAME = "python_scopa"
#: At most one action per card played plus one per table card taken: 40 + 40.
MAX_DECISIONS = 2 * NUM_CARDS
_VALUE = [int(v) for v in CAPTURE_VALUE]
_KINGS = cards_of(KINGS_MASK)
_CLASSIC = Rules()


def _parameter(value: Any) -> Any:
    """A rule option as an OpenSpiel parameter, which cannot be ``None``."""
    return 0 if value is None else value


_PARAMETERS: dict[str, Any] = {
    "table": "scopa",
    "preset": "scopa",
    "first_player": 0,
    **{f.name: _parameter(getattr(_CLASSIC, f.name)) for f in dataclasses.fields(Rules)},
}


def rules_from_parameters(params: dict[str, Any]) -> Rules:
    """The ``Rules`` of a parameter dict: the preset, with every option changed from its
    classic default applied on top."""
    overrides = {}
    for field in dataclasses.fields(Rules):
        classic = getattr(_CLASSIC, field.name)
        value = params.get(field.name, _parameter(classic))
        if classic is None and value == 0:
            value = None
        if value != classic:
            overrides[field.name] = value
    return Rules.preset(params.get("preset", "scopa"), **overrides)


def game_parameters(rules: Rules, table: str = "scopa", first_player: int = 0) -> dict[str, Any]:
    """The parameters of the game with these rules, for ``pyspiel.load_game(GAME_NAME, ...)``."""
    options = {name: _parameter(value) for name, value in rules.to_dict().items()}
    return {"table": table, "first_player": first_player, **options}


_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Scopa and Scopone (one deal)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=max(table.players for table in TABLES.values()),
    min_num_players=min(table.players for table in TABLES.values()),
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_PARAMETERS,
)


@cache
def _owners(kind_name: str, first_player: int) -> tuple[tuple[int, int] | None, ...]:
    """Per deck position, the ``(round, seat)`` whose hand it fills, or ``None`` for the table.

    Read off the engine by dealing the identity deck (card ids are then deck positions) and
    playing it out, so the layout is the engine's whatever the deal kind.
    """
    deal = Deal.from_deck(range(NUM_CARDS), first_player, kind=kind_name)
    owners: list[tuple[int, int] | None] = [None] * NUM_CARDS
    round_ = 0
    while True:
        for seat, hand in enumerate(deal.hands):
            for position in hand:
                owners[position] = (round_, seat)
        stock = len(deal.stock)
        while not deal.is_over and len(deal.stock) == stock:
            deal.play_unchecked(*deal.legal_mask_moves()[0])
        if deal.is_over:
            return tuple(owners)
        round_ += 1


def _round(deal: Deal) -> int:
    """The round being played (0 for the first hands), from the cards left in the stock."""
    kind = deal.kind
    return kind.rounds - 1 - len(deal.stock) // kind.round_cards


_CARD_NAMES = tuple(card_name(c) for c in range(NUM_CARDS))


def _names(cards: Any) -> str:
    return " ".join([_CARD_NAMES[c] for c in cards]) or "-"


class _Layout(NamedTuple):
    """The environment's observation layout of a table."""

    #: The encoder, with the signature of ``scopa_env.observation.encode``.
    encode: Callable[..., np.ndarray]
    #: Name -> slice of the vector, and the names of the 40-card planes.
    slices: dict[str, slice]
    planes: frozenset[str]

    @property
    def size(self) -> int:
        return max(s.stop for s in self.slices.values())


@cache
def _layout(table: Table) -> _Layout:
    """The layout the environment of ``table`` observes with (``make_aec(table)``)."""
    if table == SCOPA:
        return _Layout(observation.encode, observation.OBS_SLICES, frozenset(observation.PLANES))
    if table.name in scopone_v0.DEALS:
        slices, planes = scopone_observation.OBS_SLICES, scopone_observation.PLANES
        return _Layout(scopone_v0.raw_env._encode, slices, frozenset(planes))
    layout = layout_for(table)
    return _Layout(layout.encode, layout.slices, frozenset(layout.planes))


def _utility_bounds(table: Table, rules: Rules) -> tuple[float, float]:
    """The lowest and highest utility: a side's points minus the mean of the other sides'.

    A side scores at most every card's points and a scopa with each of its plays; the other
    sides together at most every card's points and a scopa with each of theirs.
    """
    plays = table.rounds * table.round_cards // table.sides  # the cards one side plays
    cards = score_piles((ALL_CARDS_MASK, 0), (0, 0), rules)[0].total
    others = table.sides - 1
    return -(cards + others * plays) / others, float(cards + plays)


class _Setup(NamedTuple):
    """What every state of one game shares."""

    rules: Rules
    kind: Table
    first_player: int
    #: The deck positions dealt face up to the table.
    table_positions: frozenset[int]
    #: The most kings a dealt table may hold (the engine's redeal rule).
    table_kings: int


class ScopaGame(pyspiel.Game):
    """One deal of Scopa or Scopone; the module docstring documents the game."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_PARAMETERS, **(params or {})}
        kind = resolve_table(params["table"])
        rules = rules_from_parameters(params)
        first = params["first_player"]
        if not 0 <= first < kind.players:
            raise PositionError(
                f"first_player must be a seat 0..{kind.players - 1} of {kind.name}, got {first}"
            )
        low, high = _utility_bounds(kind, rules)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=kind.players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0,
            max_game_length=MAX_DECISIONS,
        )
        super().__init__(_GAME_TYPE, info, params)
        self.rules: Rules = rules
        self.kind: Table = kind
        owners = _owners(kind.name, first)
        self.setup = _Setup(
            rules,
            kind,
            first,
            frozenset(p for p, owner in enumerate(owners) if owner is None),
            max(k for k in range(len(_KINGS) + 1) if not needs_redeal(_KINGS[:k], rules)),
        )

    def new_initial_state(self) -> ScopaState:
        """The start of a deal: the chance nodes of the shuffle."""
        return ScopaState(self)

    def new_state_at(self, deal: Deal) -> ScopaState:
        """A state at an engine position (of this game's kind and rules), with no chance nodes.

        What was dealt before it is unknown to the state: resampling deals its hidden cards
        (other hands, the stock) anew.
        """
        if deal.kind != self.kind or deal.rules != self.rules:
            raise PositionError(
                f"the deal is {deal.kind.name} with {deal.rules}; the game needs "
                f"{self.kind.name} with {self.rules}"
            )
        state = ScopaState(self)
        state._pos.begin(deal.copy())
        return state

    def max_chance_nodes_in_history(self) -> int:
        return NUM_CARDS

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> ScopaObserver:
        if params:
            raise EnvironmentArgumentError(
                f"observation parameters are not supported; got {params}"
            )
        iig_obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        if not iig_obs_type.public_info or (
            iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise EnvironmentArgumentError(
                "only a player's own observation (public and private) is supported"
            )
        return ScopaObserver(self.kind, iig_obs_type.perfect_recall)


class _Position:
    """Everything a state holds, in one object that copies and pickles cheaply.

    OpenSpiel clones a Python state by deep-copying its attributes and serializes it by pickling
    them; the engine's ``Deal`` copies fast with ``Deal.copy`` and pickles through its dict.
    """

    __slots__ = (
        "setup",
        "deck",
        "root",
        "deal",
        "pending",
        "options",
        "picked",
        "history",
    )

    def __init__(self, setup: _Setup) -> None:
        self.setup = setup
        #: The deck order drawn so far; ``None`` for a state started at a position.
        self.deck: list[int] | None = []
        #: The position play started from (just dealt, or given), and the current one.
        self.root: Deal | None = None
        self.deal: Deal | None = None
        #: The capture being chosen: the card, its capture sets and the table cards picked.
        self.pending: int | None = None
        self.options: tuple[int, ...] = ()
        self.picked = 0
        #: ``(seat, action, round)`` of every player action since ``root``.
        self.history: list[tuple[int, int, int]] = []

    def begin(self, deal: Deal, deck: list[int] | None = None) -> None:
        """Start play at ``deal``, dealt from ``deck`` (``None``: a given position)."""
        self.deck = deck
        self.root = deal.copy()
        self.deal = deal

    def __deepcopy__(self, memo: dict[int, Any]) -> _Position:
        other = _Position.__new__(_Position)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        if self.deck is not None:
            other.deck = list(self.deck)
        if self.deal is not None:
            other.deal = self.deal.copy()  # the root is never changed: it is shared
        other.history = list(self.history)
        return other

    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self.__slots__}
        for name in ("root", "deal"):
            if state[name] is not None:
                state[name] = state[name].to_dict()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in self.__slots__:
            value = state[name]
            if name in ("root", "deal") and value is not None:
                value = Deal.from_dict(value)
            setattr(self, name, value)


class ScopaState(pyspiel.State):
    """A state of ``python_scopa``: the shuffle, then the engine's deal move by move."""

    def __init__(self, game: ScopaGame) -> None:
        super().__init__(game)
        self._pos = _Position(game.setup)

    # OpenSpiel API --------------------------------------------------------------------------

    def current_player(self) -> int:
        deal = self._pos.deal
        if deal is None:
            return int(pyspiel.PlayerId.CHANCE)
        if deal.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return deal.current_player

    def is_terminal(self) -> bool:
        deal = self._pos.deal
        return deal is not None and deal.is_over

    def _legal_actions(self, player: int) -> list[int]:
        pos = self._pos
        if pos.pending is None:
            deal = pos.deal
            assert deal is not None  # OpenSpiel asks a player node only
            return list(cards_of(deal.masks["hands"][deal.current_player]))
        return [PICK_OFFSET + c for c in cards_of(pickable_cards(pos.options, pos.picked))]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the deck order, each with its probability given those drawn."""
        setup = self._pos.setup
        deck = self._pos.deck
        assert deck is not None  # chance nodes come before the deal only
        position = len(deck)
        drawn = set(deck)
        left = [c for c in range(NUM_CARDS) if c not in drawn]
        tables = setup.table_positions
        slots = sum(1 for p in tables if p >= position)  # table positions still to draw
        on_table = sum(1 for p, c in enumerate(deck) if p in tables and c in _KINGS)
        kings = sum(1 for c in left if c in _KINGS)
        room = setup.table_kings - on_table
        at_table = position in tables

        def ways(remaining: int, slots: int, kings: int, room: int) -> int:
            # Ways to place `kings` kings among the remaining positions, at most `room` of them
            # at table positions (the other cards fill the rest in any order).
            return sum(
                comb(slots, j) * comb(remaining - slots, kings - j)
                for j in range(min(slots, room, kings) + 1)
            )

        total = ways(len(left), slots, kings, room)
        rest = slots - at_table
        king_p = (
            ways(len(left) - 1, rest, kings - 1, room - at_table) / (kings * total) if kings else 0
        )
        other_p = (
            ways(len(left) - 1, rest, kings, room) / ((len(left) - kings) * total)
            if len(left) > kings
            else 0
        )
        outcomes = []
        for card in left:
            p = king_p if card in _KINGS else other_p
            if p > 0:
                outcomes.append((card, p))
        return outcomes

    def _apply_action(self, action: int) -> None:
        pos = self._pos
        deal = pos.deal
        if deal is None:
            deck = pos.deck
            assert deck is not None  # no deal yet: the shuffle is being drawn
            if not 0 <= action < NUM_CARDS or action in deck:
                raise PositionError(f"chance outcome {action} is not a card left to draw")
            deck.append(action)
            if len(deck) == NUM_CARDS:
                setup = pos.setup
                if needs_redeal(setup.kind.table_of(deck), setup.rules):
                    raise PositionError("the deck deals a table the rules deal again")
                pos.begin(Deal.from_deck(deck, setup.first_player, setup.rules, setup.kind), deck)
            return
        if pos.pending is None:
            legal = (
                0 <= action < NUM_CARDS and deal.masks["hands"][deal.current_player] >> action & 1
            )
        else:
            pick = action - PICK_OFFSET
            legal = 0 <= pick < NUM_CARDS and pickable_cards(pos.options, pos.picked) >> pick & 1
        if not legal:
            raise IllegalMoveError(
                f"action {action} ({self._action_to_string(0, action)}) is illegal"
            )
        pos.history.append((deal.current_player, action, _round(deal)))
        pos.pending, pos.options, pos.picked, play = choose_capture(
            action,
            deal.masks["table"],
            capture_table(pos.setup.rules),
            pos.pending,
            pos.options,
            pos.picked,
        )
        if play is not None:
            deal.play_unchecked(*play)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {card_name(action)}"
        return describe_action(action)

    def returns(self) -> list[float]:
        """Each player's side's points in the deal minus the mean of the other sides' (the
        environments' ``reward="points"``; 0 until the end)."""
        deal = self._pos.deal
        kind = self._pos.setup.kind
        if deal is None or not deal.is_over:
            return [0.0] * kind.players
        by_side = side_rewards([side.total for side in deal.score()])
        return [by_side[kind.side_of(p)] for p in range(kind.players)]

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float] | None = None
    ) -> ScopaState:
        """A state the player cannot tell from this one, its hidden cards dealt at random.

        The player's own cards (the later rounds it has seen too), the table as dealt and each
        card another seat played, in the round it was played, keep their places; the other
        hidden cards are shuffled with ``probability_sampler`` (uniform in [0, 1)) and the
        actions since the deal are replayed.
        """
        pos = self._pos
        if pos.deal is None:
            return self.clone()  # nothing is known during the shuffle
        sample = probability_sampler or random.random
        root = pos.root
        assert root is not None  # set with the deal
        owners = _owners(pos.setup.kind.name, root.first_player)
        base = NUM_CARDS - len(root.stock)  # the deck position of the root's first stock card
        first_round, now = _round(root), _round(pos.deal)
        # Slots the player has not seen are emptied (None) and filled again below.
        hands: list[list[int | None]] = [
            list(hand) if seat == player_id else [None] * len(hand)
            for seat, hand in enumerate(root.hands)
        ]
        hidden = [c for seat, hand in enumerate(root.hands) if seat != player_id for c in hand]
        stock: list[int | None] = list(root.stock)
        open_slots: dict[tuple[int, int], list[int]] = {}
        for k, card in enumerate(root.stock):
            owner = owners[base + k]
            assert owner is not None  # the stock is dealt to hands only
            round_, seat = owner
            if seat != player_id or round_ > now:
                open_slots.setdefault((round_, seat), []).append(k)
                stock[k] = None
                hidden.append(card)
        # A card another seat played was in its hand of that round.
        played = set()
        for seat, action, round_ in pos.history:
            if seat == player_id or action >= PICK_OFFSET:
                continue
            if round_ == first_round:
                hands[seat][hands[seat].index(None)] = action
            else:
                stock[open_slots[round_, seat].pop()] = action
            played.add(action)
        free = [c for c in hidden if c not in played]
        for i in range(len(free) - 1, 0, -1):  # Fisher-Yates with the sampler's numbers
            j = min(int(sample() * (i + 1)), i)
            free[i], free[j] = free[j], free[i]
        cards = iter(free)
        new_hands = [[c if c is not None else next(cards) for c in hand] for hand in hands]
        new_stock = [c if c is not None else next(cards) for c in stock]

        state = self.get_game().new_initial_state()
        if pos.deck is not None:  # dealt by chance: draw the new deck through the chance nodes
            deck = list(pos.deck)
            for seat, hand in enumerate(new_hands):
                places = [p for p, owner in enumerate(owners) if owner == (0, seat)]
                for place, card in zip(places, hand, strict=True):
                    deck[place] = card
            deck[base:] = new_stock
            for card in deck:
                state.apply_action(card)
        else:
            data = root.to_dict()
            data["hands"], data["stock"] = new_hands, new_stock
            state._pos.begin(Deal.from_dict(data))
        for _, action, _ in pos.history:
            state.apply_action(action)
        return state

    def __str__(self) -> str:
        pos = self._pos
        if pos.deal is None:
            return f"dealing: {_names(pos.deck)}"
        deal = pos.deal
        captures = " ".join(f"[{_names(c)}]" for c in deal.captures)
        text = f"{deal!r}; captures {captures}; stock [{_names(deal.stock)}]"
        if pos.pending is not None:
            picked = _names(cards_of(pos.picked))
            text += f"; capturing with {card_name(pos.pending)}, picked [{picked}]"
        return text

    # Views for the observer -----------------------------------------------------------------

    def _observation(self, player: int, out: np.ndarray) -> None:
        """The environment's observation vector of ``player``, written into ``out``."""
        pos = self._pos
        deal = pos.deal
        assert deal is not None  # observed after the shuffle only
        masks = deal.masks
        choosing = player == deal.current_player and pos.pending is not None
        extra = {
            "pending_card": pos.pending if choosing else None,
            "picked": pos.picked if choosing else 0,
            "target": pos.setup.rules.target,
            "out": out,
        }
        _layout(pos.setup.kind).encode(
            masks["hands"],
            masks["table"],
            masks["piles"],
            masks["played"],
            len(deal.stock),
            deal.scope,
            deal.last_capturer,
            deal.dealer,
            player,
            **extra,
        )

    def _information_state(self, player: int) -> str:
        """What the player has seen: the position play started from, every action since, and
        its hand now (which shows the cards it was dealt since)."""
        pos = self._pos
        if pos.deal is None:
            assert pos.deck is not None  # the shuffle is being drawn
            return f"p{player} dealing {len(pos.deck)}"
        root = pos.root
        assert root is not None  # set with the deal
        moves = " ".join(f"{seat}:{action}" for seat, action, _ in pos.history)
        captures = " ".join(f"[{_names(c)}]" for c in root.captures)
        return (
            f"p{player} hand [{_names(root.hands[player])}] table [{_names(root.table)}] "
            f"captures {captures} scope {list(root.scope)} stock {len(root.stock)} "
            f"first {root.first_player} to move {root.current_player} "
            f"last capturer {root.last_capturer} | {moves} | "
            f"hand now [{_names(pos.deal.hands[player])}]"
        )


class ScopaObserver:
    """OpenSpiel's Python observer: the environment's observation vector, one named piece per
    feature, plus (for perfect recall) the one-hot actions so far."""

    def __init__(self, kind: Table, perfect_recall: bool) -> None:
        layout = _layout(kind)
        self._size = layout.size
        self._slices = layout.slices
        self._planes = layout.planes
        self.perfect_recall = perfect_recall
        total = self._size + (MAX_DECISIONS * NUM_ACTIONS if perfect_recall else 0)
        self.tensor = np.zeros(total, np.float32)
        self.dict = {name: self.tensor[s] for name, s in self._slices.items()}
        if perfect_recall:
            self.dict["actions"] = self.tensor[self._size :].reshape(MAX_DECISIONS, NUM_ACTIONS)

    def set_from(self, state: ScopaState, player: int) -> None:
        self.tensor.fill(0.0)
        pos = state._pos
        if pos.deal is None:
            return
        state._observation(player, self.tensor[: self._size])
        if self.perfect_recall:
            actions = self.dict["actions"]
            for i, (_, action, _) in enumerate(pos.history):
                actions[i, action] = 1.0

    def string_from(self, state: ScopaState, player: int) -> str:
        if self.perfect_recall:
            return state._information_state(player)
        if state._pos.deal is None:
            return f"p{player} dealing"
        vector = np.zeros(self._size, np.float32)
        state._observation(player, vector)
        pieces = [f"p{player}"]
        for name, s in self._slices.items():
            if name in self._planes:
                pieces.append(f"{name}[{_names(np.flatnonzero(vector[s]).tolist())}]")
            else:
                pieces.append(f"{name}[{' '.join(f'{x:.4g}' for x in vector[s])}]")
        return " ".join(pieces)


pyspiel.register_game(_GAME_TYPE, ScopaGame)
