"""``scopa play``: a match against any player in the terminal.

Moves are typed as card names: ``7D`` plays the seven of coins. When that card has several
legal captures they are listed and one is picked by its number or by its cards
(``7D x 3C 4S`` names the whole move at once). ``moves`` lists every legal move, ``quit`` (or
Ctrl-C, or end of input) leaves. Bad input is explained and the prompt comes again.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from cli.arguments import non_negative_int
from cli.rules_args import add_rules_arguments, rules_from_args
from scopa_env.cards import card_name, parse_cards
from scopa_env.engine import Move
from scopa_env.render import describe_play
from scopa_env.rules import describe_rules
from scopa_env.scopa_v0 import AGENTS, PICK_OFFSET, raw_env

QUIT_WORDS = {"q", "quit", "exit"}
OPPONENTS = ("random", "greedy", "heuristic", "ismcts", "pretrained")


class QuitGame(Exception):
    """The human asked to leave."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--opponent",
        default="heuristic",
        help=f"the player to face: {', '.join(OPPONENTS)}, or a checkpoint path",
    )
    add_rules_arguments(parser)
    parser.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat")
    parser.add_argument("--seed", type=non_negative_int, default=None, help="seed of the deals")


def run(args: argparse.Namespace) -> int:
    from agents import make_agent

    rules = rules_from_args(args)
    opponent = make_agent(args.opponent, rules=rules, seed=args.seed)
    print(f"Rules: {describe_rules(rules)}; opponent: {args.opponent}")
    env = raw_env(rules=rules, render_mode="ansi", show_hands=AGENTS[args.seat])
    try:
        play_match(env, opponent.act, human=args.seat, seed=args.seed)
    except QuitGame:
        print("\nGoodbye.")
    return 0


def play_match(
    env: raw_env,
    opponent: Callable[[dict], int],
    human: int = 0,
    seed: int | None = None,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> str | None:
    """Play one match; returns the winner's agent name (``None`` on a tie)."""
    env.reset(seed=seed)
    say(f"You are {AGENTS[human]}. Type a card such as 7D, 'moves' for the legal moves, 'quit'.")
    deals_seen = 0
    while True:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        player = AGENTS.index(agent)
        if player == human:
            say(env.render())
            for action in _actions_for(env, ask_move(env, ask, say)):
                env.step(action)
        else:
            env.step(opponent(env.observe(agent)))
            if env.phase == "pick":
                continue
        if env.last_play is not None:
            say(describe_play(env.last_play))
        if env.match.deals_played > deals_seen:
            deals_seen = env.match.deals_played
            say(_deal_summary(env))
    winner = env.infos[AGENTS[human]].get("winner")
    say("You win the match!" if winner == AGENTS[human] else f"Match over: {winner or 'a tie'}.")
    return winner


def ask_move(env: raw_env, ask: Callable[[str], str], say: Callable[[str], None]) -> Move:
    """Prompt until the human names a legal move."""
    moves = env.deal.legal_moves()
    while True:
        try:
            text = ask("Your move: ").strip()
        except (EOFError, KeyboardInterrupt):
            raise QuitGame from None
        if text.lower() in QUIT_WORDS:
            raise QuitGame
        if text.lower() in {"", "moves", "help", "?"}:
            say("Legal moves: " + "; ".join(str(m) for m in moves))
            continue
        try:
            return _parse_move(text, moves, ask, say)
        except ValueError as error:
            say(f"{error} Try again ('moves' lists them).")


def _parse_move(
    text: str, moves: list[Move], ask: Callable[[str], str], say: Callable[[str], None]
) -> Move:
    card_text, _, capture_text = text.lower().partition("x")
    cards = parse_cards(card_text)
    if len(cards) != 1:
        raise ValueError(f"Name one card to play, e.g. 7D; got {card_text.strip()!r}.")
    card = cards[0]
    options = [m for m in moves if m.card == card]
    if not options:
        raise ValueError(f"You don't hold {card_name(card)}.")
    if capture_text.strip():
        wanted = frozenset(parse_cards(capture_text))
        for move in options:
            if move.capture == wanted:
                return move
        raise ValueError(f"{text.strip()} is not legal: " + "; ".join(map(str, options)) + ".")
    if len(options) == 1:
        return options[0]
    return _choose_capture(options, ask, say)


def _choose_capture(
    options: list[Move], ask: Callable[[str], str], say: Callable[[str], None]
) -> Move:
    say(f"{card_name(options[0].card)} can capture in {len(options)} ways:")
    for number, move in enumerate(options, 1):
        say(f"  {number}) {move}")
    while True:
        try:
            text = ask("Capture (number or cards): ").strip()
        except (EOFError, KeyboardInterrupt):
            raise QuitGame from None
        if text.lower() in QUIT_WORDS:
            raise QuitGame
        if text.isdigit() and 1 <= int(text) <= len(options):
            return options[int(text) - 1]
        try:
            wanted = frozenset(parse_cards(text.lower().partition("x")[2] or text))
        except ValueError:
            wanted = frozenset()
        for move in options:
            if move.capture == wanted:
                return move
        say(f"Pick a number from 1 to {len(options)} or name the cards, e.g. {options[0]}.")


def _actions_for(env: raw_env, move: Move) -> list[int]:
    """The actions that make ``move`` in the environment: the card, then picks if asked."""
    actions = [move.card]
    options = env.deal.capture_options(move.card)
    if len(options) > 1:
        remaining = set(move.capture)
        consistent = list(options)
        while len(consistent) > 1:
            pick = min(
                remaining, key=lambda c: sum(c in s for s in consistent)
            )  # the most telling card
            actions.append(PICK_OFFSET + pick)
            remaining.discard(pick)
            consistent = [s for s in consistent if pick in s]
    return actions


def _deal_summary(env: raw_env) -> str:
    info = env.infos[AGENTS[0]]
    lines = ["End of the deal:"]
    for agent, score in zip(AGENTS, info["deal_score"], strict=True):
        parts = ", ".join(f"{k} {v}" for k, v in score.items() if v and k != "total")
        lines.append(f"  {agent}: {score['total']} points ({parts or 'nothing'})")
    lines.append(f"  match score {info['match_score'][0]}-{info['match_score'][1]}")
    return "\n".join(lines)
