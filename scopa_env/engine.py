"""The rules engine: one deal of two-player Scopa, and a match of deals to the target.

The state of a deal is a handful of bit masks over card ids (hands, table, capture piles,
cards each player has played) plus the stock order, so copying is cheap and the batched engine
can reuse the same capture tables. ``Deal`` validates everything that comes from outside
(decks, positions, moves, dictionaries) and leaves itself unchanged when it rejects something.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from scopa_env.captures import capture_table, is_ace_sweep
from scopa_env.cards import (
    CAPTURE_VALUE,
    KINGS_MASK,
    NUM_CARDS,
    card_name,
    cards_of,
    mask_of,
)
from scopa_env.rules import Rules, resolve_rules
from scopa_env.scoring import ScoreBreakdown, score_piles

HAND_SIZE = 3
TABLE_SIZE = 4
_VALUE = [int(v) for v in CAPTURE_VALUE]


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the current position."""


class Move(NamedTuple):
    """Play ``card`` from hand and take ``capture`` from the table (empty: trail the card)."""

    card: int
    capture: frozenset[int] = frozenset()

    def __str__(self) -> str:
        if not self.capture:
            return f"{card_name(self.card)} (trail)"
        taken = " ".join(card_name(c) for c in sorted(self.capture))
        return f"{card_name(self.card)} x {taken}"


_MOVES: dict[tuple[int, int], Move] = {}
_MOVE_MASKS: dict[int, tuple[int, int]] = {}


def _move(card: int, capture: int) -> Move:
    """The shared ``Move`` for a card and a capture mask (moves are immutable, so reusable).

    Shared moves live for the whole process, so ``play`` can recognise them by identity.
    """
    move = _MOVES.get((card, capture))
    if move is None:
        move = _MOVES[card, capture] = Move(card, frozenset(cards_of(capture)))
        _MOVE_MASKS[id(move)] = (card, capture)
    return move


_MOVE_TABLES: dict[int, Callable[[int, int], tuple[Move, ...]]] = {}


def _move_table(rules: Rules) -> Callable[[int, int], tuple[Move, ...]]:
    """A memoised ``(table, card) -> legal moves with that card`` over ``capture_table``."""
    capture_sets = capture_table(rules)
    moves_for = _MOVE_TABLES.get(id(capture_sets))
    if moves_for is None:
        cached, relevant = capture_sets.cached, capture_sets.relevant  # type: ignore[attr-defined]

        @lru_cache(maxsize=1 << 18)
        def cached_moves(table: int, card: int) -> tuple[Move, ...]:
            options = cached(table, _VALUE[card])
            return tuple(_move(card, s) for s in options) if options else (_move(card, 0),)

        def moves_for(table: int, card: int) -> tuple[Move, ...]:
            return cached_moves(table & relevant[_VALUE[card]], card)

        moves_for = _MOVE_TABLES[id(capture_sets)] = moves_for
    return moves_for


def needs_redeal(table: Iterable[int], rules: Rules | None = None) -> bool:
    """Whether a freshly dealt table is void: 3 or 4 kings, under ``redeal_three_kings``."""
    rules = resolve_rules(rules)
    return rules.redeal_three_kings and (mask_of(table) & KINGS_MASK).bit_count() >= 3


def _check_player(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value not in (0, 1):
        raise ValueError(f"{what} must be 0 or 1, got {value!r}")
    return int(value)


def _check_cards(cards: Iterable[Any], what: str) -> tuple[int, ...]:
    try:
        cards = tuple(cards)
    except TypeError:
        raise ValueError(f"{what} must be a sequence of card ids, got {cards!r}") from None
    for card in cards:
        if isinstance(card, bool) or not isinstance(card, int | np.integer):
            raise ValueError(f"{what} holds {card!r}, which is not a card id (0..39)")
        if not 0 <= card < NUM_CARDS:
            raise ValueError(f"{what} holds {card!r}, which is not a card id (0..39)")
    return tuple(int(card) for card in cards)


class Deal:
    """One deal of two-player Scopa, from the first play to the scoring of the piles.

    Build one with ``Deal.new`` (random, with the redeal rule), ``Deal.from_deck`` (an explicit
    card order) or ``Deal.from_position`` (any mid-deal position). ``legal_moves`` lists every
    legal ``Move``; ``play`` applies one, deals the next round from the stock and, after the
    last play, gives the cards left on the table to the last capturer.
    """

    __slots__ = (
        "_rules",
        "_capture_sets",
        "_moves_for",
        "_hands",
        "_table",
        "_stock",
        "_piles",
        "_played",
        "_scope",
        "_current",
        "_first",
        "_last_capturer",
    )

    _rules: Rules
    _hands: list[int]
    _table: int
    _stock: tuple[int, ...]
    _piles: list[int]
    _played: list[int]
    _scope: list[int]
    _current: int
    _first: int
    _last_capturer: int | None

    # Construction -------------------------------------------------------------------------

    @classmethod
    def _blank(cls, rules: Rules) -> Deal:
        deal = cls.__new__(cls)
        deal._rules = rules
        deal._capture_sets = capture_table(rules)
        deal._moves_for = _move_table(rules)
        return deal

    @classmethod
    def from_deck(
        cls, deck: Sequence[int], first_player: int = 0, rules: Rules | str | None = None
    ) -> Deal:
        """Deal an explicit 40-card order by RULES.md's convention, with no redeal.

        ``deck[0], deck[2], deck[4]`` go to the first player, ``deck[1], deck[3], deck[5]`` to
        the dealer, ``deck[6:10]`` face up to the table; the rest is the stock, in order.
        """
        rules = resolve_rules(rules)
        first_player = _check_player(first_player, "first_player")
        deck = _check_cards(deck, "deck")
        if len(deck) != NUM_CARDS or len(set(deck)) != NUM_CARDS:
            missing = sorted(set(range(NUM_CARDS)) - set(deck))
            raise ValueError(
                f"a deck must hold each of the 40 cards once; got {len(deck)} cards"
                + (f", missing {[card_name(c) for c in missing]}" if missing else "")
            )
        deal = cls._blank(rules)
        deal._hands = [0, 0]
        deal._hands[first_player] = mask_of(deck[0:6:2])
        deal._hands[1 - first_player] = mask_of(deck[1:6:2])
        deal._table = mask_of(deck[6:10])
        deal._stock = deck[10:]
        deal._piles = [0, 0]
        deal._played = [0, 0]
        deal._scope = [0, 0]
        deal._current = first_player
        deal._first = first_player
        deal._last_capturer = None
        return deal

    @classmethod
    def new(
        cls,
        rng: np.random.Generator,
        first_player: int = 0,
        rules: Rules | str | None = None,
    ) -> Deal:
        """A shuffled deal; a void table (see ``needs_redeal``) is shuffled and dealt again."""
        rules = resolve_rules(rules)
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        while True:
            deck = rng.permutation(NUM_CARDS).tolist()
            if not needs_redeal(deck[6:10], rules):
                return cls.from_deck(deck, first_player, rules)

    @classmethod
    def from_position(
        cls,
        hands: Sequence[Iterable[int]],
        table: Iterable[int],
        stock: Iterable[int] = (),
        captures: Sequence[Iterable[int]] = ((), ()),
        current_player: int = 0,
        first_player: int = 0,
        last_capturer: int | None = None,
        scope: Sequence[int] = (0, 0),
        rules: Rules | str | None = None,
        played: Sequence[Iterable[int]] = ((), ()),
    ) -> Deal:
        """Any position of a deal; every card must be in exactly one place.

        ``played`` optionally records which table and captured cards each player played
        (it feeds observations only). A position with both hands and the stock empty is a
        finished deal: any cards still on the table go to ``last_capturer``.
        """
        rules = resolve_rules(rules)
        if len(hands) != 2 or len(captures) != 2 or len(scope) != 2 or len(played) != 2:
            raise ValueError("hands, captures, scope and played must each have two entries")
        hand_cards = [_check_cards(h, f"hands[{p}]") for p, h in enumerate(hands)]
        table_cards = _check_cards(table, "table")
        stock_cards = _check_cards(stock, "stock")
        pile_cards = [_check_cards(c, f"captures[{p}]") for p, c in enumerate(captures)]
        played_cards = [_check_cards(c, f"played[{p}]") for p, c in enumerate(played)]
        current_player = _check_player(current_player, "current_player")
        first_player = _check_player(first_player, "first_player")
        if last_capturer is not None:
            last_capturer = _check_player(last_capturer, "last_capturer")
        for p, count in enumerate(scope):
            if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
                raise ValueError(f"scope[{p}] must be a non-negative integer, got {count!r}")

        places = {
            "hands[0]": hand_cards[0],
            "hands[1]": hand_cards[1],
            "table": table_cards,
            "stock": stock_cards,
            "captures[0]": pile_cards[0],
            "captures[1]": pile_cards[1],
        }
        seen: dict[int, str] = {}
        for place, cards in places.items():
            for card in cards:
                if card in seen:
                    raise ValueError(f"card {card_name(card)} is in both {seen[card]} and {place}")
                seen[card] = place
        missing = sorted(set(range(NUM_CARDS)) - set(seen))
        if missing:
            raise ValueError(f"cards missing from the position: {[card_name(c) for c in missing]}")
        for p, cards in enumerate(hand_cards):
            if len(cards) > HAND_SIZE:
                raise ValueError(f"hands[{p}] holds {len(cards)} cards; a hand holds at most 3")
        if len(stock_cards) % (2 * HAND_SIZE):
            raise ValueError(
                f"the stock holds {len(stock_cards)} cards; it must hold whole rounds of 6"
            )
        dealer = 1 - first_player
        sizes = [len(c) for c in hand_cards]
        finished = not any(sizes) and not stock_cards
        if not finished:
            if not any(sizes):
                raise ValueError("both hands are empty but the stock is not: deal the next round")
            expected = sizes[first_player] + (0 if current_player == first_player else 1)
            if current_player == first_player and sizes[dealer] != sizes[first_player]:
                raise ValueError(
                    f"the first player (player {first_player}) is to move, so both hands must "
                    f"hold the same number of cards; they hold {sizes}"
                )
            if current_player == dealer and sizes[dealer] != expected:
                raise ValueError(
                    f"the dealer (player {dealer}) is to move, so it must hold one card more "
                    f"than the first player; the hands hold {sizes}"
                )
        for p in range(2):
            stray = set(played_cards[p]) - set(table_cards) - set(pile_cards[0] + pile_cards[1])
            if stray:
                raise ValueError(
                    f"played[{p}] holds {[card_name(c) for c in sorted(stray)]}, "
                    "which are neither on the table nor captured"
                )
        if set(played_cards[0]) & set(played_cards[1]):
            raise ValueError("a card cannot have been played by both players")

        deal = cls._blank(rules)
        deal._hands = [mask_of(h) for h in hand_cards]
        deal._table = mask_of(table_cards)
        deal._stock = stock_cards
        deal._piles = [mask_of(c) for c in pile_cards]
        deal._played = [mask_of(c) for c in played_cards]
        deal._scope = [int(s) for s in scope]
        deal._current = current_player
        deal._first = first_player
        deal._last_capturer = last_capturer
        if finished and deal._table and last_capturer is not None:
            deal._piles[last_capturer] |= deal._table
            deal._table = 0
        return deal

    # Read-only views ----------------------------------------------------------------------

    @property
    def rules(self) -> Rules:
        return self._rules

    @property
    def current_player(self) -> int:
        return self._current

    @property
    def first_player(self) -> int:
        """The non-dealer, who leads every round of this deal."""
        return self._first

    @property
    def dealer(self) -> int:
        return 1 - self._first

    @property
    def hands(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return cards_of(self._hands[0]), cards_of(self._hands[1])

    @property
    def table(self) -> tuple[int, ...]:
        return cards_of(self._table)

    @property
    def stock(self) -> tuple[int, ...]:
        """The undealt cards in dealing order."""
        return self._stock

    @property
    def captures(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return cards_of(self._piles[0]), cards_of(self._piles[1])

    @property
    def played(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The cards each player has played so far this deal."""
        return cards_of(self._played[0]), cards_of(self._played[1])

    @property
    def scope(self) -> tuple[int, int]:
        return self._scope[0], self._scope[1]

    @property
    def last_capturer(self) -> int | None:
        return self._last_capturer

    @property
    def is_over(self) -> bool:
        return not (self._hands[0] or self._hands[1] or self._stock)

    @property
    def masks(self) -> dict[str, Any]:
        """The raw bit masks of the state, for observations and fast players."""
        return {
            "hands": tuple(self._hands),
            "table": self._table,
            "piles": tuple(self._piles),
            "played": tuple(self._played),
        }

    # Moves --------------------------------------------------------------------------------

    def capture_options(self, card: int) -> tuple[frozenset[int], ...]:
        """The legal captures for playing ``card`` now (empty: it is trailed)."""
        return tuple(frozenset(cards_of(s)) for s in self._capture_sets(self._table, _VALUE[card]))

    def legal_moves(self) -> list[Move]:
        """Every legal move, each once; empty when the deal is over."""
        moves: list[Move] = []
        table = self._table
        moves_for = self._moves_for
        for card in cards_of(self._hands[self._current]):
            moves += moves_for(table, card)
        return moves

    def legal_mask_moves(self) -> list[tuple[int, int]]:
        """``legal_moves`` as ``(card, capture mask)`` pairs: the allocation-free fast path."""
        moves = []
        table = self._table
        capture_sets = self._capture_sets
        for card in cards_of(self._hands[self._current]):
            options = capture_sets(table, _VALUE[card])
            if options:
                moves.extend((card, s) for s in options)
            else:
                moves.append((card, 0))
        return moves

    def play(self, move: Move | tuple[int, Iterable[int]]) -> None:
        """Apply a legal move; an illegal one raises ``IllegalMoveError`` and changes nothing."""
        known = _MOVE_MASKS.get(id(move))
        if known is not None:
            card, capture_mask = known
        else:
            try:
                card, capture = move
                card = int(card)
                capture_mask = mask_of(capture)
            except (TypeError, ValueError):
                raise IllegalMoveError(
                    f"not a move: {move!r} (expected Move(card, capture) with card ids)"
                ) from None
        player = self._current
        if not 0 <= card < NUM_CARDS or not self._hands[player] >> card & 1:
            if self.is_over:
                raise IllegalMoveError(f"the deal is over; no move is legal, got {move!r}")
            raise IllegalMoveError(
                f"player {player} does not hold card {card!r}; their hand is "
                f"{[card_name(c) for c in cards_of(self._hands[player])]}"
            )
        if known is not None and move in self._moves_for(self._table, card):
            self.play_unchecked(card, capture_mask)
            return
        options = self._capture_sets(self._table, _VALUE[card])
        if capture_mask not in options and not (capture_mask == 0 and not options):
            legal = ", ".join(str(m) for m in self.legal_moves() if m.card == card)
            raise IllegalMoveError(
                f"illegal move {_describe(card, capture_mask)} for player {player}; "
                f"the legal moves with {card_name(card)} are: {legal}"
            )
        self.play_unchecked(card, capture_mask)

    def play_unchecked(self, card: int, capture: int) -> None:
        """Apply ``(card, capture mask)`` from ``legal_mask_moves`` without checking it."""
        player = self._current
        bit = 1 << card
        self._hands[player] ^= bit
        self._played[player] |= bit
        table = self._table
        if capture:
            self._table = table ^ capture
            self._piles[player] |= capture | bit
            self._last_capturer = player
            if not self._table:
                last_play = not (self._hands[0] or self._hands[1] or self._stock)
                if (not last_play or self._rules.last_play_scopa) and not (
                    self._rules.ace_takes_all
                    and not self._rules.ace_sweep_scopa
                    and is_ace_sweep(table, card, capture, self._rules)
                ):
                    self._scope[player] += 1
        else:
            self._table = table | bit
        if self._hands[0] or self._hands[1]:
            self._current = 1 - player
        elif self._stock:
            self._deal_round()
        elif self._table and self._last_capturer is not None:
            self._piles[self._last_capturer] |= self._table
            self._table = 0

    def _deal_round(self) -> None:
        stock = self._stock
        first = self._first
        self._hands[first] = mask_of(stock[0:6:2])
        self._hands[1 - first] = mask_of(stock[1:6:2])
        self._stock = stock[6:]
        self._current = first

    # Scoring, copies and serialisation ----------------------------------------------------

    def score(self) -> tuple[ScoreBreakdown, ScoreBreakdown]:
        """Both players' points for the finished deal."""
        if not self.is_over:
            raise ValueError("the deal is not over; score() needs a finished deal")
        return score_piles((self._piles[0], self._piles[1]), self.scope, self._rules)

    def copy(self) -> Deal:
        other = Deal.__new__(Deal)
        other._rules = self._rules
        other._capture_sets = self._capture_sets
        other._moves_for = self._moves_for
        other._hands = self._hands.copy()
        other._table = self._table
        other._stock = self._stock
        other._piles = self._piles.copy()
        other._played = self._played.copy()
        other._scope = self._scope.copy()
        other._current = self._current
        other._first = self._first
        other._last_capturer = self._last_capturer
        return other

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the whole state; ``Deal.from_dict`` restores it."""
        return {
            "rules": self._rules.to_dict(),
            "hands": [list(h) for h in self.hands],
            "table": list(self.table),
            "stock": list(self._stock),
            "captures": [list(c) for c in self.captures],
            "played": [list(c) for c in self.played],
            "scope": list(self.scope),
            "current_player": self._current,
            "first_player": self._first,
            "last_capturer": self._last_capturer,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Deal:
        """Restore a deal written by ``to_dict``, validating it like ``from_position``."""
        if not isinstance(data, dict):
            raise ValueError(f"a deal dictionary is required, got {type(data).__name__}")
        keys = {"rules", "hands", "table", "stock", "captures", "played", "scope"} | {
            "current_player",
            "first_player",
            "last_capturer",
        }
        if set(data) != keys:
            raise ValueError(
                f"deal dictionary keys differ: missing {sorted(keys - set(data))}, "
                f"unknown {sorted(set(data) - keys)}"
            )
        return cls.from_position(
            hands=data["hands"],
            table=data["table"],
            stock=data["stock"],
            captures=data["captures"],
            current_player=data["current_player"],
            first_player=data["first_player"],
            last_capturer=data["last_capturer"],
            scope=data["scope"],
            rules=Rules.from_dict(data["rules"]),
            played=data["played"],
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deal):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        names = lambda cards: " ".join(card_name(c) for c in cards) or "-"  # noqa: E731
        return (
            f"Deal(player {self._current} to move; hands [{names(self.hands[0])}] "
            f"[{names(self.hands[1])}]; table [{names(self.table)}]; stock {len(self._stock)}; "
            f"scope {self.scope})"
        )


def _describe(card: int, capture: int) -> str:
    return str(Move(card, frozenset(cards_of(capture))))


class Match:
    """Deals to the target with the dealer alternating (RULES.md section 6).

    A match ends at the end of a deal in which some player has at least ``rules.target`` points
    and strictly more than the opponent; otherwise another deal is played.
    """

    def __init__(self, rules: Rules | str | None = None, first_dealer: int = 0) -> None:
        self.rules = resolve_rules(rules)
        self.first_dealer = _check_player(first_dealer, "first_dealer")
        self._scores = [0, 0]
        self._dealer = self.first_dealer
        self._deals_played = 0

    @property
    def scores(self) -> tuple[int, int]:
        return self._scores[0], self._scores[1]

    @property
    def dealer(self) -> int:
        """The dealer of the next (or current) deal."""
        return self._dealer

    @property
    def first_player(self) -> int:
        """The non-dealer, who leads the next (or current) deal."""
        return 1 - self._dealer

    @property
    def deals_played(self) -> int:
        return self._deals_played

    @property
    def winner(self) -> int | None:
        a, b = self._scores
        target = self.rules.target
        if max(a, b) >= target and a != b:
            return 0 if a > b else 1
        return None

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def new_deal(self, rng: np.random.Generator) -> Deal:
        """A fresh random deal led by the current non-dealer."""
        return Deal.new(rng, first_player=self.first_player, rules=self.rules)

    def record_deal(self, points: Sequence[int] | Deal) -> None:
        """Add a finished deal's points (a pair of totals, or the finished ``Deal``)."""
        if self.is_over:
            raise ValueError(f"the match is over (won by player {self.winner})")
        if isinstance(points, Deal):
            points = tuple(s.total for s in points.score())
        if len(points) != 2 or any(
            isinstance(p, bool) or not isinstance(p, int | np.integer) or p < 0 for p in points
        ):
            raise ValueError(f"points must be two non-negative integers, got {points!r}")
        self._scores[0] += int(points[0])
        self._scores[1] += int(points[1])
        self._deals_played += 1
        self._dealer = 1 - self._dealer

    def __repr__(self) -> str:
        return (
            f"Match(scores={self.scores}, target={self.rules.target}, dealer={self._dealer}, "
            f"deals_played={self._deals_played})"
        )
