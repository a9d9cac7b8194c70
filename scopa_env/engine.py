"""The rules engine: one deal at any table (Scopa for 2, 3, 4 or 6, Scopone), and a match of
deals to the target.

The state of a deal is a handful of bit masks over card ids (hands, table, capture piles,
cards each player has played) plus the stock order, so copying is cheap and the batched engine
can reuse the same capture tables. ``Deal`` validates everything that comes from outside
(decks, positions, moves, dictionaries) and leaves itself unchanged when it rejects something.

One turn logic serves every table (``scopa_env.tables``): the ``kind`` of a deal or match is
its ``Table`` (two-player Scopa by default), which says how many seats there are, how the cards
are dealt and who plays for which side.

Play passes in seat order; seat ``s`` plays for side ``s % table.sides`` (seats 0 and 2 against
1 and 3 at four, 0+2+4 against 1+3+5 at six, everyone for themselves at two and three). The
engine records each seat's captures and scope (who took what is public), and everything that
scores pools a side's seats (``team_captures``, ``team_scope``, ``score``): ``score()`` returns
one ``ScoreBreakdown`` per side, and ``Match`` keeps one score per side and names a winning side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache
from typing import Any, NamedTuple

import numpy as np

from scopa_env.captures import capture_table, is_ace_sweep
from scopa_env.cards import (
    ALL_CARDS_MASK,
    CAPTURE_VALUE,
    KINGS_MASK,
    NUM_CARDS,
    card_name,
    cards_of,
    mask_of,
)
from scopa_env.errors import IllegalMoveError, PositionError
from scopa_env.rules import Rules, resolve_rules
from scopa_env.scoring import ScoreBreakdown, score_piles
from scopa_env.tables import SCOPA, Table, resolve_table

_VALUE = [int(v) for v in CAPTURE_VALUE]
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 6: "six"}


@cache
def _next_seats(players: int) -> tuple[int, ...]:
    """The seat that plays after each seat."""
    return tuple((seat + 1) % players for seat in range(players))


@cache
def _round_cuts(kind: Table) -> tuple[tuple[tuple[tuple[int, slice], ...], int], ...]:
    """Per first player: the slice of the stock each seat receives in a round (one card at a
    time in seat order from the first player), and the number of cards dealt."""
    n, dealt = kind.players, kind.round_cards
    return tuple(
        (tuple(((first + i) % n, slice(i, dealt, n)) for i in range(n)), dealt)
        for first in range(n)
    )


class Move(NamedTuple):
    """Play ``card`` from hand and take ``capture`` from the table (empty: trail the card)."""

    card: int
    capture: frozenset[int] = frozenset()

    def __str__(self) -> str:
        if not self.capture:
            return f"{card_name(self.card)} (trail)"
        taken = " ".join(card_name(c) for c in sorted(self.capture))
        return f"{card_name(self.card)} x {taken}"


MaskMove = tuple[int, int]
"""A move as ``(card, capture mask)``, the form fast players and the batched engine use; a zero
mask trails the card."""

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
        relevant = capture_sets.relevant  # type: ignore[attr-defined]

        @lru_cache(maxsize=1 << 18)
        def cached_moves(table: int, card: int) -> tuple[Move, ...]:
            options = capture_sets(table, _VALUE[card])
            return tuple(_move(card, s) for s in options) if options else (_move(card, 0),)

        def moves_for(table: int, card: int) -> tuple[Move, ...]:
            return cached_moves(table & relevant[_VALUE[card]], card)

        moves_for = _MOVE_TABLES[id(capture_sets)] = moves_for
    return moves_for


def needs_redeal(table: Iterable[int], rules: Rules | None = None) -> bool:
    """Whether a freshly dealt table is void: 3 or 4 kings, under ``redeal_three_kings``."""
    rules = resolve_rules(rules)
    return rules.redeal_three_kings and (mask_of(table) & KINGS_MASK).bit_count() >= 3


def _check_player(value: Any, what: str, players: int = 2) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or not 0 <= value < players
    ):
        seats = "0 or 1" if players == 2 else f"a seat 0..{players - 1}"
        raise PositionError(f"{what} must be {seats}, got {value!r}")
    return int(value)


def _check_cards(cards: Iterable[Any], what: str) -> tuple[int, ...]:
    try:
        cards = tuple(cards)
    except TypeError:
        raise PositionError(f"{what} must be a sequence of card ids, got {cards!r}") from None
    for card in cards:
        if isinstance(card, bool) or not isinstance(card, int | np.integer):
            raise PositionError(f"{what} holds {card!r}, which is not a card id (0..39)")
        if not 0 <= card < NUM_CARDS:
            raise PositionError(f"{what} holds {card!r}, which is not a card id (0..39)")
    return tuple(int(card) for card in cards)


class Deal:
    """One deal at any table, from the first play to the scoring of the piles.

    Build one with ``Deal.new`` (random, with the redeal rule), ``Deal.from_deck`` (an explicit
    card order) or ``Deal.from_position`` (any mid-deal position); ``kind`` picks the table
    (a ``scopa_env.tables.Table`` or its name, two-player Scopa by default). ``legal_moves``
    lists every legal ``Move``;
    ``play`` applies one, deals the next round from the stock and, after the last play, gives
    the cards left on the table to the last capturer.
    """

    __slots__ = (
        "_rules",
        "_capture_sets",
        "_moves_for",
        "_kind",
        "_next",
        "_dealer",
        "_hands",
        "_table",
        "_stock",
        "_live",
        "_piles",
        "_played",
        "_scope",
        "_current",
        "_first",
        "_last_capturer",
    )

    _rules: Rules
    _capture_sets: Callable[[int, int], tuple[int, ...]]
    _moves_for: Callable[[int, int], tuple[Move, ...]]
    _kind: Table
    _next: tuple[int, ...]
    _dealer: int
    _hands: list[int]
    _table: int
    _stock: tuple[int, ...]
    _live: int
    _piles: list[int]
    _played: list[int]
    _scope: tuple[int, ...]
    _current: int
    _first: int
    _last_capturer: int | None

    # Construction -------------------------------------------------------------------------

    @classmethod
    def _blank(cls, rules: Rules, kind: Table, first_player: int) -> Deal:
        deal = cls.__new__(cls)
        deal._rules = rules
        deal._capture_sets = capture_table(rules)
        deal._moves_for = _move_table(rules)
        deal._kind = kind
        deal._next = _next_seats(kind.players)
        deal._first = first_player
        deal._dealer = (first_player - 1) % kind.players
        return deal

    @classmethod
    def from_deck(
        cls,
        deck: Sequence[int],
        first_player: int = 0,
        rules: Rules | str | None = None,
        kind: Table | str | None = None,
    ) -> Deal:
        """Deal an explicit 40-card order by RULES.md's convention, with no redeal.

        Cards go one at a time to the seats in playing order, starting with the first player,
        until every hand is full, then face up to the table; the rest is the stock, in order.
        ``deck[i]`` for ``i < seats x hand`` goes to seat ``(first_player + i) % seats``, the
        next ``table_size`` cards to the table, and each later round deals the next
        ``seats x hand`` cards the same way. Two players: ``deck[0], deck[2], deck[4]`` to the
        first player, ``deck[1], deck[3], deck[5]`` to the dealer, ``deck[6:10]`` to the table.
        """
        rules = resolve_rules(rules)
        kind = resolve_table(kind)
        first_player = _check_player(first_player, "first_player", kind.players)
        deck = _check_cards(deck, "deck")
        if len(deck) != NUM_CARDS or len(set(deck)) != NUM_CARDS:
            missing = sorted(set(range(NUM_CARDS)) - set(deck))
            raise PositionError(
                f"a deck must hold each of the 40 cards once; got {len(deck)} cards"
                + (f", missing {[card_name(c) for c in missing]}" if missing else "")
            )
        return cls._from_valid_deck(deck, first_player, rules, kind)

    @classmethod
    def _from_valid_deck(
        cls, deck: tuple[int, ...], first_player: int, rules: Rules, kind: Table
    ) -> Deal:
        """``from_deck`` for a deck, seat, rules and table already checked."""
        deal = cls._blank(rules, kind, first_player)
        deal._hands = [0] * kind.players
        deal._stock = deck
        deal._deal_round()
        deal._table = mask_of(deal._stock[: kind.table_size])
        deal._stock = deal._stock[kind.table_size :]
        deal._live = ALL_CARDS_MASK ^ deal._table
        deal._piles = [0] * kind.players
        deal._played = [0] * kind.players
        deal._scope = (0,) * kind.players
        deal._last_capturer = None
        return deal

    @classmethod
    def new(
        cls,
        rng: np.random.Generator,
        first_player: int = 0,
        rules: Rules | str | None = None,
        kind: Table | str | None = None,
    ) -> Deal:
        """A shuffled deal; a void table (see ``needs_redeal``) is shuffled and dealt again."""
        rules = resolve_rules(rules)
        kind = resolve_table(kind)
        if not isinstance(rng, np.random.Generator):
            raise PositionError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        first_player = _check_player(first_player, "first_player", kind.players)
        while True:
            deck = tuple(rng.permutation(NUM_CARDS).tolist())
            if not needs_redeal(kind.table_of(deck), rules):
                return cls._from_valid_deck(deck, first_player, rules, kind)

    @classmethod
    def from_position(
        cls,
        hands: Sequence[Iterable[int]],
        table: Iterable[int],
        stock: Iterable[int] = (),
        captures: Sequence[Iterable[int]] | None = None,
        current_player: int = 0,
        first_player: int = 0,
        last_capturer: int | None = None,
        scope: Sequence[int] | None = None,
        rules: Rules | str | None = None,
        played: Sequence[Iterable[int]] | None = None,
        kind: Table | str | None = None,
    ) -> Deal:
        """Any position of a deal; every card must be in exactly one place.

        ``hands``, ``captures``, ``scope`` and ``played`` have one entry per seat of ``kind``
        (``captures``, ``scope`` and ``played`` default to empty).
        ``played`` optionally records which table and captured cards each player played
        (it feeds observations only). A position with every hand and the stock empty is a
        finished deal: any cards still on the table go to ``last_capturer``.
        """
        rules = resolve_rules(rules)
        kind = resolve_table(kind)
        n = kind.players
        captures = ((),) * n if captures is None else captures
        scope = (0,) * n if scope is None else scope
        played = ((),) * n if played is None else played
        if len(hands) != n or len(captures) != n or len(scope) != n or len(played) != n:
            entries = _NUMBER_WORDS.get(n, str(n))
            raise PositionError(
                f"hands, captures, scope and played must each have {entries} entries, "
                f"one per seat of a {kind.name} deal"
            )
        hand_cards = [_check_cards(h, f"hands[{p}]") for p, h in enumerate(hands)]
        table_cards = _check_cards(table, "table")
        stock_cards = _check_cards(stock, "stock")
        pile_cards = [_check_cards(c, f"captures[{p}]") for p, c in enumerate(captures)]
        played_cards = [_check_cards(c, f"played[{p}]") for p, c in enumerate(played)]
        current_player = _check_player(current_player, "current_player", n)
        first_player = _check_player(first_player, "first_player", n)
        if last_capturer is not None:
            last_capturer = _check_player(last_capturer, "last_capturer", n)
        for p, count in enumerate(scope):
            if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
                raise PositionError(f"scope[{p}] must be a non-negative integer, got {count!r}")

        places = {f"hands[{p}]": cards for p, cards in enumerate(hand_cards)}
        places |= {"table": table_cards, "stock": stock_cards}
        places |= {f"captures[{p}]": cards for p, cards in enumerate(pile_cards)}
        seen: dict[int, str] = {}
        for place, cards in places.items():
            for card in cards:
                if card in seen:
                    raise PositionError(
                        f"card {card_name(card)} is in both {seen[card]} and {place}"
                    )
                seen[card] = place
        missing = sorted(set(range(NUM_CARDS)) - set(seen))
        if missing:
            raise PositionError(
                f"cards missing from the position: {[card_name(c) for c in missing]}"
            )
        for p, cards in enumerate(hand_cards):
            if len(cards) > kind.hand_size:
                raise PositionError(
                    f"hands[{p}] holds {len(cards)} cards; a hand holds at most {kind.hand_size}"
                )
        rounds_left = len(stock_cards) // kind.round_cards
        if len(stock_cards) % kind.round_cards or rounds_left >= kind.rounds:
            raise PositionError(
                f"the stock holds {len(stock_cards)} cards; it must hold whole rounds of "
                f"{kind.round_cards}, at most {kind.rounds - 1}"
            )
        sizes = [len(c) for c in hand_cards]
        finished = not any(sizes) and not stock_cards
        if not finished:
            if not any(sizes):
                raise PositionError("every hand is empty but the stock is not: deal the next round")
            # Seats from the first player up to the one to move have played one card more.
            order = [(first_player + i) % n for i in range(n)]
            moved = order.index(current_player)
            held = sizes[current_player]
            expected = [held - (order.index(p) < moved) for p in range(n)]
            if sizes != expected or not held:
                raise PositionError(
                    f"player {current_player} is to move, so the hands must hold {expected} "
                    f"cards (the first player, player {first_player}, leads every round and "
                    f"the dealer, player {(first_player - 1) % n}, plays last); "
                    f"they hold {sizes}"
                )
        captured = {card for cards in pile_cards for card in cards}
        for p in range(n):
            stray = set(played_cards[p]) - set(table_cards) - captured
            if stray:
                raise PositionError(
                    f"played[{p}] holds {[card_name(c) for c in sorted(stray)]}, "
                    "which are neither on the table nor captured"
                )
        if sum(len(set(c)) for c in played_cards) != len(set().union(*played_cards)):
            raise PositionError("a card cannot have been played by two players")

        deal = cls._blank(rules, kind, first_player)
        deal._hands = [mask_of(h) for h in hand_cards]
        deal._table = mask_of(table_cards)
        deal._stock = stock_cards
        deal._live = mask_of(stock_cards)
        for hand in deal._hands:
            deal._live |= hand
        deal._piles = [mask_of(c) for c in pile_cards]
        deal._played = [mask_of(c) for c in played_cards]
        deal._scope = tuple(int(s) for s in scope)
        deal._current = current_player
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
    def kind(self) -> Table:
        return self._kind

    @property
    def num_players(self) -> int:
        return self._kind.players

    @property
    def current_player(self) -> int:
        return self._current

    @property
    def first_player(self) -> int:
        """The player after the dealer, who leads every round of this deal."""
        return self._first

    @property
    def dealer(self) -> int:
        """The dealer, who plays last in every round."""
        return self._dealer

    @property
    def hands(self) -> tuple[tuple[int, ...], ...]:
        return tuple(cards_of(hand) for hand in self._hands)

    @property
    def table(self) -> tuple[int, ...]:
        return cards_of(self._table)

    @property
    def stock(self) -> tuple[int, ...]:
        """The undealt cards in dealing order."""
        return self._stock

    @property
    def captures(self) -> tuple[tuple[int, ...], ...]:
        """The cards each seat has captured (partners pool theirs: ``team_captures``)."""
        return tuple(cards_of(pile) for pile in self._piles)

    @property
    def played(self) -> tuple[tuple[int, ...], ...]:
        """The cards each player has played so far this deal."""
        return tuple(cards_of(cards) for cards in self._played)

    @property
    def scope(self) -> tuple[int, ...]:
        """The scope each seat has scored this deal (partners pool theirs: ``team_scope``)."""
        return self._scope

    @property
    def team_captures(self) -> tuple[tuple[int, ...], ...]:
        """The capture pile of each side (its seats' piles pooled), in side order."""
        return tuple(cards_of(pile) for pile in self._team_piles())

    @property
    def team_piles(self) -> tuple[int, ...]:
        """The capture pile of each side as a card mask (its seats' piles pooled), in side
        order: ``team_captures`` for fast players."""
        return self._team_piles()

    @property
    def team_scope(self) -> tuple[int, ...]:
        """The scope of each side this deal (its seats' scope pooled), in side order."""
        sides = self._kind.sides
        return tuple(sum(self._scope[side::sides]) for side in range(sides))

    @property
    def last_capturer(self) -> int | None:
        return self._last_capturer

    @property
    def is_over(self) -> bool:
        # Play passes in seat order and the dealer plays last: its hand empties last.
        return not (self._hands[self._dealer] or self._stock)

    @property
    def masks(self) -> dict[str, Any]:
        """The raw bit masks of the state, for observations and fast players."""
        return {
            "hands": tuple(self._hands),
            "table": self._table,
            "piles": tuple(self._piles),
            "played": tuple(self._played),
        }

    def view(
        self,
    ) -> tuple[list[int], int, list[int], list[int], int, tuple[int, ...], int | None, int, int]:
        """``(hands, table, piles, played, stock size, scope, last capturer, dealer, live)``:
        what an observation reads, as the deal holds it, for the environments' hot path.
        ``live`` is the mask of the cards in hands and stock (kept by one xor a play), so
        that a seat's unseen cards are one xor away at any table.

        The lists are the deal's own (no copies): read them before the next play, never
        change them. ``masks`` is the copying, dictionary form.
        """
        return (
            self._hands,
            self._table,
            self._piles,
            self._played,
            len(self._stock),
            self._scope,
            self._last_capturer,
            self._dealer,
            self._live,
        )

    def _team_piles(self) -> tuple[int, ...]:
        piles, sides = self._piles, self._kind.sides
        if sides == len(piles):
            return tuple(piles)
        pooled = [0] * sides
        for seat, pile in enumerate(piles):
            pooled[seat % sides] |= pile
        return tuple(pooled)

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

    def legal_mask_moves(self) -> list[MaskMove]:
        """``legal_moves`` as ``(card, capture mask)`` pairs: the allocation-free fast path."""
        moves: list[MaskMove] = []
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
                (card,) = _check_cards((card,), "the move")
                capture_mask = mask_of(_check_cards(capture, "the capture"))
            except (TypeError, ValueError) as error:
                raise IllegalMoveError(
                    f"not a move: {move!r}: {error}; a move is Move(card, capture) of integer "
                    "card ids"
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

    def play_unchecked(self, card: int, capture: int) -> bool:
        """Apply ``(card, capture mask)`` from ``legal_mask_moves`` without checking it; whether
        it scored a scopa."""
        scored = False
        player = self._current
        bit = 1 << card
        hand = self._hands[player] ^ bit
        self._hands[player] = hand
        self._live ^= bit
        self._played[player] |= bit
        table = self._table
        # The round ends when the dealer, who plays last, has played its last card.
        round_over = not hand and player == self._dealer
        if capture:
            self._table = table ^ capture
            self._piles[player] |= capture | bit
            self._last_capturer = player
            if not self._table:
                last_play = round_over and not self._stock
                if (not last_play or self._rules.last_play_scopa) and not (
                    self._rules.ace_takes_all
                    and not self._rules.ace_sweep_scopa
                    and is_ace_sweep(table, card, capture, self._rules)
                ):
                    scope = list(self._scope)  # a tuple, so that observers can memoise it
                    scope[player] += 1
                    self._scope = tuple(scope)
                    scored = True
        else:
            self._table = table | bit
        if not round_over:
            self._current = self._next[player]
        elif self._stock:
            self._deal_round()
        elif self._table and self._last_capturer is not None:
            self._piles[self._last_capturer] |= self._table
            self._table = 0
        return scored

    def _deal_round(self) -> None:
        """Deal a round from the stock: one card at a time in seat order from the first player."""
        stock, hands = self._stock, self._hands
        cuts, dealt = _round_cuts(self._kind)[self._first]
        for seat, cut in cuts:
            hands[seat] = mask_of(stock[cut])
        self._stock = stock[dealt:]
        self._current = self._first

    # Scoring, copies and serialisation ----------------------------------------------------

    def score(self) -> tuple[ScoreBreakdown, ...]:
        """Each side's points for the finished deal, in side order (``kind.side_of``)."""
        if not self.is_over:
            raise ValueError("the deal is not over; score() needs a finished deal")
        return score_piles(self._team_piles(), self.team_scope, self._rules)

    def copy(self) -> Deal:
        other = Deal.__new__(Deal)
        other._rules = self._rules
        other._capture_sets = self._capture_sets
        other._moves_for = self._moves_for
        other._kind = self._kind
        other._next = self._next
        other._dealer = self._dealer
        other._hands = self._hands.copy()
        other._table = self._table
        other._stock = self._stock
        other._live = self._live
        other._piles = self._piles.copy()
        other._played = self._played.copy()
        other._scope = self._scope
        other._current = self._current
        other._first = self._first
        other._last_capturer = self._last_capturer
        return other

    def with_hidden_cards(self, observer: int, cards: Sequence[int]) -> Deal:
        """A copy in which the cards ``observer`` cannot see are dealt anew from ``cards``.

        The hidden cards are the other seats' hands and the stock. ``cards`` must be exactly
        those cards, in any order: they fill the other hands in seat order after ``observer``
        (each keeps its size), then the stock in order. Search players sample positions
        consistent with what a player has seen this way (determinization).
        """
        hands, n = self._hands, len(self._hands)
        others = [(observer + k) % n for k in range(1, n)]
        hidden = mask_of(self._stock)
        for seat in others:
            hidden |= hands[seat]
        cards = [int(c) for c in cards]
        if len(cards) != hidden.bit_count() or mask_of(cards) != hidden:
            raise ValueError(
                f"the cards hidden from seat {observer} are "
                f"{[card_name(c) for c in cards_of(hidden)]}, not "
                f"{[card_name(c) for c in cards]}"
            )
        other = self.copy()
        start = 0
        for seat in others:
            size = hands[seat].bit_count()
            other._hands[seat] = mask_of(cards[start : start + size])
            start += size
        other._stock = tuple(cards[start:])
        return other

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the whole state; ``Deal.from_dict`` restores it."""
        return {
            "rules": self._rules.to_dict(),
            "kind": self._kind.name,
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
        """Restore a deal written by ``to_dict``, validating it like ``from_position``.

        A dictionary without ``"kind"`` (written before Scopone existed) is two-player Scopa.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a deal dictionary is required, got {type(data).__name__}")
        keys = {"rules", "hands", "table", "stock", "captures", "played", "scope"} | {
            "current_player",
            "first_player",
            "last_capturer",
        }
        if "kind" in data:
            keys.add("kind")
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
            kind=data.get("kind"),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deal):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        names = lambda cards: " ".join(card_name(c) for c in cards) or "-"  # noqa: E731
        hands = " ".join(f"[{names(hand)}]" for hand in self.hands)
        kind = "" if self._kind is SCOPA else f"{self._kind.name}: "
        return (
            f"Deal({kind}player {self._current} to move; hands {hands}; "
            f"table [{names(self.table)}]; stock {len(self._stock)}; scope {self.scope})"
        )


def _describe(card: int, capture: int) -> str:
    return str(Move(card, frozenset(cards_of(capture))))


class Match:
    """Deals to the target with the deal passing in seat order (RULES.md sections 6 and 8).

    A match ends at the end of a deal in which some side has at least ``rules.target`` points
    and one side alone has the highest total (that side wins); otherwise another deal is
    played. Sides are those of the table (``kind.side_of``): ``scores`` and ``winner`` are per
    side. The deal passes to the next seat every deal (with two players the dealer alternates).
    """

    def __init__(
        self,
        rules: Rules | str | None = None,
        first_dealer: int = 0,
        kind: Table | str | None = None,
    ) -> None:
        self.rules = resolve_rules(rules)
        self.kind = resolve_table(kind)
        self.first_dealer = _check_player(first_dealer, "first_dealer", self.kind.players)
        self._scores = [0] * self.kind.sides
        self._dealer = self.first_dealer
        self._deals_played = 0

    @property
    def scores(self) -> tuple[int, ...]:
        """The match points of each side, in side order."""
        return tuple(self._scores)

    @property
    def dealer(self) -> int:
        """The dealer of the next (or current) deal."""
        return self._dealer

    @property
    def first_player(self) -> int:
        """The player after the dealer, who leads the next (or current) deal."""
        return (self._dealer + 1) % self.kind.players

    @property
    def deals_played(self) -> int:
        return self._deals_played

    @property
    def winner(self) -> int | None:
        """The winning side, once one has at least the target and the highest total alone."""
        scores = self._scores
        best = max(scores)
        if best >= self.rules.target and scores.count(best) == 1:
            return scores.index(best)
        return None

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def new_deal(self, rng: np.random.Generator) -> Deal:
        """A fresh random deal led by the player after the current dealer."""
        return Deal.new(rng, first_player=self.first_player, rules=self.rules, kind=self.kind)

    def record_deal(self, points: Sequence[int] | Deal) -> None:
        """Add a finished deal's points (one total per side, or the finished ``Deal``)."""
        if self.is_over:
            raise ValueError(f"the match is over (won by side {self.winner})")
        if isinstance(points, Deal):
            if points.kind != self.kind:
                raise ValueError(
                    f"a {points.kind.name} deal cannot count in a {self.kind.name} match"
                )
            points = tuple(s.total for s in points.score())
        sides = self.kind.sides
        if len(points) != sides or any(
            isinstance(p, bool) or not isinstance(p, int | np.integer) or p < 0 for p in points
        ):
            count = _NUMBER_WORDS.get(sides, str(sides))
            raise ValueError(
                f"points must be {count} non-negative integers (one per side), got {points!r}"
            )
        for side, p in enumerate(points):
            self._scores[side] += int(p)
        self._deals_played += 1
        self._dealer = (self._dealer + 1) % self.kind.players

    def __repr__(self) -> str:
        kind = "" if self.kind is SCOPA else f"kind={self.kind.name!r}, "
        return (
            f"Match({kind}scores={self.scores}, target={self.rules.target}, "
            f"dealer={self._dealer}, deals_played={self._deals_played})"
        )
