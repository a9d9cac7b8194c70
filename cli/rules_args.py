"""Rules on the command line, the same for every command that plays (``eval``, ``play``, ``demo``).

``--rules PRESET`` names a variant, ``--rule KEY=VALUE`` changes one option of it (repeatable)
and ``--target N`` is short for ``--rule target=N``::

    scopa eval greedy heuristic --rules napola --rule target=21 --rule fewest_cards_capture=true

Option names and values are checked by argparse, so a bad one stops the command with a message
that names it; options that cannot go together (``capture_sum=15`` with ``ace_takes_all``) are
reported by ``rules_from_args`` with the rules' own message.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from scopa_env.errors import RulesError
from scopa_env.rules import PRESETS, Rules

_FIELDS = {field.name: str(field.type) for field in dataclasses.fields(Rules)}
_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


def parse_rule_option(text: str) -> tuple[str, Any]:
    """``"target=21"`` -> ``("target", 21)``: one rule option, its value typed by ``Rules``.

    Booleans are ``true``/``false`` (also yes/no, on/off, 1/0); ``capture_sum`` is ``15`` or
    ``none``. Raises ``ValueError`` naming the option for an unknown name or a bad value.
    """
    key, sep, raw = text.partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep or not key:
        raise ValueError(f"rule option {text!r} is not of the form KEY=VALUE, e.g. target=21")
    kind = _FIELDS.get(key)
    if kind is None:
        raise ValueError(f"unknown rule option {key!r}; options are {sorted(_FIELDS)}")
    word = raw.lower()
    if kind == "bool":
        if word in _TRUE | _FALSE:
            return key, word in _TRUE
        raise ValueError(f"rule option {key} takes true or false, got {raw!r}")
    if "None" in kind and word in {"none", "null", ""}:
        return key, None
    try:
        return key, int(raw)
    except ValueError:
        expected = "an integer or none" if "None" in kind else "an integer"
        raise ValueError(f"rule option {key} takes {expected}, got {raw!r}") from None


def _rule_argument(text: str) -> tuple[str, Any]:
    try:
        return parse_rule_option(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--rules``, ``--rule`` and ``--target`` to a command's parser."""
    parser.add_argument(
        "--rules", default="scopa", choices=sorted(PRESETS), help="rules preset (default: scopa)"
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        type=_rule_argument,
        metavar="KEY=VALUE",
        help="change one rule option of the preset; repeatable, e.g. --rule target=21 --rule "
        f"fewest_cards_capture=true. Options: {', '.join(_FIELDS)}",
    )
    parser.add_argument(
        "--target", type=int, default=None, help="points that win a match (--rule target=N)"
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The rules named by ``--rules``, ``--rule`` and ``--target``; ``RulesError`` if invalid."""
    options = dict(args.rule)
    if args.target is not None:
        if options.get("target", args.target) != args.target:
            raise RulesError(
                f"--target {args.target} and --rule target={options['target']} disagree"
            )
        options["target"] = args.target
    return Rules.from_dict({**PRESETS[args.rules], **options})
