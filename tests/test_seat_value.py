"""The seat-value network and its player (``agents.seat_value``) and its fit
(``training.seat_value``, ``scopa seat-value``), on hand-built positions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import (
    SEVENS_AND_COINS,
    assert_plays_a_match,
    card_mask,
    choice_at,
    last_round,
    observe_deal,
    opening_trail,
    play_deals,
)
from conftest import settebello_sweep as sweep_position

from agents import AlphaBetaAgent, GreedyAgent, make_agent
from agents.inference import OpponentPlay, PlayTracker
from agents.last_round import GLOBAL_FEATURES, LastRoundAgent, LastRoundValue
from agents.seat_value import (
    NO_PLAYS,
    PLAY_FEATURES,
    SEAT_FEATURES,
    SEAT_FIELDS,
    SeatEnsemble,
    SeatValue,
    SeatValueAgent,
    encode,
    play_fields,
    seat_rows,
)
from cli.main import main
from scopa_env.cards import parse_card, parse_cards
from scopa_env.errors import CheckpointError, PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules, resolve_rules
from training.last_round import afterstates_of, fit, regret, save
from training.seat_value import round_plays, seat_afterstates
from training.warm_start import Decisions, collect


@pytest.fixture
def network(tmp_path: Path) -> Path:
    """An untrained small network's file."""
    path = tmp_path / "seat.pt"
    torch.manual_seed(0)
    save(SeatValue(width=8, layers=1, heads=2), path)
    return path


def sweep_rows() -> tuple[InfoState, dict[int, tuple[int, ...]]]:
    """I hold 7D KB 2C before 3S 4S, the opponent having taken AC AS (``settebello_sweep``):
    each of my cards' afterstate row."""
    observation = observe_deal(sweep_position())
    info = InfoState.from_observation(observation["observation"])
    moves, rows = seat_rows(info, observation["observation"], Rules())
    return info, {card: row for (card, _), row in zip(moves, rows, strict=True)}


def test_each_move_leaves_the_position_the_mover_sees() -> None:
    info, rows = sweep_rows()
    assert sorted(rows) == sorted(parse_cards("7D KB 2C"))
    unseen = (1 << 40) - 1 - card_mask("7D KB 2C 3S 4S AC AS")  # the other hand and the stock
    assert info.unseen == unseen
    # 7D takes 3S+4S, the whole table: a scopa, and the last capture is mine.
    assert rows[parse_card("7D")] == (
        card_mask("KB 2C"), unseen, 0, card_mask("7D 3S 4S"), card_mask("AC AS"), 1, 0, 1, 30, 3,
        0, 0, 0,  # the opponent's plays this round: none given
    )  # fmt: skip
    # KB trails: the table grows, the last capture stays the opponent's.
    assert rows[parse_card("KB")] == (
        card_mask("7D 2C"), unseen, card_mask("3S 4S KB"), 0, card_mask("AC AS"), 0, 0, 2, 30, 3,
        0, 0, 0,
    )  # fmt: skip


def test_the_features_of_the_unseen_cards_the_table_and_the_hand() -> None:
    _, rows = sweep_rows()
    net = SeatValue(width=8, layers=1, heads=2)
    trail = rows[parse_card("KB")]
    tokens, counts, g = encode(np.array([trail, rows[parse_card("7D")]]), net._threats)
    assert g.shape == (2, GLOBAL_FEATURES + SEAT_FEATURES)
    # Tokens: my hand and the table, never a card of the other hand.
    assert counts.tolist() == [5, 2]
    assert tokens[0, :5, 0].sum() == 2 and tokens[0, :5, 2].sum() == 3 and not tokens[..., 1].any()
    row = g[0]
    unseen = parse_cards("AD 2D 3D 4D 5D 6D JD QD KD")  # every coin but 7D
    assert all(row[322 + c] == 1 for c in unseen) and row[322 + parse_card("7D")] == 0
    assert row[322 + parse_card("AC")] == 0 and row[322 + parse_card("3S")] == 0
    assert row[362 + 6] == 0.75  # three sevens unseen: 7C 7S 7B
    assert row[362 + 0] == 0.5  # two aces: AD AB (AC, AS taken)
    assert row[372] == 1.0 and row[373] == 1.0 and row[321] == 1.0  # 30 in stock, 3 in hand
    # On 3S 4S KB: a 3, 4 or king takes one card, a 7 takes 3S+4S; nothing sweeps.
    captures, sweeps, most = row[374:384], row[384:394], row[394:404]
    np.testing.assert_array_equal(np.flatnonzero(captures) + 1, [3, 4, 7, 10])
    assert not sweeps.any()
    assert most[6] == 0.5 and most[2] == most[3] == most[9] == 0.25
    # After the sweep the table is empty: no card captures.
    assert not g[1, 374:404].any()
    # My hand after the trail: 7D 2C, one seven and one two.
    assert row[404 + 6] == row[404 + 1] == pytest.approx(1 / 3) and row[404:414].sum() == (
        pytest.approx(2 / 3)
    )
    # The other hand's primiera slots describe the unseen cards: the best unseen coin is 6D.
    coins = parse_card("7D") // 10
    start = 104 + 9 * (4 * 3 + coins)
    assert np.flatnonzero(row[start : start + 9]).tolist() == [7]  # 18, the 7th value up


class Sweeper:
    """A stand-in network: cards in my pile minus cards in the other's, so that the player
    reading it takes as many cards as it can."""

    plays = False

    def values(self, rows: np.ndarray) -> np.ndarray:
        return np.array([int(r[3]).bit_count() - int(r[4]).bit_count() for r in rows], float)


def test_the_player_plays_the_best_afterstate_and_the_last_round_by_its_network(
    network: Path,
) -> None:
    player = SeatValueAgent(network=str(network))
    player.net = Sweeper()  # type: ignore[assignment]
    observation = observe_deal(sweep_position())
    assert player.act(observation) == parse_card("7D")
    # In the last round it plays as ``last_round`` does, with the same network.
    deal = last_round("KD 5B", "6S JB", "2S 3C 5C", SEVENS_AND_COINS)
    last = observe_deal(deal)
    reference = LastRoundAgent(base="greedy")
    assert player.act(last) == reference.act(last)


def test_the_player_batches_as_it_plays_and_never_plays_an_illegal_action(
    network: Path,
) -> None:
    players = {f"player_{i}": SeatValueAgent(network=str(network)) for i in (0, 1)}
    actions = play_deals(players, range(4))
    assert len(actions) > 0
    assert_plays_a_match(players["player_0"])
    player = players["player_0"]
    observations = [observe_deal(sweep_position())]
    observations += [observe_deal(last_round("KD 5B", "6S JB", "2S 3C 5C", SEVENS_AND_COINS))]
    obs = np.stack([o["observation"] for o in observations])
    masks = np.stack([o["action_mask"] for o in observations])
    assert player.act_batch(obs, masks).tolist() == [player.act(o) for o in observations]


def test_bad_networks_and_tables_are_refused(network: Path, tmp_path: Path) -> None:
    last = tmp_path / "last.pt"
    save(LastRoundValue(width=8, layers=1, heads=2), last)
    with pytest.raises(CheckpointError, match="is not a seat-value network"):
        make_agent("seat_value", network=str(last))
    with pytest.raises(CheckpointError, match="no seat-value network at"):
        make_agent("seat_value", network=str(tmp_path / "absent.pt"))
    with pytest.raises(PlayerError, match="learnt"):
        make_agent("seat_value", network=str(network), rules="scopa_a_quindici")
    player = make_agent("seat_value", network=str(network))
    with pytest.raises(PlayerError, match="plays two-player Scopa"):
        player.act(choice_at("scopa_4"))


def decisions() -> Decisions:
    """Decisions of a cheap search (two sampled deals, one ply) in whole deals, with its value
    of every legal move."""
    from scopa_env.vector_env import ScopaVecEnv

    env = ScopaVecEnv(4, opponent="greedy", episode="deal", reward="points", seed=0)
    env.draw_opponents = lambda: None
    return collect(env, AlphaBetaAgent(samples=2, depth=1, seed=0), 240, 1.0)


def test_the_fit_takes_the_decisions_before_the_last_round_and_lowers_their_regret(
    network: Path,
) -> None:
    data = decisions()
    before, last = seat_afterstates(data, Rules()), afterstates_of(data, Rules())
    valued = ~np.isnan(data.values).all(axis=1) & (data.masks.sum(axis=1) > 1)
    assert before.decisions > 40 and last.decisions > 0
    assert before.decisions + last.decisions == valued.sum()  # every valued decision, once
    assert np.isnan(before.exact).all()  # no move before the last round ends the deal
    torch.manual_seed(0)
    net = SeatValue(width=16, layers=1, heads=2)
    start, _ = regret(net, before)
    fit(before, net, 40, 8, 3e-3, 0)
    fitted, _ = regret(net, before)
    assert fitted < start / 2
    # The player picks by the values the fit taught: its regret on the same decisions is the
    # fit's.
    player = SeatValueAgent(network=str(network))
    player.net = net
    info = [InfoState.from_observation(o) for o in data.obs]
    early = [
        i for i, (o, m, v) in enumerate(zip(data.obs, data.masks, data.values, strict=True))
        if m.sum() > 1 and not np.isnan(v[m]).any() and info[i].stock_size > 0
    ]  # fmt: skip
    picks = player.act_batch(data.obs[early], data.masks[early])
    values = data.values[early]
    lost = np.nanmax(values, axis=1) - values[np.arange(len(early)), picks]
    assert len(early) == before.decisions
    assert lost.mean() == pytest.approx(fitted, abs=1e-6)


def test_the_command_fits_a_network_the_player_plays(tmp_path: Path, capsys) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    np.savez(tasks / "task_0000.npz", **decisions()._asdict())
    out = tmp_path / "seat.pt"
    shape = ["--width", "8", "--heads", "2", "--layers", "1"]
    args = ["seat-value", "--tasks", str(tasks), "--out", str(out), *shape]
    assert main([*args, "--epochs", "2", "--batch-size", "16"]) == 0
    assert "decisions before the last round" in capsys.readouterr().out
    assert SeatValue.load(out).width == 8
    player = make_agent("seat_value", network=str(out))
    assert play_deals({"player_0": player, "player_1": GreedyAgent()}, range(2))
    # --init starts from a saved network of the same shape (a fit that barely moves ends
    # near it); another shape is refused.
    again = tmp_path / "again.pt"
    still = ["--epochs", "1", "--learning-rate", "1e-12", *shape]
    capsys.readouterr()
    held = ["--held", str(tasks)]
    assert main([*args[:4], str(again), *still, *held, "--init", str(out)]) == 0
    assert f"held-out regret of {out}: " in capsys.readouterr().out
    fitted, started = SeatValue.load(out).state_dict(), SeatValue.load(again).state_dict()
    assert all(torch.allclose(fitted[k], started[k], atol=1e-6) for k in fitted)
    assert main([*args[:4], str(again), *still]) == 0  # from fresh weights: elsewhere
    fresh = SeatValue.load(again).state_dict()
    assert not all(torch.allclose(fitted[k], fresh[k], atol=1e-6) for k in fitted)
    wider = ["--width", "16", "--heads", "2", "--layers", "1"]
    with pytest.raises(SystemExit, match="is a network of width 8"):
        main([*args[:4], str(again), "--init", str(out), *wider])
    # --plays makes a network that reads the opponent's plays; it starts from no other kind.
    plays = tmp_path / "plays.pt"
    assert main([*args[:4], str(plays), *shape, "--epochs", "1", "--plays"]) == 0
    assert SeatValue.load(plays).plays and not SeatValue.load(out).plays
    with pytest.raises(SystemExit, match="'plays': True"):
        main([*args[:4], str(again), *shape, "--init", str(out), "--plays"])


def test_the_dagger_config_plays_the_network_against_the_search_and_itself(network: Path) -> None:
    from training.config import load_config
    from training.train import warm_start_task

    config = load_config(
        "configs/dagger_seat_value.yaml", [f"warm_start.rollin_options={{network: {network}}}"]
    )
    env, teacher, rollin = warm_start_task(config, 0)
    assert isinstance(rollin, SeatValueAgent) and type(teacher).__name__ == "ValueAlphaBetaAgent"
    assert (
        isinstance(env.baselines["rollin"], SeatValueAgent)
        and env.baselines["rollin"] is not rollin
    )
    assert set(env.draw_opponents()) <= {"ismcts", "rollin"}
    shipped = warm_start_task(load_config("configs/dagger_seat_value.yaml"), 0)[2]
    saved = SeatValue.load(SeatValue.SHIPPED).state_dict()  # without options: the shipped one
    assert all(torch.equal(w, saved[k]) for k, w in shipped.net.state_dict().items())


def test_the_shipped_network_takes_the_sweep_and_plays_by_default() -> None:
    """``settebello_sweep``: 7D sweeps 3S+4S with the settebello, where KB and 2C trail and give
    the opponent the table; the shipped network values the sweep highest."""
    player = make_agent("seat_value")
    assert player.net.rules == Rules() and player.net.width == 128
    observation = observe_deal(sweep_position())
    info = InfoState.from_observation(observation["observation"])
    moves, rows = seat_rows(info, observation["observation"], Rules())
    values = dict(zip((card for card, _ in moves), player.net.values(np.array(rows)), strict=True))
    assert max(values, key=values.__getitem__) == parse_card("7D")
    assert values[parse_card("7D")] > values[parse_card("KB")] + 1  # a scopa and the settebello
    assert player.act(observation) == parse_card("7D")


def test_the_shipped_ensemble_takes_the_sweep_by_name() -> None:
    """Three networks fitted apart, one reading the opponent's plays; their mean values the
    sweep of ``settebello_sweep`` highest, as each does."""
    player = make_agent("seat_value", network="ensemble")
    assert isinstance(player.net, SeatEnsemble) and player.follows_deal
    assert [net.width for net in player.net.networks] == [128, 256, 128]
    assert [net.plays for net in player.net.networks] == [False, False, True]
    observation = observe_deal(sweep_position())
    assert player.act(observation) == parse_card("7D")
    single, default = make_agent("seat_value", network="single").net, make_agent("seat_value").net
    assert all(torch.equal(w, default.state_dict()[k]) for k, w in single.state_dict().items())


def test_the_opponents_plays_this_round_are_features() -> None:
    """``opening_trail``: the opponent led by trailing 2B onto 7S 5C 3S JB, where a 3, 5, 7 or
    8 would have taken its like and a king 3S+7S; nothing sweeps a table of 23 points."""
    deal, table = opening_trail()
    observation = observe_deal(deal)
    info = InfoState.from_observation(observation["observation"])
    tracker = PlayTracker()
    tracker.observe(info)
    fields = play_fields(tracker.this_round(info))
    two = parse_card("2B")
    assert fields == (1 | 1 << 1 | two << 3 | table << 9, 0, 0)
    net = SeatValue(width=8, layers=1, heads=2, plays=True)
    moves, rows = seat_rows(info, observation["observation"], Rules(), fields)
    assert all(row[SEAT_FIELDS:] == fields for row in rows)
    features = net._play_features(*fields) * 3
    trails, sweeps, played = features[:10], features[10:20], features[20:30]
    assert np.flatnonzero(trails).tolist() == [3 - 1, 5 - 1, 7 - 1, 8 - 1, 10 - 1]
    assert not sweeps.any()
    assert np.flatnonzero(played).tolist() == [2 - 1]
    assert features[30:].tolist() == [1, 1]  # one play, a trail
    _, _, g = encode(np.array(rows), net._threats)
    assert net.of_rows(np.array(rows)).shape == (len(moves),)
    assert g.shape[1] + PLAY_FEATURES == net.global_in[0].in_features
    with pytest.raises(ValueError, match="reads the opponent's plays"):
        net.of_rows(np.array(rows)[:, :SEAT_FIELDS])


def test_a_play_since_lifts_what_an_earlier_trail_said() -> None:
    """Two trails onto tables a 5 would have captured from: each says 'no 5 in hand', unless
    the opponent played a 5 after it (it held one then)."""
    net = SeatValue(width=8, layers=1, heads=2, plays=True)
    five_table = card_mask("5C")

    def trail(card: str) -> OpponentPlay:
        return OpponentPlay(five_table, parse_card(card), 0, 3)

    kept = net._play_features(*play_fields([trail("KB"), trail("QB")])) * 3
    assert kept[5 - 1] == 2
    lifted = net._play_features(*play_fields([trail("5B"), trail("QB")])) * 3
    assert lifted[5 - 1] == 1  # 5B, the most recent, trailed onto 5C: a capture declined
    capture = OpponentPlay(card_mask("3S 4S"), parse_card("7D"), card_mask("3S 4S"), 3)
    swept = net._play_features(*play_fields([capture])) * 3
    assert not swept[10:20].any() and not swept[0:10].any() and swept[30:].tolist() == [1, 0]


def _player_0_decisions(seed: int) -> list[np.ndarray]:
    """Player 0's observations of a random deal of ``scopa_v0``, forced moves included."""
    from scopa_env import scopa_v0

    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = []
    while not env.terminations[env.agent_selection]:
        observation = env.observe(env.agent_selection)
        if env.agent_selection == "player_0":
            seen.append(observation["observation"])
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return seen


def test_round_plays_follow_each_game_of_decisions_saved_side_by_side() -> None:
    """As a warm start saves them: step by step, four games of two deals each side by side,
    the shorter games' rows ending first; each decision's plays are its own game's."""
    games = [_player_0_decisions(2 * g) + _player_0_decisions(2 * g + 1) for g in range(4)]
    rows, truth = [], []
    trackers = [PlayTracker() for _ in games]
    expected: list[list[tuple[int, ...]]] = [[] for _ in games]
    for g, game in enumerate(games):
        for vector in game:
            info = InfoState.from_observation(vector)
            trackers[g].observe(info)
            expected[g].append(play_fields(trackers[g].this_round(info)))
    for t in range(max(map(len, games))):
        for g, game in enumerate(games):
            if t < len(game):
                rows.append(game[t])
                truth.append(expected[g][t])
    plays = round_plays(np.array(rows))
    assert plays == truth
    assert sum(fields[0] != 0 for fields in plays) > len(plays) / 2
    # Games side by side beyond the window lose the thread: nothing is made up.
    blind = round_plays(np.array(rows), window=2)
    assert all(b in (t, NO_PLAYS) for b, t in zip(blind, truth, strict=True))
    assert blind != truth


def test_the_plays_of_a_warm_starts_decisions_are_rebuilt(monkeypatch, tmp_path: Path) -> None:
    """``collect`` saves four games side by side, forced moves included; the fit reads them all,
    so that every decision's history is known: as many plays of the opponent's this round as
    the three cards it was dealt less those it holds."""
    data = decisions()
    plays = round_plays(data.obs)
    known = [sum(field & 1 for field in fields) for fields in plays]
    dealt_less_held = [3 - InfoState.from_observation(o).opp_hand_size for o in data.obs]
    assert known == dealt_less_held and sum(known) > len(known)
    rows = seat_afterstates(data, Rules()).rows
    assert (rows[:, SEAT_FIELDS] & 1).any()
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    np.savez(tasks / "task_0000.npz", **data._asdict())
    read: list[Decisions] = []

    def extract(decisions: Decisions, rules: Rules) -> object:
        read.append(decisions)
        return seat_afterstates(decisions, rules)

    monkeypatch.setattr("cli.seat_value.seat_afterstates", extract)
    out = ["--out", str(tmp_path / "p.pt"), "--width", "8", "--heads", "2", "--layers", "1"]
    assert main(["seat-value", "--tasks", str(tasks), *out, "--epochs", "1", "--plays"]) == 0
    assert len(read[0].actions) == len(data.actions)  # the forced moves too


def test_a_player_of_a_plays_network_follows_the_deal(tmp_path: Path) -> None:
    path = tmp_path / "plays.pt"
    torch.manual_seed(0)
    save(SeatValue(width=8, layers=1, heads=2, plays=True), path)
    player = make_agent("seat_value", network=str(path))
    assert SeatValue.load(path).plays and player.follows_deal
    seen: list[np.ndarray] = []
    values = player.net.values
    player.net.values = lambda rows: (seen.append(rows), values(rows))[1]  # type: ignore[method-assign]
    deal, table = opening_trail()
    observation = observe_deal(deal)
    action = player.act(observation)
    assert observation["action_mask"][action]
    assert (seen[-1][:, SEAT_FIELDS] == 1 | 1 << 1 | parse_card("2B") << 3 | table << 9).all()
    twin = player.fork(1)
    assert twin.tracker is not player.tracker and twin.tracker.plays is None
    player.act_batch(observation["observation"][None], observation["action_mask"][None])
    assert not seen[-1][:, SEAT_FIELDS:].any()  # a batch's rows are games with no history
    player.reset()
    assert player.tracker.plays is None
    assert play_deals({"player_0": player, "player_1": GreedyAgent()}, range(2))
    with pytest.raises(PlayerError, match="without plays"):
        make_agent("seat_search", network=str(path))
    with pytest.raises(PlayerError, match="infer=True only"):
        make_agent("alphabeta_value", seat_weight=0.5, seat_network=str(path), infer=False)
    search = make_agent("alphabeta_value", samples=2, seat_weight=0.5, seat_network=str(path))
    search.seat_value.values = player.net.values
    seen.clear()
    assert observation["action_mask"][search.act(observation)]
    trail = 1 | 1 << 1 | parse_card("2B") << 3 | table << 9
    assert len(seen) == 1 and (seen[0][:, SEAT_FIELDS] == trail).all()
    assert not make_agent("seat_value").follows_deal  # the shipped network reads no plays


def test_an_ensemble_values_a_row_by_its_networks_mean() -> None:
    torch.manual_seed(1)
    plain = SeatValue(width=8, layers=1, heads=2)
    plays = SeatValue(width=8, layers=1, heads=2, plays=True)
    ensemble = SeatEnsemble([plain, plays])
    assert ensemble.plays and ensemble.width == 16
    deal, table = opening_trail()
    observation = observe_deal(deal)
    info = InfoState.from_observation(observation["observation"])
    trail = (1 | 1 << 1 | parse_card("2B") << 3 | table << 9, 0, 0)
    _, rows = seat_rows(info, observation["observation"], Rules(), trail)
    with_trail = np.array(rows, np.int64)
    without = with_trail.copy()
    without[:, SEAT_FIELDS:] = NO_PLAYS
    # The plain network reads the position alone, the other the trail too; the ensemble
    # gives each the fields it reads.
    assert np.array_equal(plain.values(with_trail), plain.values(without))
    assert not np.allclose(plays.values(with_trail), plays.values(without))
    for rows_ in (with_trail, without):
        mean = (plain.values(rows_) + plays.values(rows_)) / 2
        assert np.allclose(ensemble.values(rows_), mean, atol=1e-6)
    with pytest.raises(ValueError, match="at least one"):
        SeatEnsemble([])
    quindici = resolve_rules("scopa_a_quindici")
    with pytest.raises(ValueError, match="other rules"):
        SeatEnsemble([plain, SeatValue(width=8, layers=1, heads=2, rules=quindici)])


def test_the_command_writes_an_ensemble_the_players_play(
    network: Path, tmp_path: Path, capsys
) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    np.savez(tasks / "task_0000.npz", **decisions()._asdict())
    plays = tmp_path / "plays.pt"
    torch.manual_seed(2)
    save(SeatValue(width=8, layers=1, heads=2, plays=True), plays)
    out = tmp_path / "mean.pt"
    assert (
        main(["seat-ensemble", str(network), str(plays), "--out", str(out), "--held", str(tasks)])
        == 0
    )
    report = capsys.readouterr().out
    assert f"{network}: " in report and "their mean: " in report and f"wrote {out}" in report
    player = make_agent("seat_value", network=str(out))
    assert isinstance(player.net, SeatEnsemble) and player.follows_deal
    members = [SeatValue.load(network), SeatValue.load(plays)]
    for loaded, saved in zip(player.net.networks, members, strict=True):
        assert loaded.plays == saved.plays
        assert all(torch.equal(loaded.state_dict()[k], v) for k, v in saved.state_dict().items())
    assert play_deals({"player_0": player, "player_1": GreedyAgent()}, range(2))
    search = make_agent("alphabeta_value", samples=2, seat_weight=0.5, seat_network=str(out))
    observation = observe_deal(sweep_position())
    assert observation["action_mask"][search.act(observation)]
    # Refused: an ensemble for other rules, one in an ensemble, a file without networks.
    with pytest.raises(PlayerError, match="learnt"):
        make_agent("seat_value", network=str(out), rules="scopa_a_quindici")
    capsys.readouterr()
    assert main(["seat-ensemble", str(out), str(network), "--out", str(tmp_path / "in.pt")]) == 2
    assert f"{out} is not a seat-value network" in capsys.readouterr().err
    empty = tmp_path / "empty.pt"
    torch.save({"format": SeatEnsemble.FORMAT, "members": []}, empty)
    with pytest.raises(CheckpointError, match="is not a seat ensemble"):
        make_agent("seat_value", network=str(empty))
    other = tmp_path / "other.pt"
    save(SeatValue(width=8, layers=1, heads=2, rules=resolve_rules("scopa_a_quindici")), other)
    with pytest.raises(SystemExit, match="other rules"):
        main(["seat-ensemble", str(network), str(other), "--out", str(tmp_path / "mixed.pt")])
    assert not (tmp_path / "mixed.pt").exists()
