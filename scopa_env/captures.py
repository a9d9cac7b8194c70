"""Legal capture sets: the one implementation of RULES.md sections 3 and 7.

Captures are computed on bit masks over card ids. ``capture_sets(table, card, rules)`` is the
reference definition; ``capture_table(rules)`` returns a memoised version of it for the engine's
hot path. Both engines and every player take their captures from here.
"""

from __future__ import annotations

from collections.abc import Callable

from scopa_env.actions import PICK_OFFSET
from scopa_env.cards import ACES_MASK, ALL_CARDS_MASK, CAPTURE_VALUE, NUM_CARDS, cards_of, mask_of
from scopa_env.rules import Rules

_VALUE = [int(v) for v in CAPTURE_VALUE]


def _subsets_summing(cards: tuple[int, ...], total: int, min_size: int) -> list[int]:
    """Masks of the subsets of ``cards`` with at least ``min_size`` cards summing to ``total``."""
    if total <= 0:
        return []
    reach, within = 1, (2 << total) - 1  # bit s: some subset of the cards so far sums to s
    for card in cards:
        reach = (reach | reach << _VALUE[card]) & within
    if not reach >> total & 1:
        return []
    # Every subset within the total, grown a card at a time (sums and masks side by side).
    sums, masks = [0], [0]
    for card in cards:
        value, bit = _VALUE[card], 1 << card
        limit = total - value
        for i in range(len(sums)):
            if sums[i] <= limit:
                sums.append(sums[i] + value)
                masks.append(masks[i] | bit)
    return [m for s, m in zip(sums, masks, strict=True) if s == total and m.bit_count() >= min_size]


def capture_sets(table: int, card: int, rules: Rules) -> tuple[int, ...]:
    """Every capture the rules allow when ``card`` is played to ``table``, each once.

    Returns masks of table cards in increasing order; an empty tuple means the card is trailed.
    """
    return _capture_sets_by_value(table, _VALUE[card], rules)


def _capture_sets_by_value(table: int, value: int, rules: Rules) -> tuple[int, ...]:
    on_table = cards_of(table)
    if rules.capture_sum is not None:
        sets = _subsets_summing(on_table, rules.capture_sum - value, min_size=1)
    elif rules.ace_takes_all and value == 1:
        aces = table & ACES_MASK
        if aces:
            return tuple(1 << c for c in cards_of(aces))
        return (table,) if table else ()
    else:
        equal = [c for c in on_table if _VALUE[c] == value]
        if equal:
            return tuple(1 << c for c in equal)
        sets = _subsets_summing(on_table, value, min_size=2)
    if rules.fewest_cards_capture and sets:
        fewest = min(s.bit_count() for s in sets)
        sets = [s for s in sets if s.bit_count() == fewest]
    return tuple(sorted(sets))


def is_ace_sweep(table: int, card: int, capture: int, rules: Rules) -> bool:
    """Whether this capture is the whole-table take of an ace under ``ace_takes_all``."""
    return (
        rules.ace_takes_all
        and _VALUE[card] == 1
        and capture != 0
        and capture == table
        and not capture & ACES_MASK
    )


def _relevant_cards(rules: Rules) -> list[int]:
    """Per played value, the mask of table cards that can take part in a capture.

    Cards worth more than the capture total never matter, so the memo is keyed on the rest.
    """
    relevant = [ALL_CARDS_MASK] * 11
    for value in range(1, 11):
        if rules.capture_sum is not None:
            limit = rules.capture_sum - value
        elif rules.ace_takes_all and value == 1:
            continue
        else:
            limit = value
        relevant[value] = mask_of(c for c in range(NUM_CARDS) if _VALUE[c] <= limit)
    return relevant


def _memo_keys(rules: Rules) -> tuple[list[int], list[int]]:
    """Per played value, ``(same, rest)``: the captures of ``table`` depend only on
    ``table & same[value]`` when that is not empty (a card of equal value must be taken, and
    each such card alone is a capture), else only on ``table & rest[value]``.

    ``same`` is empty where that rule does not hold (capture sums, the ace taking all)."""
    relevant = _relevant_cards(rules)
    same, rest = [0] * 11, list(relevant)
    if rules.capture_sum is None:
        for value in range(1, 11):
            if not (rules.ace_takes_all and value == 1):
                same[value] = mask_of(c for c in range(NUM_CARDS) if _VALUE[c] == value)
                rest[value] = relevant[value] & ~same[value]
    return same, rest


_TABLES: dict[tuple[bool, bool, int | None], Callable[[int, int], tuple[int, ...]]] = {}
#: The most capture lists each rules' memo holds before it starts afresh.
_MEMO_HELD = 1 << 18


def capture_table(rules: Rules) -> Callable[[int, int], tuple[int, ...]]:
    """A memoised ``(table, card value) -> capture sets`` for the capture options of ``rules``.

    The memo is keyed on the only table cards that can change the answer (``_memo_keys``),
    so positions that differ in other cards share one entry.
    """
    key = (rules.fewest_cards_capture, rules.ace_takes_all, rules.capture_sum)
    table_fn = _TABLES.get(key)
    if table_fn is None:
        capture_rules = Rules(
            fewest_cards_capture=rules.fewest_cards_capture,
            ace_takes_all=rules.ace_takes_all,
            capture_sum=rules.capture_sum,
        )
        same, rest = _memo_keys(capture_rules)
        memo: dict[int, tuple[int, ...]] = {}

        def table_fn(table: int, value: int) -> tuple[int, ...]:
            key = (table & same[value] or table & rest[value]) << 4 | value
            sets = memo.get(key)
            if sets is None:
                if len(memo) >= _MEMO_HELD:
                    memo.clear()
                sets = memo[key] = _capture_sets_by_value(key >> 4, value, capture_rules)
            return sets

        table_fn.relevant = _relevant_cards(capture_rules)  # type: ignore[attr-defined]
        _TABLES[key] = table_fn
    return table_fn


def consistent_sets(options: tuple[int, ...], picked: int) -> list[int]:
    """The capture sets that contain every table card picked so far."""
    return [s for s in options if s & picked == picked]


def pickable_cards(options: tuple[int, ...], picked: int) -> int:
    """Mask of the table cards that, picked next, still lead to some legal capture set."""
    mask = 0
    for s in options:
        if s & picked == picked:
            mask |= s
    return mask & ~picked


def choose_capture(
    action: int,
    table: int,
    capture_sets: Callable[[int, int], tuple[int, ...]],
    pending: int | None,
    options: tuple[int, ...],
    picked: int,
) -> tuple[int | None, tuple[int, ...], int, tuple[int, int] | None]:
    """One action of a turn, as every environment reads it (``scopa_env.actions``).

    ``capture_sets(table, value)`` is the rules' ``capture_table``; ``pending``, ``options``
    and ``picked`` are the capture choice in progress (``None, (), 0`` when there is none).
    Returns the choice still open with no play, or ``None, (), 0`` and the resolved
    ``(card, capture mask)`` once the action decides the play.
    """
    if pending is None:
        options = capture_sets(table, _VALUE[action])
        if len(options) > 1:  # a choice: the same player picks table cards next
            return action, options, 0, None
        return None, (), 0, (action, options[0] if options else 0)
    picked |= 1 << (action - PICK_OFFSET)
    sets = consistent_sets(options, picked)
    if len(sets) > 1:
        return pending, options, picked, None
    return None, (), 0, (pending, sets[0])
