"""Rule options and the named variants (RULES.md sections 6 and 7)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from scopa_env.errors import RulesError


@dataclass(frozen=True, slots=True)
class Rules:
    """One field per rule option; the defaults are classic two-player Scopa.

    Attributes:
        target: points that end the match (the winner needs at least this and strictly more).
        redeal_three_kings: a random deal with 3 or 4 kings on the table is dealt again.
        fewest_cards_capture: among sum captures only those with the fewest cards are legal.
        last_play_scopa: a sweep with the very last card of the deal scores a scopa.
        ace_takes_all: an ace played to a table without aces captures the whole table.
        ace_sweep_scopa: that whole-table ace capture scores a scopa.
        capture_sum: ``None`` for classic captures, or 15 for scopa a quindici.
        napola: the napola bonus for the coins sequence from the ace.
        re_bello: one point for the king of coins.
    """

    target: int = 11
    redeal_three_kings: bool = True
    fewest_cards_capture: bool = False
    last_play_scopa: bool = False
    ace_takes_all: bool = False
    ace_sweep_scopa: bool = False
    capture_sum: int | None = None
    napola: bool = False
    re_bello: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.target, bool) or not isinstance(self.target, int) or self.target < 1:
            raise RulesError(f"Rules.target must be a positive integer, got {self.target!r}")
        for field in dataclasses.fields(self):
            if field.type == "bool" and not isinstance(getattr(self, field.name), bool):
                raise RulesError(
                    f"Rules.{field.name} must be True or False, got {getattr(self, field.name)!r}"
                )
        if self.capture_sum is not None and (
            isinstance(self.capture_sum, bool) or self.capture_sum != 15
        ):
            raise RulesError(f"Rules.capture_sum must be None or 15, got {self.capture_sum!r}")
        if self.capture_sum is not None and self.ace_takes_all:
            raise RulesError("Rules.ace_takes_all cannot be combined with capture_sum=15")
        if self.ace_sweep_scopa and not self.ace_takes_all:
            raise RulesError("Rules.ace_sweep_scopa needs ace_takes_all=True")

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """The rules of a named variant, optionally with some options changed."""
        if name not in PRESETS:
            raise RulesError(f"unknown rules preset {name!r}; choose one of {sorted(PRESETS)}")
        return cls.from_dict({**PRESETS[name], **overrides})

    @classmethod
    def from_dict(cls, options: dict[str, Any]) -> Rules:
        """Rules from a mapping of option names, rejecting unknown names."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s) {unknown}; options are {sorted(known)}")
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PRESETS: dict[str, dict[str, Any]] = {
    "scopa": {},
    "scopa_d_assi": {"ace_takes_all": True, "ace_sweep_scopa": False},
    "asso_pigliatutto": {"ace_takes_all": True, "ace_sweep_scopa": True},
    "scopa_a_quindici": {"capture_sum": 15},
    "napola": {"napola": True},
    "re_bello": {"re_bello": True},
}


def resolve_rules(rules: Rules | str | dict[str, Any] | None) -> Rules:
    """Accept a ``Rules``, a preset name, a mapping of options or ``None`` (the defaults).

    A mapping may name a preset under ``"preset"``; its other options change that preset, so
    ``{"preset": "napola", "target": 21}`` is napola played to 21.
    """
    if rules is None:
        return Rules()
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return Rules.preset(rules)
    if isinstance(rules, dict):
        options = dict(rules)
        preset = options.pop("preset", None)
        if preset is None:
            return Rules.from_dict(options)
        if not isinstance(preset, str) or preset not in PRESETS:
            raise RulesError(f"unknown rules preset {preset!r}; choose one of {sorted(PRESETS)}")
        return Rules.from_dict({**PRESETS[preset], **options})
    raise RulesError(f"rules must be a Rules, a preset name or a dict, got {type(rules).__name__}")


def describe_rules(rules: Rules) -> str:
    """The nearest preset and what differs from it, as ``--rule`` writes it.

    For example ``napola (target 21, last_play_scopa=true)``; the target is always given.
    """
    fields = [name for name in (f.name for f in dataclasses.fields(Rules)) if name != "target"]
    best_name, best_diff = "scopa", fields
    for name in PRESETS:
        preset = Rules.preset(name)
        diff = [f for f in fields if getattr(rules, f) != getattr(preset, f)]
        if len(diff) < len(best_diff):
            best_name, best_diff = name, diff
    parts = [f"target {rules.target}"]
    for field in best_diff:
        value = getattr(rules, field)
        parts.append(f"{field}={'none' if value is None else str(value).lower()}")
    return f"{best_name} ({', '.join(parts)})"
