"""``scopa play``: a match against any player in the terminal, at any table.

``--table`` picks the table (``scopa_env.tables``: two-player ``scopa`` by default,
``scopa_3``, ``scopa_4``, ``scopa_6``, ``scopone``...); the human plays ``--seat``, every
opponent is ``--opponent`` and, at a table of partnerships, every partner ``--partner``
(e.g. ``scopa play --table scopa_4 --opponent heuristic --partner greedy``).

Moves are typed as card names: ``7D`` plays the seven of coins. When that card has several
legal captures they are listed and one is picked by its number or by its cards
(``7D x 3C 4S`` names the whole move at once). ``moves`` lists every legal move, ``quit`` (or
end of input) leaves; Ctrl-C or SIGTERM leaves too, with exit status 130 (143) as every command
does. Bad input is explained and the prompt comes again.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from cli.arguments import non_negative_int
from cli.rules_args import add_rules_arguments, rules_from_args
from scopa_env.actions import PICK_OFFSET
from scopa_env.cards import card_name, parse_cards
from scopa_env.engine import Move
from scopa_env.environments import make_aec
from scopa_env.errors import TableError
from scopa_env.render import describe_play
from scopa_env.rules import describe_rules
from scopa_env.tables import TABLES, resolve_table

QUIT_WORDS = {"q", "quit", "exit"}
OPPONENTS = ("random", "greedy", "heuristic", "ismcts", "pretrained")


class QuitGame(Exception):
    """The human asked to leave."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--opponent",
        default="heuristic",
        help=f"the player in every opponent's seat: {', '.join(OPPONENTS)}, or a checkpoint path, "
        "optionally with options as name:key=value,... (alphabeta:infer=True)",
    )
    parser.add_argument(
        "--partner",
        default="heuristic",
        help="the player in your partners' seats at a table of partnerships (default: heuristic)",
    )
    add_rules_arguments(parser)
    parser.add_argument(
        "--table",
        default="scopa",
        choices=sorted(TABLES),
        help="the table: scopa (two players, default), scopa_3, scopa_4, scopa_6, scopone...",
    )
    parser.add_argument(
        "--seat",
        type=non_negative_int,
        default=0,
        help="your seat, 0 (leads the first deal) and on",
    )
    parser.add_argument("--seed", type=non_negative_int, default=None, help="seed of the deals")


def run(args: argparse.Namespace) -> int:
    from evaluation.players import PlayerSpec
    from scopa_env.players import check_table

    rules = rules_from_args(args)
    table = resolve_table(args.table)
    if args.seat >= table.players:
        raise TableError(
            f"--seat must be 0 to {table.players - 1} at {table.name}, got {args.seat}"
        )

    def seated(text: str) -> Any:
        spec = PlayerSpec.parse(text)
        player = spec.build(rules, seed=args.seed)
        check_table(player, table, spec.label)
        return player

    opponent = seated(args.opponent)
    others: dict[str, Any] = {}
    line = f"Rules: {describe_rules(rules)}; opponent: {args.opponent}"
    if table.partnerships:
        others["partner"] = seated(args.partner).act
        line += f"; partner: {args.partner}"
    print(line)
    human = table.agents[args.seat]
    env = make_aec(table, rules=rules, render_mode="ansi", show_hands=human)
    try:
        play_match(env, opponent.act, human=args.seat, seed=args.seed, **others)
    except QuitGame:
        print("\nGoodbye.")
    except KeyboardInterrupt:  # stopped: the command line reports the signal, non-zero
        print("\nGoodbye.")
        raise
    return 0


def play_match(
    env: Any,
    opponent: Callable[[dict], int],
    human: int = 0,
    seed: int | None = None,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    partner: Callable[[dict], int] | None = None,
) -> str | tuple[str, ...] | None:
    """Play one match of ``env`` (any table's AEC environment); the human holds seat
    ``human``, ``opponent`` every seat of another side and ``partner`` (default: the
    opponent's player) every other seat of the human's side. Returns the ``"winner"`` info:
    the winner's agent name, the winning partners' names, or ``None`` on a tie."""
    table = env.table
    agents = env.possible_agents
    players = {
        agent: (partner or opponent) if table.side_of(seat) == table.side_of(human) else opponent
        for seat, agent in enumerate(agents)
    }
    env.reset(seed=seed)
    say(f"You are {agents[human]}{_partners_text(table, human, agents)}. Type a card such as "
        "7D, 'moves' for the legal moves, 'quit'.")  # fmt: skip
    deals_seen = 0
    while True:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        if agent == agents[human]:
            say(env.render())
            for action in _actions_for(env, ask_move(env, ask, say)):
                env.step(action)
        else:
            env.step(players[agent](env.observe(agent)))
            if env.phase == "pick":
                continue
        if env.last_play is not None:
            say(describe_play(env.last_play))
        if env.match.deals_played > deals_seen:
            deals_seen = env.match.deals_played
            say(_deal_summary(env))
    winner = env.infos[agents[human]].get("winner")
    mine = winner == agents[human] or (isinstance(winner, tuple) and agents[human] in winner)
    named = " + ".join(winner) if isinstance(winner, tuple) else winner
    say("You win the match!" if mine else f"Match over: {named or 'a tie'}.")
    return winner


def _partners_text(table: Any, human: int, agents: tuple[str, ...]) -> str:
    """``", with player_2 against player_1 and player_3"``; empty at two players."""
    if table.players == 2:
        return ""
    side = table.side_of(human)
    partners = [agents[s] for s in table.seats_of(side) if s != human]
    rivals = [agents[s] for s in range(table.players) if table.side_of(s) != side]
    text = f", with {' and '.join(partners)}" if partners else ""
    return text + f" against {' and '.join(rivals)}"


def ask_move(env: Any, ask: Callable[[str], str], say: Callable[[str], None]) -> Move:
    """Prompt until the human names a legal move."""
    moves = env.deal.legal_moves()
    while True:
        try:
            text = ask("Your move: ").strip()
        except EOFError:
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
        except EOFError:
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


def _actions_for(env: Any, move: Move) -> list[int]:
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


def _deal_summary(env: Any) -> str:
    """Each side's points of the deal by category, and the match score (by side)."""
    table, agents = env.table, env.possible_agents
    info = env.infos[agents[0]]
    lines = ["End of the deal:"]
    for side, score in enumerate(info["deal_score"]):
        name = " + ".join(agents[s] for s in table.seats_of(side))
        parts = ", ".join(f"{k} {v}" for k, v in score.items() if v and k != "total")
        lines.append(f"  {name}: {score['total']} points ({parts or 'nothing'})")
    lines.append("  match score " + "-".join(str(s) for s in info["match_score"]))
    return "\n".join(lines)
