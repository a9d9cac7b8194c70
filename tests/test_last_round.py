"""The last-round network and its player (``agents.last_round``) and its fit
(``training.last_round``), on hand-built positions."""

from __future__ import annotations

import functools
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
    play_deals,
    take,
)

from agents import AlphaBetaAgent, make_agent
from agents.deal_value import position
from agents.last_round import (
    GLOBAL_FEATURES,
    TOKEN_FEATURES,
    LastRoundAgent,
    LastRoundValue,
    encode,
    move_values,
)
from cli.main import main
from scopa_env import scopa_v0
from scopa_env.cards import parse_card, parse_cards
from scopa_env.engine import Deal
from scopa_env.errors import CheckpointError, PlayerError
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules
from training.last_round import _Batches, _pick_regret, afterstates_of, fit, regret, save
from training.warm_start import Decisions, MoveValueTeacher


class PileCounter:
    """A stand-in network: the seat to move's pile size minus the other's, so that the player
    reading it takes as many cards as it can."""

    rules = Rules()

    def values(self, rows: np.ndarray) -> np.ndarray:
        return np.array([int(r[3]).bit_count() - int(r[4]).bit_count() for r in rows], float)


@pytest.fixture
def network(tmp_path: Path) -> Path:
    """An untrained small network's file."""
    path = tmp_path / "small.pt"
    torch.manual_seed(0)
    save(LastRoundValue(width=8, layers=1, heads=2), path)
    return path


def test_the_tokens_and_scores_of_a_hand_built_position() -> None:
    # The seat to move holds 7D AC, the other 2S; 3B on the table; the mover's pile holds
    # 2D 3D, the other's KS; scope 1 to 0; the other seat took last.
    row = (
        card_mask("7D AC"),
        card_mask("2S"),
        card_mask("3B"),
        card_mask("2D 3D"),
        card_mask("KS"),
        1,
        0,
        2,
        0,
        1,
    )
    tokens, counts, g = encode(np.array([row]))
    assert tokens.shape == (1, 4, TOKEN_FEATURES) and g.shape == (1, GLOBAL_FEATURES)
    assert counts.tolist() == [4]
    # Cards in card order: AC (the mover's), 7D (the mover's), 2S (the other's), 3B (table).
    by_card = {int(np.argmax(t[3:13])) + 1: t for t in tokens[0]}
    assert by_card[7][0:3].tolist() == [1, 0, 0] and by_card[7][13:17].tolist() == [1, 0, 0, 0]
    assert by_card[7][17] == pytest.approx(1.0)  # a seven: 21 of primiera, the most
    assert by_card[1][0:3].tolist() == [1, 0, 0] and by_card[1][17] == pytest.approx(16 / 21)
    assert by_card[2][0:3].tolist() == [0, 1, 0]
    assert by_card[3][0:3].tolist() == [0, 0, 1]
    assert g[0, 0 + 2] == 1 and g[0, 41 + 1] == 1  # pile sizes 2 and 1
    assert g[0, 82 + 2] == 1 and g[0, 93 + 0] == 1  # coins 2 and 0
    # Each suit (D C S B) of the two piles, the two hands and the table: its best card's
    # primiera rank among face 10, 2 12, 3 13, 4 14, 5 15, A 16, 6 18, 7 21 (1 to 8; 0 empty).
    buckets = g[0, 104:284].reshape(5, 4, 9)
    assert (buckets.sum(axis=2) == 1).all()
    assert buckets.argmax(axis=2).tolist() == [
        [3, 0, 0, 0],  # the mover's pile: 2D 3D
        [0, 0, 1, 0],  # the other's: KS
        [8, 6, 0, 0],  # the mover's hand: 7D AC
        [0, 0, 2, 0],  # the other's: 2S
        [0, 0, 0, 3],  # the table: 3B
    ]
    # Cards, coins, settebello and each suit's best primiera of the mover's pile, the other's,
    # and the cards in play.
    assert g[0, 293:314] * np.array([40, 10, 1, 21, 21, 21, 21] * 3) == pytest.approx(
        [2, 2, 0, 13, 0, 0, 0] + [1, 0, 0, 0, 0, 10, 0] + [4, 1, 1, 21, 16, 12, 13]
    )
    assert g[0, 284 + 5] == 1  # scope difference +1
    assert g[0, 317:320].tolist() == [0, 0, 1]  # the other seat took last
    assert g[0, 320] == pytest.approx(2 / 3) and g[0, 321] == pytest.approx(1 / 3)
    assert g.sum() > 0 and np.isfinite(g).all()


def last_play() -> Deal:
    """The deal's last play, by player 0 as the dealer: 5B takes 5S or 5C, and the other goes
    to it as the last capturer either way. Its pile wins cards, coins, settebello and
    primiera; no scopa on the last play: 4 points to 0 whichever it takes."""
    pile = parse_cards(SEVENS_AND_COINS)
    placed = {*pile, *parse_cards("5B 5S 5C")}
    return Deal.from_position(
        hands=(parse_cards("5B"), ()),
        table=parse_cards("5S 5C"),
        captures=(pile, [c for c in range(40) if c not in placed]),
        first_player=1,
        last_capturer=1,
    )


def test_a_move_that_ends_the_deal_is_valued_exactly() -> None:
    deal = last_play()
    moves = deal.legal_mask_moves()
    assert len(moves) == 2
    np.testing.assert_array_equal(move_values(PileCounter(), deal, moves), [4.0, 4.0])


def test_the_network_judges_the_position_for_the_other_seat() -> None:
    # KD sweeps 2S 3C 5C (4 cards into my pile); 5B must take 5C (2 cards).
    deal = last_round("KD 5B", "6S JB", "2S 3C 5C", SEVENS_AND_COINS)
    moves = deal.legal_mask_moves()
    values = move_values(PileCounter(), deal, moves)
    mine = len(parse_cards(SEVENS_AND_COINS))
    theirs = 40 - mine - 4 - 3  # the rest of the deck, hands and table aside
    by_card = {card: v for (card, _), v in zip(moves, values, strict=True)}
    assert by_card[parse_card("KD")] == mine + 4 - theirs
    assert by_card[parse_card("5B")] == mine + 2 - theirs


def test_the_player_plays_the_best_afterstate_and_the_base_before_the_last_round(
    network: Path,
) -> None:
    player = LastRoundAgent(value=str(network), base="greedy")
    player.net = PileCounter()
    deal = last_round("KD 5B", "6S JB", "2S 3C 5C", SEVENS_AND_COINS)
    assert player.act(observe_deal(deal)) == parse_card("KD")
    # A choice of captures: every three-card one takes AB or AC, the two-card ones 2S.
    deal = last_round("5B", "6S", "2S 3C AB AC", SEVENS_AND_COINS)
    pick = player.act(observe_deal(deal, pending=parse_card("5B")))
    assert pick in {take("AB"), take("AC"), take("3C")}
    # Before the last round the base player decides, row by row in a batch too.
    env = scopa_v0.raw_env(episode="deal")
    env.reset(seed=4)
    first = env.observe(env.agent_selection)
    greedy = make_agent("greedy")
    assert player.act(first) == greedy.act(first)
    batch = player.act_batch(first["observation"][None], first["action_mask"][None])
    assert batch.tolist() == [greedy.act(first)]
    # At the other tables every decision is the base player's.
    for table in ("scopa_4", "scopone"):
        seen = choice_at(table)
        assert player.act(seen) == greedy.act(seen)


def test_the_player_never_plays_an_illegal_action(network: Path) -> None:
    players = {f"player_{i}": LastRoundAgent(value=str(network), base="greedy") for i in (0, 1)}
    assert len(play_deals(players, range(6))) > 0


def test_saved_networks_load_whole_and_broken_ones_are_refused(
    network: Path, tmp_path: Path
) -> None:
    net = LastRoundValue.load(network)
    row = position(last_round("KD 5B", "6S JB", "2S 3C 5C", SEVENS_AND_COINS))
    again = LastRoundValue.load(network)
    assert net.values(np.array([row])) == pytest.approx(again.values(np.array([row])))
    with pytest.raises(CheckpointError, match="no last-round network"):
        LastRoundValue.load(tmp_path / "absent.pt")
    cut = tmp_path / "cut.pt"
    cut.write_bytes(network.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="not a last-round network"):
        LastRoundValue.load(cut)
    other = tmp_path / "other.pt"
    torch.save({"weights": 1}, other)
    with pytest.raises(CheckpointError, match="format"):
        LastRoundValue.load(other)
    wrong = tmp_path / "wrong.pt"
    saved = torch.load(network, weights_only=True)
    saved["width"] = 16
    torch.save(saved, wrong)
    with pytest.raises(CheckpointError, match="broken"):
        LastRoundValue.load(wrong)
    with pytest.raises(PlayerError, match="learnt"):
        make_agent("last_round", value=str(network), rules="napola")
    # The match target is not a rule of the deal: another target plays.
    make_agent("last_round", value=str(network), rules={"target": 21}, base="greedy")


def last_round_decisions(seeds: range) -> Decisions:
    """Both seats' decisions with a choice in the last round of greedy deals, and the pick
    of ``last_play``, valued by the exact search."""
    teacher = MoveValueTeacher(AlphaBetaAgent(seed=0))
    greedy = make_agent("greedy")
    rows: list[tuple[np.ndarray, np.ndarray]] = []
    env = scopa_v0.raw_env(episode="deal")
    for seed in seeds:
        env.reset(seed=seed)
        while not env.terminations[env.agent_selection]:
            seen = env.observe(env.agent_selection)
            info = InfoState.from_observation(seen["observation"])
            if info.stock_size == 0 and seen["action_mask"].sum() > 1:
                rows.append((seen["observation"], seen["action_mask"].astype(bool)))
            env.step(greedy.act(seen))
    ending = observe_deal(last_play(), pending=parse_card("5B"))
    rows.append((ending["observation"], ending["action_mask"].astype(bool)))
    obs = np.stack([r[0] for r in rows])
    masks = np.stack([r[1] for r in rows])
    actions, values = teacher.act_batch_with_values(obs, masks)
    return Decisions(obs, masks, actions, np.zeros(len(actions), np.float32), values)


@functools.cache
def decisions() -> Decisions:
    return last_round_decisions(range(30))


def test_afterstates_carry_the_search_values_and_the_exact_ends() -> None:
    data = decisions()
    after = afterstates_of(data, Rules())
    assert after.decisions == len(data.actions) > 20
    # Every legal action of every decision, with the search's value.
    assert len(after.target) == int(data.masks.sum())
    np.testing.assert_array_equal(np.sort(after.target), np.sort(data.values[data.masks]))
    # A move that ends the deal: its exact value is the solver's when it is its action's only
    # move (and never above it, an action being worth its best move).
    ends = ~np.isnan(after.exact)
    np.testing.assert_array_equal(after.exact[ends][-2:], [4.0, 4.0])  # last_play's two picks
    assert (after.exact[ends] <= after.target[after.pair[ends]] + 1e-6).all()
    single = np.bincount(after.pair, minlength=len(after.target)) == 1
    alone = ends & single[after.pair]
    np.testing.assert_allclose(after.exact[alone], after.target[after.pair[alone]], atol=1e-5)


def test_fitting_lowers_the_regret_on_the_decisions_fitted() -> None:
    after = afterstates_of(decisions(), Rules())
    torch.manual_seed(0)
    net = LastRoundValue(width=16, layers=1, heads=2)
    before, _ = regret(net, after)
    losses: list[float] = []
    fit(after, net, 60, 8, 3e-3, 0, lambda _, loss: losses.append(loss))
    after_fit, half = regret(net, after)
    assert losses[-1] < losses[0] / 3
    assert after_fit < before / 2 and half >= 0


def test_a_network_without_attention_reads_each_card_alone_and_fits(tmp_path: Path) -> None:
    """``layers=0``: no transformer layer, so a token's embedding does not depend on the other
    tokens; its values are still fitted, saved and read back."""
    after = afterstates_of(decisions(), Rules())
    torch.manual_seed(0)
    net = LastRoundValue(width=16, layers=0, heads=2)
    assert net.encoder is None
    tokens, counts, g = (torch.from_numpy(a) for a in encode(after.rows[:1]))
    n = int(counts[0])
    assert n >= 2
    with torch.no_grad():
        glob = net.global_in(g)
        cards = torch.relu(net.token_in(tokens[0, :n]) + glob)  # each card with the row alone
        pooled = torch.cat([glob[0], cards.mean(0), cards.amax(0)])
        torch.testing.assert_close(net(tokens, counts, g), net.head(pooled[None]).squeeze(1))
    start, _ = regret(net, after)
    fit(after, net, 60, 8, 3e-3, 0)
    fitted, _ = regret(net, after)
    assert fitted < start / 2
    save(net, tmp_path / "sets.pt")
    loaded = LastRoundValue.load(tmp_path / "sets.pt")
    assert loaded.layers == 0
    np.testing.assert_array_equal(loaded.values(after.rows[:50]), net.values(after.rows[:50]))
    with pytest.raises(ValueError, match="layers >= 0; got width=16, layers=-1"):
        LastRoundValue(width=16, layers=-1, heads=2)


def test_the_level_weight_ties_the_values_to_the_search_s_scale() -> None:
    """With the loss centred on each decision alone, a value can be off by any amount the
    same for every move of a decision; the plain squared error puts it on the search's scale."""
    after = afterstates_of(decisions(), Rules())
    actions = np.arange(len(after.target))

    def level_error(weight: float) -> float:
        torch.manual_seed(0)
        net = LastRoundValue(width=16, layers=1, heads=2)
        fit(after, net, 4, 8, 3e-3, 0, level_weight=weight)
        with torch.no_grad():
            values = _Batches(after).predict(net, actions).numpy()
        return float(((values - after.target) ** 2).mean())

    assert level_error(1.0) < level_error(0.0) / 2


def test_the_pick_loss_is_the_regret_of_a_softmax_pick() -> None:
    """Two decisions of two actions: the network tells the first's apart (the better one by a
    point, twenty temperatures), and values the second's alike, where the search finds one
    a point better: a pick at random there gives up half a point."""
    predicted = torch.tensor([1.0, 0.0, 0.5, 0.5], requires_grad=True)
    target = torch.tensor([1.0, 0.0, 0.0, 1.0])
    owner = np.array([0, 0, 1, 1])
    loss = _pick_regret(predicted, target, owner, 2, 0.05)
    assert loss.item() == pytest.approx((1 / (1 + np.exp(20)) + 0.5) / 2)
    loss.backward()
    assert predicted.grad is not None
    assert predicted.grad[3] < 0 < predicted.grad[2]  # raise the better action, lower the other


def test_the_fit_adds_the_pick_loss_at_its_weight() -> None:
    after = afterstates_of(decisions(), Rules())

    def fitted(weight: float) -> dict[str, torch.Tensor]:
        torch.manual_seed(0)
        net = LastRoundValue(width=8, layers=1, heads=2)
        fit(after, net, 1, 8, 3e-3, 0, pick_weight=weight)
        return net.state_dict()

    plain, again, picking = fitted(0.0), fitted(0.0), fitted(1.0)
    assert all(torch.equal(w, again[k]) for k, w in plain.items())
    assert not all(torch.equal(w, picking[k]) for k, w in plain.items())


class _Stop(Exception):
    pass


def _fitted(
    progress: Path | None, stop_after: int | None = None, init: int = 0, **identity
) -> LastRoundValue:
    torch.manual_seed(init)
    net = LastRoundValue(width=8, layers=1, heads=2)

    def after(epoch: int, _loss: float) -> None:
        if epoch == stop_after:
            raise _Stop

    fit(afterstates_of(decisions(), Rules()), net, 4, 8, 3e-3, 0, after, progress, identity)
    return net


def test_a_stopped_fit_carries_on_to_the_weights_of_an_unstopped_one(tmp_path: Path) -> None:
    whole = _fitted(None)
    progress = tmp_path / "net.fit.pt"
    with pytest.raises(_Stop):
        _fitted(progress, stop_after=1, epochs=4)
    carried = _fitted(progress, init=1, epochs=4)  # other first weights: epochs 0-1 read back
    for name, weights in whole.state_dict().items():
        assert torch.equal(weights, carried.state_dict()[name]), name
    assert torch.load(progress, weights_only=True)["epoch"] == 3
    with pytest.raises(CheckpointError, match="epochs: 4 there, 5 here"):
        _fitted(progress, epochs=5)
    for broken in (b"cut short", None):
        if broken is None:  # readable, of this fit's identity, without its weights
            torch.save({"identity": {"epochs": 4}, "epoch": 1}, progress)
        else:
            progress.write_bytes(broken)
        with pytest.warns(UserWarning, match="is not a saved fit"):
            again = _fitted(progress, epochs=4)
        for name, weights in whole.state_dict().items():
            assert torch.equal(weights, again.state_dict()[name]), name


def test_tasks_without_values_are_refused() -> None:
    data = decisions()._replace(values=None)
    with pytest.raises(ValueError, match="no search values"):
        afterstates_of(data, Rules())


def task_folder(tmp_path: Path) -> Path:
    """A folder of one warm-start task holding ``decisions()``."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    np.savez(tasks / "task_0000.npz", **decisions()._asdict())
    return tasks


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        (["--epochs", "0"], "--epochs and --batch-size must be positive"),
        (["--learning-rate", "0"], "--learning-rate above 0"),
        (["--level-weight", "-0.5"], "--level-weight must be 0 or more, got -0.5"),
        (["--pick-weight", "-1"], "--pick-weight must be 0 or more"),
        (["--pick-temperature", "0"], "--pick-temperature above 0, got 0.0 and 0.0"),
    ],
)
def test_the_command_refuses_a_fit_it_cannot_run(
    tmp_path: Path, option: list[str], problem: str
) -> None:
    out = tmp_path / "net.pt"
    with pytest.raises(SystemExit, match=problem):
        main(["last-round", "--tasks", str(tmp_path), "--out", str(out), *option])
    assert not out.exists()


def test_the_command_fits_and_saves_a_network(tmp_path: Path, capsys) -> None:
    data = decisions()
    tasks = task_folder(tmp_path)
    out = tmp_path / "net" / "last_round.pt"
    args = ["last-round", "--tasks", str(tasks), "--held", str(tasks), "--out", str(out)]
    assert main([*args, "--epochs", "2", "--width", "8", "--heads", "2", "--layers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "held-out regret" in printed and f"saved {out}" in printed
    assert LastRoundValue.load(out).width == 8
    assert not out.with_suffix(".fit.pt").exists()  # the saved fit goes once the network is out
    # --seed fixes the first weights too, so the same command fits the same network again.
    again = tmp_path / "again.pt"
    shape = ["--epochs", "2", "--width", "8", "--heads", "2", "--layers", "1"]
    assert main([*args[:-1], str(again), *shape]) == 0
    first, second = LastRoundValue.load(out).state_dict(), LastRoundValue.load(again).state_dict()
    assert all(torch.equal(first[name], second[name]) for name in first)
    capsys.readouterr()
    # Tasks of several folders are read together.
    small = ["--epochs", "1", "--width", "8", "--heads", "2", "--layers", "1"]
    assert main(["last-round", "--tasks", str(tasks), str(tasks), "--out", str(out), *small]) == 0
    assert capsys.readouterr().out.startswith(f"{2 * len(data.actions):,} last-round decisions")
    assert main(["last-round", "--tasks", str(tmp_path), "--out", str(out)]) != 0
    assert "holds no warm-start tasks" in capsys.readouterr().err
    # A stopped fit of other arguments is refused rather than mixed in.
    torch.save({"identity": {"epochs": 7}}, out.with_suffix(".fit.pt"))
    assert main(["last-round", "--tasks", str(tasks), "--out", str(out), *small]) != 0
    assert "a stopped fit of other arguments (" in capsys.readouterr().err


def test_a_stopped_fit_of_tasks_that_changed_since_is_refused(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = task_folder(tmp_path)
    out = tmp_path / "last_round.pt"
    args = ["last-round", "--tasks", str(tasks), "--out", str(out), "--epochs", "1"]
    args += ["--width", "8", "--heads", "2", "--layers", "1"]

    def stopped(net: object, path: Path) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr("cli.last_round.save", stopped)
        assert main(args) != 0  # stopped before the network was written
    assert "stopped by SIGINT" in capsys.readouterr().err
    assert out.with_suffix(".fit.pt").is_file()
    np.savez(tasks / "task_0001.npz", **decisions()._asdict())  # the collection went on
    assert main(args) != 0
    fitted = afterstates_of(decisions(), Rules()).decisions
    err = capsys.readouterr().err
    assert "a stopped fit of other arguments (" in err
    assert f"decisions: {fitted} there, {2 * fitted} here" in err
    assert not out.exists()


def test_the_shipped_network_takes_the_sweep_the_solver_takes() -> None:
    # As in test_warm_start_alphabeta: 5B sweeps 3C+2S and wins 5 points to 0; trailing AB
    # leaves 3+2+1 for 6S to sweep, 4 points to 1.
    deal = last_round("5B AB", "6S JB", "3C 2S", SEVENS_AND_COINS)
    player = make_agent("last_round")
    assert player.act(observe_deal(deal)) == parse_card("5B")
    assert_plays_a_match(player)
