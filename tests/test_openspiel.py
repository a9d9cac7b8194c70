"""The OpenSpiel game ``python_scopa``: OpenSpiel's own simulation checks, a move-for-move
comparison with the PettingZoo environments, the exact shuffle, resampling, serialization,
OpenSpiel's search bots, and the OpenSpiel ISMCTS player in the project's harness."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.seats import SeatView

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from evaluation.harness import play_game  # noqa: E402
from scopa_env import scopa_v0, scopone_observation  # noqa: E402
from scopa_env.cards import KINGS_MASK, NUM_CARDS, cards_of  # noqa: E402
from scopa_env.engine import Deal, needs_redeal  # noqa: E402
from scopa_env.environments import make_aec  # noqa: E402
from scopa_env.errors import PlayerError, PositionError, TableError  # noqa: E402
from scopa_env.integrations import openspiel  # noqa: E402
from scopa_env.observation import OBS_SIZE, OBS_SLICES  # noqa: E402
from scopa_env.rules import PRESETS, Rules  # noqa: E402
from scopa_env.table_observation import layout_for  # noqa: E402
from scopa_env.tables import TABLES as TABLE_KINDS  # noqa: E402

TABLES = sorted(TABLE_KINDS)
KINGS = cards_of(KINGS_MASK)


def load(table: str = "scopa", rules: Rules | None = None, first_player: int = 0):
    params = openspiel.game_parameters(rules or Rules(), table, first_player)
    return pyspiel.load_game(openspiel.GAME_NAME, params)


def deck_for(seed: int, table: str, rules: Rules) -> list[int]:
    """A random deck order the engine would not deal again."""
    rng = np.random.default_rng(seed)
    while True:
        deck = rng.permutation(NUM_CARDS).tolist()
        if not needs_redeal(TABLE_KINDS[table].table_of(deck), rules):
            return deck


def dealt(game, deck):
    state = game.new_initial_state()
    for card in deck:
        state.apply_action(card)
    return state


def random_playout(state, rng, on_state=None):
    """Play random chance outcomes and actions to the end; ``on_state`` sees every state."""
    while True:
        if on_state is not None:
            on_state(state)
        if state.is_terminal():
            return state
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))


# Loading and parameters -------------------------------------------------------------------


def test_load_by_string_and_parameters():
    game = pyspiel.load_game("python_scopa(table=scopone)")
    assert game.num_players() == 4
    assert game.num_distinct_actions() == 80
    game = pyspiel.load_game("python_scopa", {"preset": "napola", "target": 21})
    assert game.rules == Rules.preset("napola", target=21)
    game = pyspiel.load_game("python_scopa(capture_sum=15,fewest_cards_capture=True)")
    assert game.rules == Rules(capture_sum=15, fewest_cards_capture=True)
    for table in TABLES:
        game = pyspiel.load_game(f"python_scopa(table={table})")
        assert game.num_players() == TABLE_KINDS[table].players
    with pytest.raises(TableError, match="unknown table"):
        openspiel.ScopaGame({"table": "briscola"})
    with pytest.raises(PositionError, match="first_player"):
        openspiel.ScopaGame({"table": "scopa_3", "first_player": 3})


def test_every_rule_option_is_a_parameter():
    spec = openspiel._GAME_TYPE.parameter_specification
    assert {"table", "preset", "first_player", *Rules().to_dict()} == set(spec)
    for name in PRESETS:
        rules = Rules.preset(name, target=16)
        assert load(rules=rules).rules == rules


def test_utility_bounds_hold_the_best_deal():
    # A side that takes every card and sweeps with each of its 18 plays: 4 + 18 points.
    assert load().max_utility() == 22
    assert load("scopone_scientifico").max_utility() == 24
    assert load(rules=Rules.preset("napola")).max_utility() == 32
    assert load().min_utility() == -22 and load("scopa_6").max_utility() == 22
    # Three sides, 12 plays each: at best 4 + 12 over a mean of 0; at worst 0 against another
    # two sides sharing every card's 4 points and a scopa with each of their 24 plays.
    assert load("scopa_3").max_utility() == 16
    assert load("scopa_3").min_utility() == -(4 + 24) / 2


# OpenSpiel's checks -------------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
def test_random_sim_test(table):
    pyspiel.random_sim_test(load(table), num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize("preset", ["scopa_a_quindici", "asso_pigliatutto"])
def test_random_sim_test_variants(preset):
    pyspiel.random_sim_test(
        load(rules=Rules.preset(preset)), num_sims=2, serialize=True, verbose=False
    )


@pytest.mark.parametrize("table", TABLES)
def test_simulation_checks(table):
    """What OpenSpiel's games_sim_test checks on every state of random games."""
    game = load(table, Rules(capture_sum=15))  # scopa a quindici: many capture choices
    n, sides = game.num_players(), TABLE_KINDS[table].sides
    rng = np.random.default_rng(1)

    def check(state):
        clone = state.clone()
        assert str(clone) == str(state) and clone.history() == state.history()
        text = pyspiel.serialize_game_and_state(game, state)
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        assert str(game2) == str(game)
        assert str(state2) == str(state) and state2.history() == state.history()
        assert state2.legal_actions() == state.legal_actions()
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            assert math.isclose(sum(probs), 1.0) and min(probs) > 0
        elif not state.is_terminal():
            legal = state.legal_actions()
            assert legal == sorted(legal) and legal
            assert all(0 <= a < game.num_distinct_actions() for a in legal)
        for p in range(n):
            assert len(state.observation_tensor(p)) == game.observation_tensor_size()
            assert len(state.information_state_tensor(p)) == game.information_state_tensor_size()
            state.observation_string(p)
            state.information_state_string(p)

    for _ in range(2):
        final = random_playout(game.new_initial_state(), rng, check)
        returns = final.returns()
        assert all(game.min_utility() <= r <= game.max_utility() for r in returns)
        assert math.isclose(sum(returns), game.utility_sum())
        assert all(returns[p] == returns[p % sides] for p in range(n))  # partners share
        if sides == 2:
            assert all(returns[p] == -returns[1 - p % 2] for p in range(n))
        assert len(final.history()) <= game.max_game_length() + NUM_CARDS


SLICES = {
    "scopa": OBS_SLICES,
    "scopone": scopone_observation.OBS_SLICES,
    "scopone_scientifico": scopone_observation.OBS_SLICES,
    **{t: layout_for(t).slices for t in ("scopa_3", "scopa_4", "scopa_6")},
}


@pytest.mark.parametrize("table", TABLES)
def test_observer_has_the_named_pieces_of_the_observation(table):
    from open_spiel.python.observation import make_observation

    game = load(table)
    kind = TABLE_KINDS[table]
    state = dealt(game, deck_for(0, table, Rules()))
    seen = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    seen.set_from(state, 0)
    assert list(seen.dict) == list(SLICES[table])
    assert np.flatnonzero(seen.dict["hand"]).tolist() == list(state.legal_actions())
    assert seen.dict["table"].sum() == kind.table_size
    assert seen.dict["unseen"].sum() == NUM_CARDS - kind.hand_size - kind.table_size
    for name, piece in seen.dict.items():
        np.testing.assert_array_equal(
            piece, np.asarray(state.observation_tensor(0))[SLICES[table][name]]
        )
    recall = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    state.apply_action(state.legal_actions()[0])
    recall.set_from(state, 1)
    assert recall.dict["actions"].shape == (openspiel.MAX_DECISIONS, 80)
    assert recall.dict["actions"].sum() == 1
    assert recall.string_from(state, 1) == state.information_state_string(1)


def test_clone_is_independent():
    game = load()
    state = dealt(game, deck_for(0, "scopa", Rules()))
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert state.history() != clone.history()
    assert str(state) != str(clone)


# The shuffle -------------------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
def test_shuffle_draws_each_deck_without_redeal_uniformly(table):
    """A deck's chance path has probability 1 / (the decks that need no redeal)."""
    game = load(table)
    t = TABLE_KINDS[table].table_size
    # Decks with at most two kings on the table: choose the kings' table and other positions.
    valid = sum(math.comb(t, j) * math.comb(NUM_CARDS - t, 4 - j) for j in range(3))
    log_valid = math.log(valid) + math.lgamma(5) + math.lgamma(NUM_CARDS - 4 + 1)
    for seed in range(3):
        deck = deck_for(seed, table, Rules())
        state, log_p = game.new_initial_state(), 0.0
        for card in deck:
            log_p += math.log(dict(state.chance_outcomes())[card])
            state.apply_action(card)
        assert math.isclose(log_p, -log_valid, rel_tol=1e-12)


def test_shuffle_never_deals_a_third_king_to_the_table():
    game = load()
    state = game.new_initial_state()
    others = [c for c in range(NUM_CARDS) if c not in KINGS]
    for card in [*others[:6], KINGS[0], KINGS[1]]:  # positions 6..9 are the table
        state.apply_action(card)
    outcomes = dict(state.chance_outcomes())
    assert not set(KINGS) & set(outcomes)
    assert math.isclose(sum(outcomes.values()), 1.0)
    no_redeal = load(rules=Rules(redeal_three_kings=False)).new_initial_state()
    for card in [*others[:6], KINGS[0], KINGS[1]]:
        no_redeal.apply_action(card)
    assert set(dict(no_redeal.chance_outcomes())) >= set(KINGS[2:])


# The environments, move for move ----------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("preset", ["scopa", "scopa_a_quindici", "asso_pigliatutto"])
def test_same_game_as_the_environment(table, preset):
    rules = Rules.preset(preset, fewest_cards_capture=preset == "scopa")
    rng = np.random.default_rng([len(table), len(preset)])
    for seed in range(4):
        deck = deck_for(seed, table, rules)
        first = seed % TABLE_KINDS[table].players
        env = make_aec(table, rules=rules, episode="deal", reward="points")
        env.reset(options={"deck": deck, "first_player": first})
        state = dealt(load(table, rules, first), deck)
        steps = 0
        while not state.is_terminal():
            assert env.possible_agents[state.current_player()] == env.agent_selection
            assert state.legal_actions() == env.legal_actions()
            for p, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(
                    state.observation_tensor(p), env.observe(agent)["observation"]
                )
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            env.step(action)
            steps += 1
        assert all(env.terminations.values())
        assert state.returns() == [env.rewards[agent] for agent in env.possible_agents]
        totals = [side.total for side in env.deal.score()]
        sides = len(totals)
        for p, utility in enumerate(state.returns()):  # my side minus the others' mean
            mine = totals[p % sides]
            assert math.isclose(utility, mine - (sum(totals) - mine) / (sides - 1))
        assert steps >= 36


# Resampling and positions -----------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
def test_resample_keeps_what_the_player_knows(table):
    game = load(table)
    rng = np.random.default_rng(2)
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    state = dealt(game, deck_for(3, table, Rules()))
    for plies in (0, 7, 16, 25):
        while len(state.history()) < NUM_CARDS + plies and not state.is_terminal():
            state.apply_action(int(rng.choice(state.legal_actions())))
        player = state.current_player()
        others = set()
        for _ in range(8):
            sample = state.resample_from_infostate(player, sampler)
            assert sample.information_state_string(player) == state.information_state_string(player)
            assert sample.observation_tensor(player) == state.observation_tensor(player)
            assert sample.legal_actions() == state.legal_actions()
            assert sample.history()[NUM_CARDS:] == state.history()[NUM_CARDS:]
            others.add(str(sample))
        assert len(others) > 1  # the hidden cards are dealt anew


@pytest.mark.parametrize("table", TABLES)
def test_resample_deals_the_hidden_cards_uniformly(table):
    """Each unseen card lands in the next seat's hand as often as any other."""
    kind = TABLE_KINDS[table]
    state = dealt(load(table), deck_for(8, table, Rules()))
    sampler = pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)
    samples = 660
    counts = np.zeros(NUM_CARDS)
    for _ in range(samples):
        sample = state.resample_from_infostate(0, sampler)
        counts[list(sample._pos.deal.hands[1])] += 1
    unseen = np.flatnonzero(counts)
    assert len(unseen) == NUM_CARDS - kind.hand_size - kind.table_size
    share = kind.hand_size / len(unseen)
    expected = samples * share
    spread = np.sqrt(expected * (1 - share))
    assert np.all(np.abs(counts[unseen] - expected) < 4.5 * spread)


def test_state_at_a_position():
    game = load()
    deal = Deal.new(np.random.default_rng(4))
    for _ in range(5):
        deal.play(deal.legal_moves()[0])
    state = game.new_state_at(deal)
    assert state.current_player() == deal.current_player
    assert state.legal_actions() == list(deal.hands[deal.current_player])
    assert state.history() == []
    sample = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(1, 0.0, 1.0))
    assert sample.information_state_string(0) == state.information_state_string(0)
    text = pyspiel.serialize_game_and_state(game, state)
    assert str(pyspiel.deserialize_game_and_state(text)[1]) == str(state)
    final = random_playout(state, np.random.default_rng(0))
    assert final.is_terminal()
    with pytest.raises(PositionError, match="scopa_4"):
        load("scopa_4").new_state_at(deal)


def test_illegal_action_is_refused():
    state = dealt(load(), deck_for(0, "scopa", Rules()))
    held = set(state.legal_actions())
    with pytest.raises(ValueError, match="illegal"):
        state.apply_action(next(c for c in range(NUM_CARDS) if c not in held))
    shuffle = load().new_initial_state()
    shuffle.apply_action(3)
    with pytest.raises(ValueError, match="not a card left"):
        shuffle.apply_action(3)
    void = load().new_initial_state()  # three kings at the table positions 6..9
    others = [c for c in range(NUM_CARDS) if c not in KINGS]
    with pytest.raises(ValueError, match="deal again"):
        for card in [*others[:6], *KINGS[:3], *others[6:], KINGS[3]]:
            void.apply_action(card)


# OpenSpiel's bots --------------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
def test_openspiel_ismcts_and_mcts_play_full_games(table):
    """OpenSpiel's ISMCTS (Python: it resamples through this game) against its C++ MCTS (which
    searches the true state)."""
    game = load(table)
    n = game.num_players()
    rng = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    searcher = ismcts.ISMCTSBot(game, evaluator, uct_c=4.0, max_simulations=8, random_state=rng)
    perfect = pyspiel.MCTSBot(
        game, pyspiel.RandomRolloutEvaluator(1, 0), 4.0, 8, 10**6, False, 0, False
    )
    bots = [searcher if p % 2 == 0 else perfect for p in range(n)]
    for seed in range(2 if n == 2 else 1):
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
        assert len(returns) == n and math.isclose(sum(returns), 0.0)
        assert all(game.min_utility() <= r <= game.max_utility() for r in returns)


# OpenSpiel's ISMCTS as a player of the harness ---------------------------------------------


def test_openspiel_player_rebuilds_its_observation():
    """The state the player searches shows what its observation shows (but the played cards,
    which the determinizer does not deal) and has the environment's legal actions."""
    from agents.openspiel_bot import OpenSpielISMCTSAgent

    rules = Rules.preset("scopa_a_quindici")  # many captures to choose among
    player = OpenSpielISMCTSAgent(rules=rules, simulations=2, seed=0)
    env = scopa_v0.raw_env(rules=rules, episode="deal")
    env.reset(options={"deck": deck_for(5, "scopa", rules), "first_player": 1})
    rng = np.random.default_rng(0)
    keep = np.ones(OBS_SIZE, bool)
    keep[OBS_SLICES["my_played"]] = keep[OBS_SLICES["opp_played"]] = False
    picks = 0
    while not all(env.terminations.values()):
        observation = env.observe(env.agent_selection)
        state = player.state(SeatView.from_observation(observation["observation"]))
        assert state.current_player() == 0
        assert state.legal_actions() == env.legal_actions()
        np.testing.assert_array_equal(
            np.asarray(state.observation_tensor(0))[keep], observation["observation"][keep]
        )
        picks += env.phase == "pick"
        env.step(int(rng.choice(env.legal_actions())))
    assert picks  # the deal had capture choices to rebuild


def test_openspiel_player_plays_reproducible_deals():
    from agents import make_agent

    env = scopa_v0.raw_env(episode="deal", reward="points")
    options = {"deck": deck_for(6, "scopa", Rules()), "first_player": 0}
    results = []
    for _ in range(2):
        players = [make_agent("openspiel-ismcts", simulations=6), make_agent("greedy")]
        seconds, plays = play_game(env, players, [11, 12], options)
        results.append((env.match.scores, plays))
    assert results[0] == results[1]
    assert sum(results[0][1]) == 36


@pytest.mark.parametrize("table", ["scopa_3", "scopone"])
def test_openspiel_player_refuses_other_tables(table):
    from agents import make_agent

    env = make_aec(table)
    env.reset(seed=0)
    player = make_agent("openspiel-ismcts", simulations=2)
    with pytest.raises(PlayerError, match="two-player Scopa only"):
        player.act(env.observe(env.agent_selection))
