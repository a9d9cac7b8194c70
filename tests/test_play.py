"""``scopa play``: typed moves, capture choices, bad input and quitting, on scripted input."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cli.play import QuitGame, _actions_for, ask_move, play_match
from scopa_env.cards import parse_card, parse_cards
from scopa_env.rules import Rules
from scopa_env.scopa_v0 import raw_env


def first_legal(observation: dict) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


def scripted(answers: list[str]):
    replies = iter(answers)

    def ask(prompt: str) -> str:
        try:
            return next(replies)
        except StopIteration:
            raise EOFError from None

    return ask


def deck_with(hand0: str, hand1: str, table: str) -> list[int]:
    """A deck whose first deal gives these hands (first player 0) and table."""
    h0, h1, t = parse_cards(hand0), parse_cards(hand1), parse_cards(table)
    rest = [c for c in range(40) if c not in {*h0, *h1, *t}]
    return [h0[0], h1[0], h0[1], h1[1], h0[2], h1[2], *t, *rest]


def env_at(hand0: str, hand1: str, table: str) -> raw_env:
    env = raw_env(render_mode="ansi", show_hands="player_0")
    env.reset(options={"deck": deck_with(hand0, hand1, table), "first_player": 0})
    return env


def test_capture_choice_by_number_and_by_cards():
    env = env_at("7C 2B 3B", "4D 4C 4S", "7D 7S AB 6D")
    said: list[str] = []
    move = ask_move(env, scripted(["7C", "2"]), said.append)
    assert move.card == parse_card("7C")
    assert move.capture == frozenset({parse_card("7S")})
    assert any("2 ways" in line for line in said)
    move = ask_move(env, scripted(["7c x 7d"]), said.append)
    assert move.capture == frozenset({parse_card("7D")})


def test_bad_input_is_explained_and_asked_again():
    env = env_at("7C 2B 3B", "4D 4C 4S", "7D 7S AB 6D")
    said: list[str] = []
    move = ask_move(env, scripted(["9Z", "KD", "7C x 6D", "moves", "2B"]), said.append)
    assert move.card == parse_card("2B") and not move.capture
    assert any("not a card name" in line for line in said)
    assert any("don't hold KD" in line for line in said)
    assert any("is not legal" in line for line in said)
    assert any(line.startswith("Legal moves") for line in said)


@pytest.mark.parametrize("answer", ["quit", None])
def test_quit_and_end_of_input_leave_cleanly(answer):
    env = env_at("7C 2B 3B", "4D 4C 4S", "7D 7S AB 6D")
    with pytest.raises(QuitGame):
        ask_move(env, scripted([] if answer is None else [answer]), print)


def _interrupted(prompt: str) -> str:
    raise KeyboardInterrupt


def test_ctrl_c_at_the_prompt_is_a_stop_not_a_quit():
    env = env_at("7C 2B 3B", "4D 4C 4S", "7D 7S AB 6D")
    with pytest.raises(KeyboardInterrupt):
        ask_move(env, _interrupted, print)


@pytest.mark.slow
def test_sigterm_at_the_prompt_exits_143_with_the_stop_line():
    """A killed ``scopa play`` says goodbye and reports the signal, as every command does."""
    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "play", "--opponent", "greedy", "--seed", "0"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    seen = ""
    deadline = time.monotonic() + 60
    while "Your move: " not in seen:  # input() flushes its prompt
        assert process.poll() is None and time.monotonic() < deadline, seen
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if ready:
            seen += os.read(process.stdout.fileno(), 4096).decode()
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 143
    assert "Goodbye." in seen + out and "scopa play: stopped by SIGTERM" in err


def test_actions_for_a_chosen_capture_reach_it():
    env = env_at("7C 2B 3B", "4D 4C 4S", "7D 7S AB 6D")
    move = ask_move(env, scripted(["7C", "1"]), print)
    for action in _actions_for(env, move):
        env.step(action)
    assert set(env.deal.captures[0]) == {parse_card("7C"), *move.capture}


def test_a_whole_match_against_an_agent(monkeypatch):
    env = raw_env(render_mode="ansi", show_hands="player_1")
    said: list[str] = []

    def human(prompt: str) -> str:
        # Always the first legal move, typed as a full card-and-capture name.
        move = env.deal.legal_moves()[0]
        return str(move).replace("(trail)", "")

    winner = play_match(env, first_legal, human=1, seed=3, ask=human, say=said.append)
    assert winner in {"player_0", "player_1", None}
    assert any(line.startswith("End of the deal") for line in said)
    assert env.match.is_over


def test_rules_presets_and_options_reach_the_game(monkeypatch, capsys):
    from cli import main as cli
    from cli import play

    seen = {}

    def fake_match(env, opponent, human=0, seed=None):
        seen["env"], seen["opponent"] = env.rules, opponent.__self__.rules

    monkeypatch.setattr(play, "play_match", fake_match)
    argv = ["play", "--opponent", "heuristic", "--rules", "napola", "--rule", "target=21",
            "--rule", "fewest_cards_capture=true"]  # fmt: skip
    assert cli.main(argv) == 0
    expected = Rules.preset("napola", target=21, fewest_cards_capture=True)
    assert seen == {"env": expected, "opponent": expected}
    assert "Rules: napola (target 21, fewest_cards_capture=true)" in capsys.readouterr().out


def test_opponent_options_reach_the_player(monkeypatch):
    from cli import main as cli
    from cli import play

    seen = {}

    def fake_match(env, opponent, human=0, seed=None):
        player = opponent.__self__
        seen.update(infer=player.inference, samples=player.samples)

    monkeypatch.setattr(play, "play_match", fake_match)
    assert cli.main(["play", "--opponent", "alphabeta:infer=True,samples=16"]) == 0
    assert seen == {"infer": True, "samples": 16}


def test_bad_rule_options_are_clear_errors(capsys):
    from cli import main as cli

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["play", "--rule", "colour=red"])
    assert exit_info.value.code == 2
    assert "unknown rule option 'colour'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["play", "--rule", "last_play_scopa=perhaps"])
    assert "last_play_scopa takes true or false, got 'perhaps'" in capsys.readouterr().err
    assert cli.main(["play", "--rules", "scopa_a_quindici", "--rule", "ace_takes_all=1"]) == 2
    assert "cannot be combined with capture_sum=15" in capsys.readouterr().err


def test_a_whole_match_in_a_variant():
    from agents import GreedyAgent

    rules = Rules.preset("asso_pigliatutto", target=4, last_play_scopa=True)
    env = raw_env(rules=rules, render_mode="ansi", show_hands="player_0")
    said: list[str] = []

    def human(prompt: str) -> str:
        return str(env.deal.legal_moves()[-1]).replace("(trail)", "")

    winner = play_match(env, GreedyAgent(rules).act, seed=5, ask=human, say=said.append)
    assert winner in {"player_0", "player_1"}
    assert max(env.match.scores) >= 4


def test_a_partnership_match_gives_each_seat_its_player() -> None:
    from scopa_env.environments import make_aec

    rules = Rules(target=3)
    env = make_aec("scopa_4", rules=rules, render_mode="ansi", show_hands="player_1")
    seats: dict[str, set[str]] = {"opponent": set(), "partner": set()}

    def as_(role: str):
        def act(observation: dict) -> int:
            seats[role].add(env.agent_selection)
            return first_legal(observation)

        return act

    def human(prompt: str) -> str:
        assert env.agent_selection == "player_1"
        return str(env.deal.legal_moves()[0]).replace("(trail)", "")

    said: list[str] = []
    winner = play_match(
        env, as_("opponent"), human=1, seed=4, ask=human, say=said.append, partner=as_("partner")
    )
    assert seats == {"opponent": {"player_0", "player_2"}, "partner": {"player_3"}}
    assert said[0].startswith("You are player_1, with player_3 against player_0 and player_2")
    assert any("\n  player_1 + player_3: " in line for line in said)
    assert env.match.is_over and max(env.match.scores) >= 3
    assert winner in {("player_0", "player_2"), ("player_1", "player_3")}
    assert said[-1] == (
        "You win the match!" if winner == ("player_1", "player_3")
        else "Match over: player_0 + player_2."
    )  # fmt: skip


def test_a_free_for_all_match_at_scopa_3() -> None:
    from scopa_env.environments import make_aec

    env = make_aec("scopa_3", rules=Rules(target=3), render_mode="ansi", show_hands="player_2")

    def human(prompt: str) -> str:
        return str(env.deal.legal_moves()[-1]).replace("(trail)", "")

    said: list[str] = []
    winner = play_match(env, first_legal, human=2, seed=1, ask=human, say=said.append)
    assert said[0].startswith("You are player_2 against player_0 and player_1")
    assert any(re.search(r"match score \d+-\d+-\d+$", line) for line in said)
    assert winner in {"player_0", "player_1", "player_2", None}


def test_cli_play_takes_the_table_the_seat_and_the_partner(monkeypatch, capsys):
    from cli import main as cli
    from cli import play

    seen = {}

    def fake_match(env, opponent, human=0, seed=None, partner=None):
        seen.update(table=env.table.name, human=human, show=env.show_hands)
        seen.update(opponent=type(opponent.__self__).__name__)
        seen.update(partner=type(partner.__self__).__name__)

    monkeypatch.setattr(play, "play_match", fake_match)
    argv = ["play", "--table", "scopa_4", "--seat", "3", "--opponent", "heuristic",
            "--partner", "greedy"]  # fmt: skip
    assert cli.main(argv) == 0
    assert seen == {
        "table": "scopa_4", "human": 3, "show": "player_3",
        "opponent": "HeuristicAgent", "partner": "GreedyAgent",
    }  # fmt: skip
    assert "opponent: heuristic; partner: greedy" in capsys.readouterr().out
    assert cli.main(["play", "--table", "scopa_3", "--seat", "3"]) == 2
    assert "--seat must be 0 to 2 at scopa_3, got 3" in capsys.readouterr().err


def test_cli_play_refuses_a_network_of_another_table(capsys):
    from cli import main as cli

    assert cli.main(["play", "--opponent", "pretrained_scopa_4"]) == 2
    assert "pretrained_scopa_4 was trained for the 'scopa_4' table, not 'scopa'" in (
        capsys.readouterr().err
    )
    argv = ["play", "--table", "scopa_4", "--opponent", "greedy", "--partner", "pretrained_v5"]
    assert cli.main(argv) == 2
    assert "pretrained_v5 was trained for the 'scopa' table, not 'scopa_4'" in (
        capsys.readouterr().err
    )


def test_cli_play_gives_the_partner_its_options(monkeypatch):
    from cli import main as cli
    from cli import play

    seen = {}

    def fake_match(env, opponent, human=0, seed=None, partner=None):
        seen.update(samples=partner.__self__.samples)

    monkeypatch.setattr(play, "play_match", fake_match)
    argv = ["play", "--table", "scopa_4", "--partner", "alphabeta:samples=4"]
    assert cli.main(argv) == 0
    assert seen == {"samples": 4}


def test_cli_play_seeds_the_players_unless_their_options_do(monkeypatch):
    from agents import make_agent
    from cli import main as cli
    from cli import play

    seen = {}

    def fake_match(env, opponent, human=0, seed=None, partner=None):
        seen.update(opponent=opponent.__self__.rng, partner=partner.__self__.rng)

    monkeypatch.setattr(play, "play_match", fake_match)
    argv = ["play", "--table", "scopa_4", "--seed", "5", "--opponent", "ismcts:seed=3",
            "--partner", "ismcts"]  # fmt: skip
    assert cli.main(argv) == 0
    state = {name: rng.bit_generator.state for name, rng in seen.items()}
    assert state == {
        "opponent": make_agent("ismcts", seed=3).rng.bit_generator.state,
        "partner": make_agent("ismcts", seed=5).rng.bit_generator.state,
    }
