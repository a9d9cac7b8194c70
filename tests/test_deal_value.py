"""The deal-value network: its features on hand-built positions, numpy against torch, broken
files refused, the self-play targets (exact, antisymmetric, independent of the workers), the
sibling groups and their loss, a whole small training run, and a stopped run carried on to the
same weights."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from conftest import played_to, settebello_sweep

import training.deal_value as deal_value
from agents import make_agent
from agents.deal_value import (
    NUM_FEATURES,
    NUM_SCORING,
    SHIPPED,
    DealValue,
    encode,
    position,
    scoring_features,
)
from agents.policy import POLICY_CHECKPOINT
from agents.seat_value import SeatValue
from cli.main import main
from scopa_env import scopa_v0
from scopa_env.cards import parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.errors import CheckpointError, PlayerError
from training.config import ConfigError, load_model
from training.deal_value import (
    PROGRESS,
    WEIGHTS,
    DealValueConfig,
    Progress,
    SiblingGroups,
    r_squared,
    self_play,
    sibling_errors,
    sibling_r_squared,
    train_deal_value,
)
from training.last_round import save

needs_network = pytest.mark.skipif(
    not POLICY_CHECKPOINT.is_file(), reason="the shipped network is not installed"
)


def cards_in(plane: np.ndarray) -> set[int]:
    return set(np.flatnonzero(plane).tolist())


def test_the_features_of_a_hand_built_position_from_the_seat_to_move() -> None:
    # Seat 0 to move holds 7D KB 2C; seat 1 holds 2D 5S JC and took AC AS last; the table is
    # 3S 4S; 30 cards are left to deal; seat 0 leads the round, so seat 1 deals.
    x = encode(np.array([position(settebello_sweep())]))[0]
    assert x.shape == (NUM_FEATURES,)
    assert cards_in(x[0:40]) == set(parse_cards("7D KB 2C"))
    assert cards_in(x[40:80]) == set(parse_cards("2D 5S JC"))
    assert cards_in(x[80:120]) == set(parse_cards("3S 4S"))
    assert cards_in(x[120:160]) == set()
    assert cards_in(x[160:200]) == set(parse_cards("AC AS"))
    assert x[200:].tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]


def test_the_other_seat_to_move_sees_the_position_from_its_side() -> None:
    deal = settebello_sweep()
    deal.play_unchecked(parse_card("KB"), 0)  # seat 0 trails KB; seat 1 (the dealer) to move
    x = encode(np.array([position(deal)]))[0]
    assert cards_in(x[0:40]) == set(parse_cards("2D 5S JC"))
    assert cards_in(x[40:80]) == set(parse_cards("7D 2C"))
    assert cards_in(x[80:120]) == set(parse_cards("3S 4S KB"))
    assert cards_in(x[120:160]) == set(parse_cards("AC AS"))
    # The mover made the last capture, 30 cards in the stock, the mover deals.
    assert x[200:].tolist() == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0]


def test_scope_counts_are_halved() -> None:
    mine, theirs, table = parse_cards("7D KB 2C"), parse_cards("2D 5S JC"), parse_cards("3S")
    captured = parse_cards("AC AS 2S")
    dealt = {*mine, *theirs, *table, *captured}
    deal = Deal.from_position(
        hands=(mine, theirs),
        table=table,
        stock=[c for c in range(40) if c not in dealt],
        captures=((), captured),
        scope=(1, 3),
        last_capturer=1,
    )
    assert encode(np.array([position(deal)]))[0, 200:202].tolist() == [0.5, 1.5]


def test_the_scoring_features_of_a_hand_built_position() -> None:
    # Seat 0 to move holds 7D KB 2C, seat 1 2D 5S JC and has taken AC AS; the table is 3S 4S.
    x = encode(np.array([position(settebello_sweep())]), scoring=True)[0]
    assert x.shape == (NUM_FEATURES + NUM_SCORING,)
    assert x[:NUM_FEATURES].tolist() == encode(np.array([position(settebello_sweep())]))[0].tolist()
    table = x[206:209]
    np.testing.assert_allclose(table, [7 / 40, 2 / 10, 1])  # 3 + 4, two cards, sweepable
    # The mover's 7D is the table's sum: a sweep; no card of it is a 3 or a 4. The other's
    # hand has no 7.
    np.testing.assert_allclose(x[209:215], [1, 1, 0, 0, 1, 0])
    # Nothing taken yet; per suit the best primiera card of the pile, then of pile and hand:
    # 7D (21) in coins, 2C (12) in cups, nothing in swords, KB (10) in clubs.
    mine = [-2, 0, -5 / 3, 0, 0, 1, 0, 12 / 21, 0, 0, 0, 10 / 21]
    # Two cards taken, no coin; AC and AS (16 each) in cups and swords, beside JC and 5S (10
    # and 15 < 16); 2D (12) in coins from the hand.
    theirs = [-1.8, 0, -5 / 3, 0, 0, 12 / 21, 16 / 21, 16 / 21, 16 / 21, 16 / 21, 0, 0]
    np.testing.assert_allclose(x[215:239], mine + theirs, rtol=1e-6, atol=1e-6)


def test_a_sweep_needs_a_card_worth_the_whole_table() -> None:
    def features(mine: str, theirs: str, table: str) -> np.ndarray:
        hands, on_table = (parse_cards(mine), parse_cards(theirs)), parse_cards(table)
        rest = [c for c in range(40) if c not in {*hands[0], *hands[1], *on_table}]
        deal = Deal.from_position(
            hands=hands, table=on_table, stock=rest[:24], captures=((), rest[24:])
        )
        return scoring_features(np.array([position(deal)]))[0]

    one = features("5D 2C QB", "KS QS JS", "5S")  # a lone 5 on the table: 5D takes it all
    assert one[2] == 1 and one[3] == 1 and one[5] == pytest.approx(1 / 3) and one[6] == 0
    # 4D must take 4S, not 3S + 4S: no hand sweeps a table of 7 without a 7.
    four = features("4D 2C QB", "KS QS 6S", "3S 4S")
    assert four[2] == 1 and four[3] == 0 and four[5] == pytest.approx(1 / 3) and four[6] == 0
    # A table worth 11 or more is swept by no card, whatever the hands.
    over = features("5D 6C KB", "KS QS JS", "5S 6S")
    assert over[0] == pytest.approx(11 / 40) and over[2] == 0 and over[3] == 0 == over[6]
    assert over[5] == pytest.approx(2 / 3)  # 5D and 6C each match a card on the table
    empty = features("5D 6C KB", "KS QS JS", "")
    assert empty[:3].tolist() == [0, 0, 0] and empty[3] == 0 == empty[6]


def test_piles_past_the_cards_and_coins_thresholds() -> None:
    taken = parse_cards("AD 2D 3D 4D 5D 6D") + tuple(range(10, 25))  # 21 cards, 6 coins
    hands = (parse_cards("7D JD QD"), parse_cards("KS QS JS"))
    rest = [c for c in range(40) if c not in {*taken, *hands[0], *hands[1]}]
    deal = Deal.from_position(hands=hands, table=rest[12:], stock=rest[:12], captures=(taken, ()))
    x = scoring_features(np.array([position(deal)]))[0]
    np.testing.assert_allclose(x[9:13], [0.1, 1, 1 / 3, 1], rtol=1e-6)
    # Coins: 6D (18) in the pile, 7D (21) with the hand; cups: 7C taken; swords: AS (16) is
    # worth more than 5S (15); no clubs.
    np.testing.assert_allclose(x[13:21], [18 / 21, 1, 1, 1, 16 / 21, 16 / 21, 0, 0], rtol=1e-6)


@pytest.mark.parametrize("scoring", [False, True])
def test_numpy_values_equal_the_same_network_in_torch(scoring: bool) -> None:
    torch.manual_seed(0)
    width = 12
    net = torch.nn.Sequential(
        torch.nn.Linear(NUM_FEATURES + NUM_SCORING * scoring, width), torch.nn.ReLU(),
        torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1),
    )  # fmt: skip
    layers = [m for m in net if isinstance(m, torch.nn.Linear)]
    arrays = {}
    for k, layer in enumerate(layers, start=1):
        arrays[f"w{k}"] = layer.weight.detach().numpy().T
        arrays[f"b{k}"] = layer.bias.detach().numpy()
    value = DealValue(**arrays, scoring=np.asarray(int(scoring)))
    deals = [played_to(seed, plays) for seed in range(4) for plays in (0, 7, 15, 25)]
    rows = np.array([position(d) for d in deals])
    with torch.no_grad():
        expected = net(torch.from_numpy(encode(rows, scoring))).numpy()[:, 0]
    np.testing.assert_allclose(value.values(rows), expected, rtol=1e-5, atol=1e-5)
    assert value(deals[3]) == pytest.approx(float(expected[3]), abs=1e-5)


def test_the_scoring_features_are_saved_with_the_network(tmp_path) -> None:
    for scoring in (0, 1):
        np.savez(tmp_path / "net.npz", **small_network(scoring=scoring).arrays)
        assert DealValue.load(tmp_path / "net.npz").scoring is bool(scoring)
    assert DealValue.load(SHIPPED).scoring is False  # saved before the key
    arrays = dict(small_network(scoring=1).arrays)
    del arrays["scoring"]
    with pytest.raises(CheckpointError, match=r"w1 has shape \(239, 6\), expected \(206, 6\)"):
        DealValue(**arrays)
    with pytest.raises(CheckpointError, match="array scoring is 0 or 1, got 3"):
        DealValue(**arrays, scoring=np.asarray(3))


def test_the_shipped_network_loads() -> None:
    value = DealValue.load(SHIPPED)
    assert np.isfinite(value(played_to(0, 5)))


def test_broken_networks_are_refused_by_name(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="no DealValue network at"):
        DealValue.load(tmp_path / "missing.npz")
    (tmp_path / "text.npz").write_text("not an archive")
    with pytest.raises(CheckpointError, match="text.npz is not a DealValue network"):
        DealValue.load(tmp_path / "text.npz")
    np.savez(tmp_path / "partial.npz", w1=np.zeros((NUM_FEATURES, 4)))
    with pytest.raises(CheckpointError, match="partial.npz.*needs arrays"):
        DealValue.load(tmp_path / "partial.npz")
    good = dict(DealValue.load(SHIPPED).arrays)
    good["w2"] = good["w2"][:, :3]
    np.savez(tmp_path / "shape.npz", **good)
    with pytest.raises(CheckpointError, match="array w2 has shape"):
        DealValue.load(tmp_path / "shape.npz")


def small_network(
    blind: int | None = None, width: int = 6, seed: int = 5, scoring: int = 0
) -> DealValue:
    rng = np.random.default_rng(seed)
    features = NUM_FEATURES + NUM_SCORING * scoring
    arrays = {
        "w1": rng.normal(size=(features, width)), "b1": rng.normal(size=width),
        "w2": rng.normal(size=(width, width)), "b2": rng.normal(size=width),
        "w3": rng.normal(size=(width, 1)), "b3": rng.normal(size=1),
    }  # fmt: skip
    flags = {"scoring": np.asarray(scoring)} if scoring else {}
    if blind is not None:
        flags["blind"] = np.asarray(blind)
    return DealValue(**arrays, **flags)


def test_an_ensemble_values_a_position_as_the_mean_of_its_networks(tmp_path) -> None:
    nets = [small_network(seed=seed) for seed in (1, 2, 3)]
    deals = [played_to(seed, plays) for seed in range(3) for plays in (0, 9, 20)]
    rows = np.array([position(d) for d in deals])
    mean = np.mean([net.values(rows) for net in nets], axis=0)
    ensemble = DealValue.ensemble(nets)
    assert (ensemble.members, ensemble.width) == (3, 6)
    np.testing.assert_allclose(ensemble.values(rows), mean, rtol=1e-12, atol=1e-12)
    assert ensemble(deals[4]) == pytest.approx(mean[4])
    # Members add up: an ensemble of an ensemble and a network is the mean of all four.
    fourth = small_network(seed=4)
    bigger = DealValue.ensemble([ensemble, fourth])
    expected = np.mean([net.values(rows) for net in [*nets, fourth]], axis=0)
    np.testing.assert_allclose(bigger.values(rows), expected, rtol=1e-12, atol=1e-12)
    # Saved as float32 and read back: the same members, the same values to float32.
    deal_value.save_network(bigger, tmp_path / "mean.npz")
    loaded = DealValue.load(tmp_path / "mean.npz")
    assert loaded.members == 4 and not loaded.blind
    np.testing.assert_allclose(loaded.values(rows), expected, rtol=1e-4, atol=1e-4)


def test_an_ensemble_of_blind_networks_is_blind() -> None:
    deal = settebello_sweep()
    row = np.array([position(deal)])
    emptied = row.copy()
    emptied[0, 1] = 0
    blind = DealValue.ensemble([small_network(blind=1, seed=1), small_network(blind=1, seed=2)])
    sees = DealValue.ensemble([small_network(seed=1), small_network(seed=2)])
    assert blind.blind
    assert blind.values(row)[0] == pytest.approx(sees.values(emptied)[0])


def test_an_ensemble_of_networks_that_differ_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="at least one network"):
        DealValue.ensemble([])
    with pytest.raises(
        ValueError,
        match=r"one width, blindness and features: got .*\(6, False, False\), \(8, False, False\)",
    ):
        DealValue.ensemble([small_network(), small_network(width=8)])
    for other in small_network(blind=1), small_network(scoring=1):
        with pytest.raises(ValueError, match="one width, blindness and features"):
            DealValue.ensemble([small_network(), other])
    assert DealValue.ensemble([small_network(scoring=1, seed=s) for s in (1, 2)]).scoring
    arrays = dict(DealValue.ensemble([small_network(seed=1), small_network(seed=2)]).arrays)
    arrays["w2"] = arrays["w2"][:1]  # one member's second layer for two members
    np.savez(tmp_path / "short.npz", **arrays)
    with pytest.raises(
        CheckpointError, match=r"short.npz: .*array w2 has shape \(1, 6, 6\), expected \(2, 6, 6\)"
    ):
        DealValue.load(tmp_path / "short.npz")


def test_the_command_writes_an_ensemble_the_searches_read(tmp_path, capsys) -> None:
    files = []
    for seed in (1, 2):
        files.append(tmp_path / f"net{seed}.npz")
        deal_value.save_network(small_network(seed=seed), files[-1])
    folder = tmp_path / "run"  # a folder scopa value wrote stands for its weights
    folder.mkdir()
    deal_value.save_network(small_network(seed=3), folder / WEIGHTS)
    out = tmp_path / "mean.npz"
    assert (
        main(["value-ensemble", str(files[0]), str(files[1]), str(folder), "--out", str(out)]) == 0
    )
    assert f"wrote {out}: the mean of 3 deal-value networks" in capsys.readouterr().out
    rows = np.array([position(played_to(seed, 6)) for seed in range(4)])
    members = [DealValue.load(f) for f in [*files, folder / WEIGHTS]]
    expected = np.mean([net.values(rows) for net in members], axis=0)
    np.testing.assert_allclose(DealValue.load(out).values(rows), expected, rtol=1e-6, atol=1e-6)
    search = make_agent("alphabeta_value", samples=2, value=str(out))
    assert search.value.members == 3
    observation = scopa_v0.env()
    observation.reset(seed=0)
    obs = observation.observe(observation.agent_selection)
    assert obs["action_mask"][search.act(obs)]
    # Refused, nothing written: a file that is no network, networks of two widths, --out an input.
    (tmp_path / "text.npz").write_text("not an archive")
    assert (
        main(
            [
                "value-ensemble",
                str(files[0]),
                str(tmp_path / "text.npz"),
                "--out",
                str(tmp_path / "a.npz"),
            ]
        )
        == 2
    )
    assert "text.npz is not a DealValue network" in capsys.readouterr().err
    deal_value.save_network(small_network(width=8), tmp_path / "wide.npz")
    with pytest.raises(SystemExit, match="one width, blindness and features"):
        main(
            [
                "value-ensemble",
                str(files[0]),
                str(tmp_path / "wide.npz"),
                "--out",
                str(tmp_path / "b.npz"),
            ]
        )
    with pytest.raises(SystemExit, match="is one of the networks"):
        main(["value-ensemble", str(files[0]), str(files[1]), "--out", str(files[1])])
    assert not (tmp_path / "a.npz").exists() and not (tmp_path / "b.npz").exists()


def constant_network(value: float, width: int = 4) -> DealValue:
    zeros = {"w1": np.zeros((NUM_FEATURES, width)), "b1": np.zeros(width)}
    zeros |= {"w2": np.zeros((width, width)), "b2": np.zeros(width), "w3": np.zeros((width, 1))}
    return DealValue(**zeros, b3=np.array([value]))


def test_r_squared_is_the_share_of_the_variance_explained() -> None:
    rows = np.array([position(played_to(seed, 3)) for seed in range(3)])
    targets = np.array([0.0, 2.0, 4.0])  # variance 8/3
    assert r_squared(constant_network(2.0), rows, targets) == 0.0  # the mean explains nothing
    assert r_squared(constant_network(0.0), rows, targets) == -1.5  # 1 - (20/3) / (8/3)
    assert np.isnan(r_squared(constant_network(0.0), rows[:1], targets[:1]))
    assert np.isnan(r_squared(constant_network(0.0), rows, np.ones(3)))  # nothing to explain


@needs_network
def test_the_command_reports_each_network_and_the_mean_on_fresh_deals(tmp_path, capsys) -> None:
    files = [tmp_path / "low.npz", tmp_path / "high.npz"]
    deal_value.save_network(constant_network(-1.0), files[0])
    deal_value.save_network(constant_network(1.0), files[1])
    out = tmp_path / "mean.npz"
    args = ["value-ensemble", *map(str, files), "--out", str(out), "--held-deals", "2"]
    assert main([*args, "--workers", "1", "--seed", "4"]) == 0
    report = capsys.readouterr().out.splitlines()
    assert report[0] == "R^2 on 60 positions of 2 fresh deals:"
    held = self_play(DealValueConfig(deals=2, seed=4, workers=1))
    # The mean of -1 and +1 is 0 everywhere: R^2 = 1 - mean(t^2) / var(t).
    expected = round(1 - float(np.mean(held.targets**2)) / float(np.var(held.targets)), 4)
    assert report[3] == f"  their mean: {expected:.4f}"
    assert report[1].startswith(f"  {files[0]}: ") and report[2].startswith(f"  {files[1]}: ")


def test_the_ensemble_recipe_fits_two_networks_and_averages_them_with_the_shipped_one(
    tmp_path, capsys
) -> None:
    recipe = Path(__file__).resolve().parents[1] / "configs" / "deal_value_ensemble.yaml"
    assert main(["recipe", str(recipe), "--run-dir", str(tmp_path), "--dry-run"]) == 0
    commands = [line for line in capsys.readouterr().out.splitlines() if line.startswith("scopa ")]
    assert commands == [
        f"scopa value --config configs/deal_value.yaml seed=1 --out {tmp_path / 'DV1'}",
        f"scopa value --config configs/deal_value.yaml seed=2 --out {tmp_path / 'DV2'}",
        f"scopa value-ensemble agents/pretrained_value {tmp_path / 'DV1'} {tmp_path / 'DV2'} "
        f"--held-deals 15000 --out {tmp_path / 'ensemble.npz'}",
    ]


def test_a_blind_network_reads_the_other_hand_as_empty() -> None:
    # Seat 0 holds 7D KB 2C, seat 1 2D 5S JC: swapping seat 1's hand for three of the unseen
    # cards moves a network that sees it and leaves a blind one where it was.
    deal = settebello_sweep()
    row = np.array([position(deal)])
    swapped = row.copy()
    swapped[0, 1] = sum(1 << c for c in parse_cards("6C 6S 6B"))
    assert row[0, 1] != swapped[0, 1]
    sees, blind = small_network(), small_network(blind=1)
    assert not sees.blind and blind.blind
    assert sees.values(row)[0] != pytest.approx(sees.values(swapped)[0])
    assert blind.values(row)[0] == pytest.approx(blind.values(swapped)[0])
    emptied = row.copy()
    emptied[0, 1] = 0
    assert blind.values(row)[0] == pytest.approx(sees.values(emptied)[0])
    assert row[0, 1] == sum(1 << c for c in parse_cards("2D 5S JC"))  # the rows are not changed


def test_blindness_is_saved_with_the_network(tmp_path) -> None:
    for blind in (0, 1):
        np.savez(tmp_path / "net.npz", **small_network(blind=blind).arrays)
        assert DealValue.load(tmp_path / "net.npz").blind is bool(blind)
    assert DealValue.load(SHIPPED).blind is False  # saved before the key: it sees both hands
    with pytest.raises(CheckpointError, match="array blind is 0 or 1, got 2"):
        small_network(blind=2)


@pytest.mark.parametrize("name", ["ismcts_value", "alphabeta_value"])
def test_a_ladder_tells_apart_the_values_a_search_uses(tmp_path, name: str) -> None:
    from agents import make_agent
    from evaluation.ladder import _fingerprint

    other = tmp_path / "other.npz"
    arrays = dict(DealValue.load(SHIPPED).arrays)
    arrays["b3"] = arrays["b3"] + 1.0
    np.savez(other, **arrays)
    shipped, changed = make_agent(name), make_agent(name, value=str(other))
    assert _fingerprint(shipped) == _fingerprint(make_agent(name, seed=3))
    assert _fingerprint(shipped) != _fingerprint(changed)


def test_positions_of_other_tables_are_refused() -> None:
    deal = Deal.new(np.random.default_rng(0), kind="scopa_4")
    with pytest.raises(PlayerError, match="two-player deals; this one has 4 seats"):
        position(deal)


@needs_network
def test_self_play_targets_are_each_deals_exact_difference_for_the_mover() -> None:
    config = DealValueConfig(deals=6, chunk=4, workers=1, seed=3)
    data = self_play(config)
    assert sorted(set(data.deals.tolist())) == list(range(6))
    for deal in range(6):
        rows = data.rows[data.deals == deal]
        targets = data.targets[data.deals == deal]
        # Five rounds of six plays with cards left in the stock; the last round is solved.
        assert len(rows) == 30
        assert rows[0, 8] == 30 and rows[-1, 8] == 6
        assert np.all(targets == np.round(targets))  # whole points
        # Two seats alternate: the mover's target flips sign with the mover.
        assert np.all(targets[1:] == -targets[:-1])


@needs_network
def test_self_play_does_not_depend_on_the_number_of_workers() -> None:
    one = self_play(DealValueConfig(deals=5, chunk=2, workers=1, seed=1))
    two = self_play(DealValueConfig(deals=5, chunk=2, workers=2, seed=1))
    np.testing.assert_array_equal(one.rows, two.rows)
    np.testing.assert_array_equal(one.targets, two.targets)
    np.testing.assert_array_equal(one.deals, two.deals)


def cards_of(mask: int) -> set[int]:
    return {card for card in range(40) if mask >> card & 1}


@needs_network
def test_siblings_are_every_move_at_one_position_played_on_with_the_deals_stock() -> None:
    config = DealValueConfig(deals=12, chunk=5, workers=1, seed=5, siblings=1.0)
    plain = self_play(config.model_copy(update={"siblings": 0.0}))
    data = self_play(config)
    # The deals play as without siblings (the branches draw from a generator of their own).
    for name in ("rows", "targets", "deals"):
        np.testing.assert_array_equal(getattr(data, name), getattr(plain, name))
    assert len(plain.sibling_rows) == len(plain.sibling_targets) == len(plain.sibling_deals) == 0
    groups = SiblingGroups.of(data.sibling_rows, data.sibling_targets, data.sibling_deals)
    assert len(groups) == len(set(data.sibling_deals.tolist())) >= 8  # one at most a deal
    branched_at = set()
    for g in range(len(groups)):
        rows, targets, _ = groups.take(np.array([g]))
        deal = data.sibling_deals[groups.starts[g]]
        line, line_targets = data.rows[data.deals == deal], data.targets[data.deals == deal]
        assert len(rows) >= 2 and len({tuple(r) for r in rows}) == len(rows)
        # The network's own move is one of them, and played on as the deal went on.
        hits = [
            (k, j) for k in range(len(line)) for j in range(len(rows)) if (line[k] == rows[j]).all()
        ]
        assert len(hits) == 1
        k, j = hits[0]
        assert targets[j] == line_targets[k]
        before = line[k - 1]  # the position branched, its mover's hand in column 0
        branched_at.add(k - 1)
        assert 0 <= k - 1 <= 28  # every move leaves cards in the stock
        assert np.all(rows[:, 8] == before[8])  # the same stock
        # Each sibling is one card of the mover's played (the mover's hand is the sibling's
        # other hand), each card at least once; the table and the piles hold what they did.
        played = [cards_of(int(before[0])) - cards_of(int(row[1])) for row in rows]
        assert all(len(card) == 1 for card in played)
        assert set().union(*played) == cards_of(int(before[0]))
        for row, (card,) in zip(rows, played, strict=True):
            gone = cards_of(int(before[2])) | {card}
            assert gone == cards_of(int(row[2])) | (
                cards_of(int(row[4])) - cards_of(int(before[3]))
            )
        assert np.all(targets == np.round(targets))
    assert len(branched_at) > 4  # drawn, not one position every time


@needs_network
def test_siblings_played_on_with_more_stocks_take_the_mean_outcome() -> None:
    config = DealValueConfig(deals=6, chunk=6, workers=1, seed=2, siblings=1.0)
    one = self_play(config)
    two = self_play(config.model_copy(update={"sibling_stocks": 2}))
    np.testing.assert_array_equal(one.rows, two.rows)
    np.testing.assert_array_equal(one.sibling_rows, two.sibling_rows)
    # The first order is the deal's own; the other outcome is whole points too.
    other = 2 * two.sibling_targets - one.sibling_targets
    assert np.all(other == np.round(other))
    assert np.any(other != one.sibling_targets)


def test_a_group_of_siblings_is_restocked_with_one_shuffle_of_its_stock() -> None:
    deal = played_to(3, 6)  # round two, three cards in each hand
    siblings = []
    for move in deal.legal_mask_moves()[:2]:
        sibling = deal.copy()
        sibling.play_unchecked(*move)
        siblings.append(sibling)
    lone = played_to(8, 2)
    restocked = deal_value._restocked([*siblings, lone], [5, 5, 9], np.random.default_rng(0))
    first, second, third = restocked
    assert first.stock == second.stock != deal.stock  # one shuffle for the group
    assert sorted(first.stock) == sorted(deal.stock)
    assert sorted(third.stock) == sorted(lone.stock)
    for before, after in zip([*siblings, lone], restocked, strict=True):
        assert after.hands == before.hands and after.table == before.table
        assert after.current_player == before.current_player
        assert position(after) == position(before)  # a row holds no order of the stock


def test_sibling_errors_compare_each_value_and_outcome_about_its_groups_mean() -> None:
    values = torch.tensor([1.0, 2.0, 3.0, 7.0])
    outcomes = torch.tensor([0.0, 2.0, 5.0, -4.0])
    group = torch.tensor([0, 0, 1, 1])
    # Values about their means: -0.5, 0.5, -2, 2; outcomes: -1, 1, 4.5, -4.5.
    expected = torch.tensor([0.5, -0.5, -6.5, 6.5])
    torch.testing.assert_close(sibling_errors(values, outcomes, group), expected)


def test_sibling_groups_take_whole_groups_in_the_order_asked() -> None:
    rows = np.arange(6 * 10).reshape(6, 10)
    groups = SiblingGroups.of(rows, np.arange(6.0), np.array([4, 4, 4, 9, 9, 12]))
    assert len(groups) == 3
    taken, outcomes, group = groups.take(np.array([2, 0]))
    np.testing.assert_array_equal(taken, rows[[5, 0, 1, 2]])
    np.testing.assert_array_equal(outcomes, [5.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(group, [0, 1, 1, 1])
    assert len(SiblingGroups.of(rows[:0], np.zeros(0), np.zeros(0, np.int64))) == 0


def test_sibling_r_squared_is_the_share_of_the_spread_within_groups_explained() -> None:
    rows = np.array([position(played_to(seed, 3)) for seed in range(4)])
    groups = SiblingGroups.of(rows, np.array([1.0, 3.0, -2.0, 2.0]), np.array([0, 0, 7, 7]))
    # A constant values every sibling alike: it explains none of the spread, at any level.
    assert sibling_r_squared(constant_network(5.0), groups) == 0.0
    assert np.isnan(
        sibling_r_squared(
            constant_network(0.0), SiblingGroups.of(rows[:0], np.zeros(0), np.zeros(0, np.int64))
        )
    )


@needs_network
def test_the_sibling_loss_fits_the_differences_between_siblings() -> None:
    config = DealValueConfig(
        deals=30, chunk=30, workers=1, width=32, epochs=20, batch_size=64, torch_threads=1
    )
    data = self_play(config.model_copy(update={"siblings": 1.0}))
    # With every other target 0, only the sibling loss can teach the siblings' differences.
    data = dataclasses.replace(data, targets=np.zeros_like(data.targets))
    groups = SiblingGroups.of(data.sibling_rows, data.sibling_targets, data.sibling_deals)
    without, _ = deal_value.fit_value(data, config)
    weighed, fit = deal_value.fit_value(data, config.model_copy(update={"siblings": 20.0}))
    assert abs(sibling_r_squared(without, groups)) < 0.02
    assert sibling_r_squared(weighed, groups) > 0.8
    held = {deal for deal in data.sibling_deals.tolist() if deal % config.holdout_every == 0}
    assert fit["held_out_sibling_groups"] == len(held) > 0


@needs_network
def test_a_small_training_run_writes_a_network_the_player_loads(tmp_path) -> None:
    config = DealValueConfig(deals=40, chunk=20, workers=1, width=8, epochs=2, batch_size=64)
    summary = train_deal_value(config, tmp_path)
    assert summary["positions"] == 40 * 30
    assert summary["held_out_positions"] == 2 * 30  # deals 0 and 20
    value = DealValue.load(tmp_path / WEIGHTS)
    assert value.width == 8
    assert "held_out_r2" in (tmp_path / "report.md").read_text()
    assert "sibling" not in (tmp_path / "report.md").read_text()
    assert load_model(DealValueConfig, tmp_path / "config.yaml") == config


@needs_network
def test_a_blind_run_fits_and_saves_a_blind_network(tmp_path) -> None:
    config = DealValueConfig(deals=20, chunk=10, workers=1, width=8, epochs=1, blind=True)
    train_deal_value(config, tmp_path)
    value = DealValue.load(tmp_path / WEIGHTS)
    assert value.blind


@needs_network
def test_a_scoring_run_fits_and_saves_a_network_that_reads_the_scoring_features(tmp_path) -> None:
    config = DealValueConfig(deals=20, chunk=10, workers=1, width=8, epochs=1, scoring=True)
    train_deal_value(config, tmp_path)
    value = DealValue.load(tmp_path / WEIGHTS)
    assert value.scoring and value.features == NUM_FEATURES + NUM_SCORING
    assert value.arrays["w1"].shape == (NUM_FEATURES + NUM_SCORING, 8)


def positions_in_the_environment(player, seed: int, deals: int) -> list[list[tuple[int, ...]]]:
    """The positions with cards in the stock that ``scopa_v0`` passes through when ``player``
    plays both seats of the decks self-play deals from ``seed`` (its first chunk), each seat
    deciding from the environment's own observation."""
    env = scopa_v0.raw_env(episode="deal")
    rng = np.random.default_rng([seed, 0])
    positions = []
    for _ in range(deals):
        first = int(rng.integers(2))
        deck = tuple(rng.permutation(40).tolist())
        env.reset(options={"deck": deck, "first_player": first})
        seen = [position(env.deal)]
        while env.deal.stock:
            env.step(player.act(env.observe(env.agent_selection)))
            if env.deal.stock and position(env.deal) != seen[-1]:
                seen.append(position(env.deal))
        positions.append(seen)
    return positions


def test_a_rule_player_plays_both_seats_as_it_would_in_the_environment() -> None:
    data = self_play(DealValueConfig(deals=3, chunk=3, workers=1, seed=4, player="greedy"))
    seen = positions_in_the_environment(make_agent("greedy"), 4, 3)
    for k in range(3):
        assert [tuple(row) for row in data.rows[data.deals == k].tolist()] == seen[k]
        targets = data.targets[data.deals == k]
        assert np.all(targets[1:] == -targets[:-1])


def test_a_seat_network_plays_both_seats_as_its_player_would_in_the_environment(
    tmp_path,
) -> None:
    # ``seat_value`` with the same network picks its captures action by action in scopa_v0.
    network = tmp_path / "seat.pt"
    torch.manual_seed(1)
    save(SeatValue(width=16, layers=0), network)
    config = DealValueConfig(deals=3, chunk=3, workers=1, seed=4, seat_network=str(network))
    data = self_play(config)
    seen = positions_in_the_environment(make_agent("seat_value", network=str(network)), 4, 3)
    for k in range(3):
        assert [tuple(row) for row in data.rows[data.deals == k].tolist()] == seen[k]
    by_greedy = self_play(DealValueConfig(deals=3, chunk=3, workers=1, seed=4, player="greedy"))
    assert not np.array_equal(data.rows, by_greedy.rows)  # the players differ on these decks


def test_explored_moves_are_legal_and_a_share_of_them_not_the_players() -> None:
    """With ``explore`` the decks are the same, each position follows the one before it by a
    legal move, about that share of the moves is not the player's, and the run repeats."""
    from agents.guided import Root, seat_observations
    from scopa_env.observation import deal_blocks

    config = DealValueConfig(deals=4, chunk=4, workers=1, seed=4, player="greedy", explore=0.4)
    data = self_play(config)
    again = self_play(config)
    np.testing.assert_array_equal(data.rows, again.rows)
    np.testing.assert_array_equal(data.targets, again.targets)
    greedy = make_agent("greedy")
    rng = np.random.default_rng([4, 0])  # the chunk's decks, as self-play deals them
    deals = [Deal.new(rng, first_player=int(rng.integers(2))) for _ in range(4)]
    changed = moves = 0
    for k, deal in enumerate(deals):
        rows = [tuple(row) for row in data.rows[data.deals == k].tolist()]
        assert rows[0] == position(deal)
        for row in rows[1:]:
            children = {}
            for move in deal.legal_mask_moves():
                child = deal.copy()
                child.play_unchecked(*move)
                children[position(child)] = move, child
            assert row in children  # a legal move of the seat to move leads there
            root = Root(deal_blocks((0, 0), greedy.rules.target, deal.dealer), (0, 0))
            chosen = deal_value._rule_move(greedy, deal, seat_observations([deal], root)[0])
            move, deal = children[row]
            changed += move != chosen
            moves += 1
    assert moves == 4 * 29
    assert 0.1 < changed / moves < 0.4  # 0.4 of the moves drawn, some of them greedy's own
    shipped = Path(__file__).resolve().parents[1] / "configs" / "deal_value.yaml"
    config = load_model(DealValueConfig, shipped, ["explore=0.15"])  # the README's command
    assert config == load_model(DealValueConfig, shipped).model_copy(update={"explore": 0.15})


def test_one_player_of_the_deals_and_a_seat_network_that_is_there(tmp_path) -> None:
    with pytest.raises(ConfigError, match="both name who plays the deals"):
        load_model(DealValueConfig, None, ["player=greedy", "seat_network=single"])
    with pytest.raises(ConfigError, match="no seat-value network at .*absent.pt"):
        load_model(DealValueConfig, None, [f"seat_network={tmp_path / 'absent.pt'}"])
    assert load_model(DealValueConfig, None, ["seat_network=ensemble"]).seat_network == "ensemble"
    shipped = Path(__file__).resolve().parents[1] / "configs" / "deal_value_seat.yaml"
    config = load_model(DealValueConfig, shipped)  # the README's command's config
    assert (config.seat_network, config.player, config.deals) == ("single", None, 300_000)


def test_a_player_that_is_not_a_rule_player_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="player.*no option 'samplez'"):
        load_model(DealValueConfig, None, ["player=alphabeta:samplez=3"])
    with pytest.raises(ConfigError, match="player.*unknown player 'nosuch'"):
        load_model(DealValueConfig, None, ["player=nosuch"])
    with pytest.raises(ConfigError, match="player 'pretrained' is not a rule player"):
        load_model(DealValueConfig, None, ["player=pretrained"])


def test_bad_configs_are_refused_naming_the_key(tmp_path) -> None:
    with pytest.raises(ConfigError, match="dealz: unknown key"):
        load_model(DealValueConfig, None, ["dealz=10"])
    with pytest.raises(ConfigError, match="explore"):
        load_model(DealValueConfig, None, ["explore=1.0"])
    with pytest.raises(ConfigError, match="deals"):
        load_model(DealValueConfig, None, ["deals=0"])
    with pytest.raises(ConfigError, match="siblings"):
        load_model(DealValueConfig, None, ["siblings=-1"])


def test_the_command_refuses_to_replace_a_network_unasked(tmp_path, capsys) -> None:
    (tmp_path / WEIGHTS).write_bytes(b"")
    assert main(["value", "--out", str(tmp_path), "deals=1"]) == 2
    assert "pass --overwrite" in capsys.readouterr().err


@needs_network
def test_a_run_stopped_after_writing_its_weights_is_carried_on_unasked(tmp_path) -> None:
    # Killed between writing the weights and removing its progress: the same command ends it.
    args = ["value", "--out", str(tmp_path), "deals=4", "chunk=2", "workers=1", "width=4"]
    assert main([*args, "epochs=1", "holdout_every=2"]) == 0
    weights = (tmp_path / WEIGHTS).read_bytes()
    config = load_model(DealValueConfig, tmp_path / "config.yaml")
    Progress(tmp_path / PROGRESS, config)  # what the stopped run left beside its weights
    assert main([*args, "epochs=1", "holdout_every=2"]) == 0
    assert not (tmp_path / PROGRESS).exists()
    assert (tmp_path / WEIGHTS).read_bytes() == weights


@needs_network
def test_the_command_draws_a_bar_for_the_self_play_and_the_fit_unless_asked_not_to(
    tmp_path, capsys
) -> None:
    args = ["value", "deals=4", "chunk=2", "workers=1", "width=4", "epochs=1"]
    assert main([*args, "--out", str(tmp_path / "shown")]) == 0
    err = capsys.readouterr().err
    assert "self-play: 100%" in err and "4/4" in err and "fit: 100%" in err
    assert main([*args, "--out", str(tmp_path / "hidden"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


SMALL = DealValueConfig(deals=40, chunk=10, workers=1, width=8, epochs=3, batch_size=64)


class Stop(Exception):
    """Stands for a kill in the middle of a run."""


@needs_network
@pytest.mark.parametrize("siblings", [0.0, 2.0])
def test_a_stopped_run_carries_on_to_the_same_weights(tmp_path, monkeypatch, siblings) -> None:
    config = SMALL.model_copy(update={"siblings": siblings})
    whole = tmp_path / "whole"
    train_deal_value(config, whole)
    expected = np.load(whole / WEIGHTS)
    assert not (whole / PROGRESS).exists()

    out = tmp_path / "stopped"
    play = deal_value._play_chunk
    played: list[int] = []

    def play_until_chunk_2(task):
        if task[1] == 2:
            raise Stop
        played.append(task[1])
        return play(task)

    monkeypatch.setattr(deal_value, "_play_chunk", play_until_chunk_2)
    with pytest.raises(Stop):
        train_deal_value(config, out)
    assert sorted(p.name for p in (out / PROGRESS).glob("chunk_*")) == [
        "chunk_00000.npz",
        "chunk_00001.npz",
    ]
    assert not (out / WEIGHTS).exists()

    def play_counted(task):
        played.append(task[1])
        return play(task)

    save_fit = Progress.save_fit

    def save_then_stop_after_epoch_1(self, state):
        save_fit(self, state)
        if state["epoch"] == 1:
            raise Stop

    monkeypatch.setattr(deal_value, "_play_chunk", play_counted)
    monkeypatch.setattr(Progress, "save_fit", save_then_stop_after_epoch_1)
    with pytest.raises(Stop):
        train_deal_value(config, out)
    assert played == [0, 1, 2, 3]  # the second run played only the chunks the first had not

    monkeypatch.setattr(Progress, "save_fit", save_fit)
    summary = train_deal_value(config.model_copy(update={"workers": 2}), out)
    assert played == [0, 1, 2, 3]
    assert summary["read_back"] == "4 of 4 chunks, 2 of 3 epochs"
    assert ("held_out_sibling_r2" in summary) == (siblings > 0)
    assert not (out / PROGRESS).exists()
    with np.load(out / WEIGHTS) as got:
        for name in expected.files:
            np.testing.assert_array_equal(got[name], expected[name])


def test_a_stopped_run_of_another_config_is_refused_naming_the_keys(tmp_path) -> None:
    Progress(tmp_path / PROGRESS, SMALL)
    Progress(tmp_path / PROGRESS, SMALL.model_copy(update={"workers": 2}))  # free to change
    other = SMALL.model_copy(update={"deals": 41, "width": 16})
    with pytest.raises(ConfigError, match="deals: 40 there, 41 here, width: 8 there, 16 here"):
        train_deal_value(other, tmp_path)
    assert not (tmp_path / WEIGHTS).exists()


def test_a_stopped_run_from_before_a_key_was_added_carries_on_at_its_default(tmp_path) -> None:
    Progress(tmp_path, SMALL)
    identity = tmp_path / "config.yaml"
    written = yaml.safe_load(identity.read_text())
    del written["explore"]  # as runs wrote it before the key
    identity.write_text(yaml.safe_dump(written))
    Progress(tmp_path, SMALL)
    with pytest.raises(ConfigError, match="explore: 0.0 there, 0.2 here"):
        Progress(tmp_path, SMALL.model_copy(update={"explore": 0.2}))


def test_an_unreadable_chunk_is_played_again(tmp_path) -> None:
    progress = Progress(tmp_path, SMALL)
    part = deal_value.SelfPlay(np.ones((2, 10), np.int64), np.ones(2, np.float32), np.zeros(2))
    progress.save_chunk(0, part)
    loaded = progress.load_chunk(0)
    assert loaded is not None
    np.testing.assert_array_equal(loaded.rows, part.rows)
    progress.chunk_path(1).write_bytes(b"not an npz")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert progress.load_chunk(1) is None
    assert "chunk_00001.npz cannot be read" in str(caught[0].message)
    assert progress.read_back() == "1 of 4 chunks, 0 of 3 epochs"


def test_a_stopped_command_says_how_to_continue(tmp_path, monkeypatch, capsys) -> None:
    def interrupted(task):
        raise KeyboardInterrupt

    monkeypatch.setattr(deal_value, "_play_chunk", interrupted)
    assert main(["value", "--out", str(tmp_path), "deals=4", "chunk=2", "workers=1"]) == 130
    err = capsys.readouterr().err
    assert f"{tmp_path / PROGRESS}: run the same command again" in err
    assert (tmp_path / PROGRESS / "config.yaml").is_file()
