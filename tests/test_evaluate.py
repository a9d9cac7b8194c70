"""The evaluation harness: duplicate pairing, statistics on known data, reports, the CLI."""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import pytest

import agents
from cli import main as cli
from evaluation.harness import duplicate_deck, evaluate, field_report
from evaluation.players import PlayerSpec
from evaluation.records import GameRecord
from evaluation.stats import (
    DECK_RESAMPLES,
    bradley_terry_elo,
    category_differences,
    elo_table,
    field_summaries,
    mean_ci,
    summarise,
)
from scopa_env.cards import mask_of
from scopa_env.info_state import InfoState
from scopa_env.observation import plane
from scopa_env.rules import Rules


class Recorder(agents.GreedyAgent):
    """Greedy, noting the first hand it sees in each game (by the seat it plays)."""

    log: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.first = True

    def act(self, observation):
        if self.first:
            self.first = False
            obs = observation["observation"]
            hand = plane(obs, "hand") + plane(obs, "pending")
            Recorder.log.append(mask_of(np.flatnonzero(hand).tolist()))
        return super().act(observation)


def test_duplicate_pairs_replay_the_deck_with_seats_swapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(agents.AGENTS, "recorder", Recorder)
    Recorder.log = []
    records, summaries, _ = evaluate(["recorder", "random"], deals=6, seed=3)
    assert [(r.pair, r.replica) for r in records] == [(p, k) for p in range(6) for k in (0, 1)]
    # The recorder saw the hand of seat 0 in replica 0 and of seat 1 in replica 1: both hands of
    # the same deck, so they are disjoint, and they are exactly the deck's two first hands.
    for pair in range(6):
        deck, first = duplicate_deck(3, pair, Rules())
        first_hand, dealer_hand = mask_of(deck[0:6:2]), mask_of(deck[1:6:2])
        seat_hands = (first_hand, dealer_hand) if first == 0 else (dealer_hand, first_hand)
        assert Recorder.log[2 * pair] == seat_hands[0]
        assert Recorder.log[2 * pair + 1] == seat_hands[1]
    assert summaries[0].deal_pairs == 6


def test_identical_deterministic_players_tie_every_duplicate_pair() -> None:
    records, summaries, _ = evaluate(["greedy", "greedy:seed=1"], deals=10, seed=0)
    by_pair: dict[int, int] = {}
    for r in records:
        by_pair[r.pair] = by_pair.get(r.pair, 0) + r.points_a - r.points_b
    assert all(total == 0 for total in by_pair.values())
    assert summaries[0].points_per_deal == 0.0
    assert summaries[0].deal_wins == summaries[0].deal_losses


def test_greedy_beats_random_on_a_small_sample() -> None:
    _, summaries, _ = evaluate(["greedy", "random"], deals=40, matches=2, seed=1)
    s = summaries[0]
    assert s.points_per_deal - s.points_per_deal_ci > 0.5
    assert s.deal_wins > 2 * s.deal_losses
    assert s.match_pairs == 2 and 0.0 <= s.match_win_rate <= 1.0


def test_matches_are_played_to_the_target() -> None:
    records, _, _ = evaluate(
        ["greedy", "random"], deals=0, matches=2, rules=Rules(target=5), seed=2
    )
    matches = [r for r in records if r.kind == "match"]
    assert len(matches) == 4
    for r in matches:
        assert max(r.points_a, r.points_b) >= 5 and r.points_a != r.points_b
        assert r.deals >= 1


def test_mean_ci_on_known_data() -> None:
    mean, half = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    assert half == pytest.approx(1.959964 * math.sqrt(5 / 3) / 2, rel=1e-6)
    assert math.isnan(mean_ci([1.0])[1])


def test_bradley_terry_elo_recovers_known_ratings() -> None:
    # Two players, A wins 75% of 400 games: the MLE gap is 400 log10(3) Elo.
    elo, half = bradley_terry_elo(np.array([[0, 300], [100, 0]]), np.array([[0, 400], [0, 0]]),
                                  prior_draws=0)  # fmt: skip
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert elo.mean() == pytest.approx(1500)
    # Its 95% interval: var(theta_A - theta_B) = 1 / (n p q); each rating carries half the gap.
    se_gap = 1 / math.sqrt(400 * 0.75 * 0.25) * 400 / math.log(10)
    assert half[0] == pytest.approx(1.959964 * se_gap / 2, rel=1e-4)
    # Three players with exact expected results of known ratings.
    ratings = np.array([1700.0, 1500.0, 1300.0])
    games = np.array([[0, 100, 100], [0, 0, 100], [0, 0, 0]], dtype=float)
    p = 1 / (1 + 10 ** ((ratings[None, :] - ratings[:, None]) / 400))
    scores = p * (games + games.T)
    elo, _ = bradley_terry_elo(scores, games, prior_draws=0)
    np.testing.assert_allclose(elo, ratings, atol=1e-6)


def test_bradley_terry_keeps_a_perfect_record_finite() -> None:
    elo, half = bradley_terry_elo(np.array([[0, 50], [0, 0]]), np.array([[0, 50], [0, 0]]))
    assert np.isfinite(elo).all() and np.isfinite(half).all()
    assert elo[0] > elo[1] + 400


def test_elo_intervals_from_resampled_decks_see_through_repeated_results() -> None:
    """Results counted twice (as a pair of players meets twice on each deck of a free-for-all
    ladder) narrow the Fisher interval by about a factor of sqrt(2), as if the games were
    twice as many; resampling the decks keeps the interval the decks warrant, and the
    ratings are the same either way."""
    rng = np.random.default_rng(3)
    players = ("X", "Y", "Z")
    strength = {"X": 1.0, "Y": 0.0, "Z": -1.0}
    records = []
    for deck in range(60):
        for replica in range(3):
            for a, b in ((0, 1), (0, 2), (1, 2)):
                pa, pb = players[a], players[b]
                lead = strength[pa] - strength[pb] + rng.normal(0, 3) + deck % 5 - 2
                points = (5, 3) if lead > 0.5 else (3, 5) if lead < -0.5 else (4, 4)
                game = (deck, replica, 0, *points, 1, 0.0, 0.0, 12, 12)
                records.append(GameRecord("deal", a + b, pa, pb, *game))
    twice = records + records

    def intervals(games: list[GameRecord], resample: int = 0) -> dict[str, tuple[float, float]]:
        rows = elo_table(players, games, resample_decks=resample)
        return {row["player"]: (row["elo"], row["elo_ci"]) for row in rows}

    fisher, fisher_twice = intervals(records), intervals(twice)
    resampled = intervals(records, DECK_RESAMPLES)
    resampled_twice = intervals(twice, DECK_RESAMPLES)
    for player in players:
        assert resampled[player][0] == fisher[player][0]
        assert fisher_twice[player][1] == pytest.approx(fisher[player][1] / math.sqrt(2), rel=0.05)
        assert resampled_twice[player][1] == pytest.approx(resampled[player][1], rel=0.05)
    assert elo_table(players, records, resample_decks=DECK_RESAMPLES)[0]["player"] == "X"


def test_player_specs_parse_options() -> None:
    spec = PlayerSpec.parse("ismcts:iterations=40,exploration=0.5,time_limit=None")
    assert spec.name == "ismcts"
    assert dict(spec.options) == {"iterations": 40, "exploration": 0.5, "time_limit": None}
    assert PlayerSpec.parse("runs/a/model.zip").name == "runs/a/model.zip"
    with pytest.raises(ValueError, match="key=value"):
        PlayerSpec.parse("ismcts:iterations")


def test_round_robin_is_reproducible_across_workers() -> None:
    players = ["random", "greedy", "heuristic"]
    one, summaries, elo = evaluate(players, deals=4, seed=5, workers=1, chunk=2)
    two, _, _ = evaluate(players, deals=4, seed=5, workers=2, chunk=2)
    strip = [(r.pairing, r.pair, r.replica, r.points_a, r.points_b, r.categories_a) for r in one]
    assert strip == [(r.pairing, r.pair, r.replica, r.points_a, r.points_b, r.categories_a)
                     for r in two]  # fmt: skip
    assert len(summaries) == 3 and [row["player"] for row in elo] != []


def test_cli_writes_csv_markdown_and_plot(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval"
    code = cli.main(
        ["eval", "greedy", "random", "heuristic", "--deals", "3", "--matches", "1",
         "--rules", "napola", "--target", "4", "--out", str(out), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    for name in ("games.csv", "summary.csv", "elo.csv", "report.md", "report.png"):
        assert (out / name).stat().st_size > 0
    text = capsys.readouterr().out
    assert "| greedy | random | 3 |" in text
    assert "Elo" in text
    games = (out / "games.csv").read_text().splitlines()
    assert len(games) == 1 + 3 * (2 * 3 + 2)


def test_a_checkpoint_rewritten_in_place_is_loaded_again(tmp_path, monkeypatch):
    from evaluation import players as evaluate

    builds: list[str] = []
    monkeypatch.setattr(
        evaluate.PlayerSpec, "build", lambda self, rules: builds.append(self.name) or object()
    )
    checkpoint = tmp_path / "eval_model.zip"
    checkpoint.write_bytes(b"first")
    spec = evaluate.PlayerSpec.parse(str(checkpoint))
    first = evaluate.player_for(spec, Rules())
    assert evaluate.player_for(spec, Rules()) is first
    checkpoint.write_bytes(b"second, longer")
    assert evaluate.player_for(spec, Rules()) is not first
    assert len(builds) == 2


def test_a_trained_policy_plays_on_one_torch_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from evaluation import players as evaluate

    monkeypatch.setattr(evaluate, "_PLAYERS", {})  # built here, not read from an earlier test's
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        evaluate.player_for(evaluate.PlayerSpec.parse("greedy"), Rules())
        assert torch.get_num_threads() == 2  # rule players leave torch alone
        evaluate.player_for(evaluate.PlayerSpec.parse("pretrained"), Rules())
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)


def test_cli_takes_rule_options(tmp_path, monkeypatch, capsys) -> None:
    from cli import eval as harness

    used: list[Rules] = []
    real = harness.evaluate

    def spy(*args, **kwargs):
        used.append(kwargs["rules"])
        return real(*args, **kwargs)

    monkeypatch.setattr(harness, "evaluate", spy)
    code = cli.main(
        ["eval", "greedy", "heuristic", "--deals", "2", "--rules", "napola", "--rule",
         "target=21", "--rule", "fewest_cards_capture=true", "--out", str(tmp_path),
         "--no-progress"]
    )  # fmt: skip
    assert code == 0
    assert used == [Rules.preset("napola", target=21, fewest_cards_capture=True)]
    assert "napola (target 21, fewest_cards_capture=true)" in (tmp_path / "report.md").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["eval", "greedy", "random", "--rule", "napola=maybe"])
    assert exit_info.value.code == 2
    assert "rule option napola takes true or false, got 'maybe'" in capsys.readouterr().err
    assert cli.main(["eval", "greedy", "random", "--rules", "scopa_a_quindici", "--rule",
                     "ace_takes_all=true"]) == 2  # fmt: skip
    assert "cannot be combined with capture_sum=15" in capsys.readouterr().err


@pytest.mark.parametrize(
    "rules",
    [
        Rules.preset("scopa_d_assi", last_play_scopa=True),
        Rules.preset("asso_pigliatutto", fewest_cards_capture=True),
        Rules.preset("scopa_a_quindici", fewest_cards_capture=True, last_play_scopa=True),
        Rules.preset("napola", re_bello=True, target=5),
    ],
    ids=["d_assi+last", "asso+fewest", "quindici+fewest+last", "napola+re_bello"],
)
def test_every_baseline_plays_the_variants(rules: Rules) -> None:
    records, summaries, _ = evaluate(
        ["random", "greedy", "heuristic", "ismcts:iterations=10"], deals=1, matches=1,
        rules=rules, seed=4,
    )  # fmt: skip
    assert len(summaries) == 6 and all(s.deal_pairs == 1 for s in summaries)
    matches = [r for r in records if r.kind == "match"]
    assert all(max(r.points_a, r.points_b) >= rules.target for r in matches)


def test_an_interrupted_evaluation_continues_from_its_journal(tmp_path, monkeypatch) -> None:
    from evaluation import harness

    journal = tmp_path / "journal.jsonl"
    full, _, _ = harness.evaluate(["greedy", "random"], deals=6, chunk=2, journal=journal)
    assert len(journal.read_text().splitlines()) == 1 + 3  # identity, then the three tasks

    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])  # one task, one cut short
    played: list[tuple[int, int]] = []
    real = harness.run_task
    monkeypatch.setattr(harness, "run_task", lambda task: played.append(task.pairs) or real(task))
    resumed, _, _ = harness.evaluate(["greedy", "random"], deals=6, chunk=2, journal=journal)
    assert played == [(2, 4), (4, 6)]

    def results(records):  # CPU timings differ from run to run; everything else is the same
        return [{**asdict(r), "cpu_seconds_a": 0, "cpu_seconds_b": 0} for r in records]

    assert results(resumed) == results(full)

    with pytest.raises(ValueError, match="holds another evaluation"):
        harness.evaluate(["greedy", "random"], deals=6, seed=1, chunk=2, journal=journal)


def test_cli_eval_leaves_no_journal_behind(tmp_path) -> None:
    assert cli.main(["eval", "greedy", "random", "--deals", "2", "--out", str(tmp_path),
                     "--no-progress"]) == 0  # fmt: skip
    assert (tmp_path / "games.csv").is_file()
    assert not (tmp_path / "journal.jsonl").exists()


# Every table --------------------------------------------------------------------------------


class SeatRecorder(agents.GreedyAgent):
    """Greedy at any table, noting its whole hand when it first acts in each game."""

    log: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.first = True

    def act(self, observation):
        if self.first:
            self.first = False
            info = InfoState.from_observation(observation["observation"])
            SeatRecorder.log.append(info.full_hand)
        return super().act(observation)


def test_a_free_for_all_plays_each_deck_in_every_rotation(monkeypatch) -> None:
    monkeypatch.setitem(agents.AGENTS, "seat_recorder", SeatRecorder)
    SeatRecorder.log = []
    players = ["seat_recorder", "random", "greedy"]
    records, summaries, elo = evaluate(players, deals=4, table="scopa_3")
    # Three rotations per deck, a record per pair of players in each game.
    assert [(r.pair, r.replica) for r in records if r.pairing == 0] == [
        (p, k) for p in range(4) for k in range(3)
    ]
    assert len(records) == 4 * 3 * 3 and len(summaries) == 3 and len(elo) == 3
    for pair in range(4):
        deck, _ = duplicate_deck(0, pair, Rules(), "scopa_3")
        hands = SeatRecorder.log[3 * pair : 3 * pair + 3]
        # The recorder held each seat's hand of the same deck once: the first nine cards.
        assert all(h.bit_count() == 3 for h in hands)
        assert hands[0] | hands[1] | hands[2] == mask_of(deck[:9])


def test_identical_players_score_nothing_against_the_field() -> None:
    players = ["greedy", "greedy:seed=1", "greedy:seed=2"]
    records, _, _ = evaluate(players, deals=6, matches=2, table="scopa_3")
    fields = field_report(records, players)
    assert [f.points_vs_field for f in fields] == [0.0, 0.0, 0.0]
    assert all(f.deal_sets == 6 and f.match_sets == 2 for f in fields)
    assert sum(f.match_win_rate for f in fields) <= 1.0


def test_partnerships_of_copies_swap_sides_at_scopa_4_and_scopa_6() -> None:
    for table in ("scopa_4", "scopa_6"):
        records, summaries, _ = evaluate(["heuristic", "heuristic:seed=1"], deals=4, table=table)
        assert [r.replica for r in records] == [0, 1] * 4
        assert summaries[0].points_per_deal == 0.0


def test_category_differences_by_hand() -> None:
    def deal(pair: int, replica: int, a: tuple[int, ...], b: tuple[int, ...]) -> GameRecord:
        record = GameRecord("deal", 0, "A", "B", pair, replica, 0, 0, 0, 1, 0.1, 0.1, 2, 2)
        names = ("cards", "coins", "settebello", "napola")
        record.categories_a = " ".join(f"{n}={v}" for n, v in zip(names, (*a, 0), strict=True))
        record.categories_b = " ".join(f"{n}={v}" for n, v in zip(names, (*b, 0), strict=True))
        return record

    # Cards, coins and settebello of A and of B, each deck played twice, seats swapped.
    records = [
        deal(0, 0, (1, 0, 1), (0, 1, 0)),  # A +1 cards, -1 coins, +1 settebello
        deal(0, 1, (0, 1, 0), (1, 0, 1)),  # the reverse: deck 0 is even in each
        deal(1, 0, (1, 1, 1), (0, 0, 0)),  # +1 +1 +1
        deal(1, 1, (1, 0, 0), (0, 1, 1)),  # +1 -1 -1: deck 1 gives A a card point
    ]
    found = category_differences(records)
    assert list(found) == ["cards", "coins", "settebello"]  # napola: nobody scored it
    # Cards: deck 0 (1 - 1) / 2 = 0, deck 1 (1 + 1) / 2 = 1; coins: 0 and 0; settebello: 0, 0.
    assert found["cards"][0] == 0.5
    assert found["cards"][1] == pytest.approx(1.959964 * math.sqrt(0.5) / math.sqrt(2))
    assert found["coins"] == (0.0, 0.0) and found["settebello"] == (0.0, 0.0)
    matches = [GameRecord("match", 0, "A", "B", 0, 0, 0, 11, 5, 4, 1.0, 1.0, 40, 40)]
    assert category_differences(matches) == {}


def test_the_categories_of_an_evaluation_sum_to_its_points_per_deal(tmp_path) -> None:
    out = tmp_path / "eval"
    args = ["eval", "greedy", "random", "--deals", "40", "--out", str(out), "--no-progress"]
    assert cli.main(args) == 0
    records, _, _ = evaluate(["greedy", "random"], deals=40, workers=1, progress=False)
    found = category_differences(records)
    assert {"cards", "coins", "settebello", "primiera", "scope"} <= set(found)
    total = summarise(records, "greedy", "random").points_per_deal
    assert sum(mean for mean, _ in found.values()) == pytest.approx(total)
    report = (out / "report.md").read_text()
    assert "| A | B | cards | coins | settebello | primiera | scope |" in report
    cards = _fmt_ci(*found["cards"])
    assert f"| greedy | random | {cards} |" in report


def _fmt_ci(mean: float, ci: float) -> str:
    return f"{mean:+.3f} ± {ci:.3f}"


def test_field_summaries_by_hand() -> None:
    def game(pair: int, points: dict[str, int]) -> list[GameRecord]:
        return [
            GameRecord("deal", k, a, b, pair, 0, 0, points[a], points[b], 1, 0.1, 0.2, 2, 4)
            for k, (a, b) in enumerate([("A", "B"), ("A", "C"), ("B", "C")])
        ]

    records = game(0, {"A": 3, "B": 1, "C": 2}) + game(1, {"A": 1, "B": 1, "C": 0})
    a, b, c = field_summaries(records, ["A", "B", "C"])
    # Deck 0: A 3 - (1 + 2) / 2 = 1.5, B -1.5, C 0; deck 1: A and B 0.5, C -1.
    assert (a.points_vs_field, b.points_vs_field, c.points_vs_field) == (1.0, -0.5, -0.5)
    assert a.points_vs_field_ci == pytest.approx(1.959964 * math.sqrt(0.5) / math.sqrt(2))
    assert (a.deal_wins, b.deal_wins, c.deal_wins, a.deals) == (1, 0, 0, 2)  # a tie wins nothing
    assert a.ms_per_move == pytest.approx(1000 * 0.2 / 4)  # A's time counted once a game
    assert c.ms_per_move == pytest.approx(1000 * 0.4 / 8)


def test_cli_eval_free_for_all(tmp_path, capsys) -> None:
    out = tmp_path / "e"
    argv = ["eval", "greedy", "random", "heuristic", "--table", "scopa_3", "--deals", "3"]
    assert cli.main([*argv, "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "points/deal vs field" in text and "field.csv" in text
    assert (out / "field.csv").read_text().count("\n") == 4
    assert cli.main(["eval", "greedy", "random", "--table", "scopa_3", "--out", str(out)]) == 2
    assert "scopa_3 is a free-for-all of 3 players" in capsys.readouterr().err


def test_the_seats_act_on_one_blas_thread_and_the_process_keeps_its_own() -> None:
    """numpy's BLAS threads spin between products and the spinning counts as CPU time of the
    next seat to act: the seats act on one thread, and the process gets its threads back."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from agents import GreedyAgent
    from evaluation.harness import play_game
    from scopa_env.environments import make_aec

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    seen: set[int] = set()

    class Recording(GreedyAgent):
        def act(self, observation):
            seen.update(blas_threads())
            return super().act(observation)

    env = make_aec("scopa", rules=Rules(), episode="deal", reward="points")
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == {2}, "numpy loads a BLAS"
        play_game(env, [Recording(), Recording()], [1, 2], {}, 5)
        assert blas_threads() == {2}
    assert seen == {1}
