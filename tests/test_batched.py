"""The batched engine against the AEC environments and the capture reference of ``captures.py``.

The differential test plays many games at once in ``BatchedScopa`` and, beside it, one AEC
environment per game (``environments.make_aec``: ``scopa_v0`` at the Scopa tables,
``scopone_v0`` at the Scopone ones), dealt from the same generator sequence (``deal_source``
replays each environment's seeded draws) and driven by the same random legal actions. At every
step, at every table, the observation, mask, seat to act, every seat's reward, terminations
and infos (deal score and match score per side, the winner, the final observations) must be
identical.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from agents.random_agent import RandomAgent
from scopa_env.batched import (
    DEAL_SCORE_FIELDS,
    BatchedScopa,
    BatchState,
    random_legal_actions,
)
from scopa_env.batched_tables import BIT, NO_CARD, NOBODY, pattern_rows
from scopa_env.captures import capture_sets, consistent_sets, pickable_cards
from scopa_env.cards import cards_of, mask_of
from scopa_env.engine import Deal, IllegalMoveError, needs_redeal
from scopa_env.environments import make_aec
from scopa_env.observation import encode
from scopa_env.rules import Rules
from scopa_env.tables import TABLES, Table

CONFIGS: dict[str, dict[str, Any]] = {
    "scopa": {},
    "scopa_d_assi": Rules.preset("scopa_d_assi").to_dict(),
    "asso_pigliatutto": Rules.preset("asso_pigliatutto").to_dict(),
    "scopa_a_quindici": Rules.preset("scopa_a_quindici").to_dict(),
    "napola": Rules.preset("napola").to_dict(),
    "re_bello": Rules.preset("re_bello").to_dict(),
    "fewest_cards_capture": {"fewest_cards_capture": True},
    "last_play_scopa": {"last_play_scopa": True},
    "quindici_fewest": {"capture_sum": 15, "fewest_cards_capture": True},
    "asso_fewest_last": {
        "ace_takes_all": True,
        "ace_sweep_scopa": True,
        "fewest_cards_capture": True,
        "last_play_scopa": True,
    },
    # Every preset with options and a target of its own (short matches end in the test).
    "d_assi_last_target": Rules.preset("scopa_d_assi", last_play_scopa=True, target=4).to_dict(),
    "quindici_last_target": Rules.preset(
        "scopa_a_quindici", last_play_scopa=True, target=5
    ).to_dict(),
    "napola_re_bello_fewest": Rules.preset(
        "napola", re_bello=True, fewest_cards_capture=True, target=21
    ).to_dict(),
    "re_bello_last_target": Rules.preset("re_bello", last_play_scopa=True, target=6).to_dict(),
    "asso_napola_no_redeal": Rules.preset(
        "asso_pigliatutto", napola=True, redeal_three_kings=False, target=16
    ).to_dict(),
}
MODES = (("match", "match"), ("deal", "points"), ("deal", "match"), ("match", "points"))
TABLE_NAMES = tuple(TABLES)


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """``assert_array_equal`` at the cost of ``array_equal`` when they agree (every step)."""
    if not np.array_equal(actual, expected):
        np.testing.assert_array_equal(actual, expected)


def seat_of(agent: str) -> int:
    return int(agent.removeprefix("player_"))


def side_of_winner(winner: str | tuple[str, ...] | None, table: Table) -> int:
    """The side an AEC ``winner`` info names (an agent, or a partnership's agents), -1 for none."""
    if winner is None:
        return -1
    return table.side_of(seat_of(winner if isinstance(winner, str) else winner[0]))


class ReplayedDecks:
    """Each game's AEC draws, replayed: ``reset(seed)`` then ``Deal.new`` per deal."""

    def __init__(self, seeds: list[int], rules: Rules, table: Table = TABLES["scopa"]) -> None:
        self.rngs = [np.random.default_rng(seed) for seed in seeds]
        self.rules = rules
        self.table = table

    def __call__(self, games: np.ndarray, new_episode: np.ndarray) -> tuple[Any, Any]:
        decks, firsts = [], []
        for game, new in zip(games.tolist(), new_episode.tolist(), strict=True):
            rng = self.rngs[game]
            firsts.append(int(rng.integers(self.table.players)) if new else 0)
            while True:  # Deal.new's redeal loop
                deck = rng.permutation(40).tolist()
                if not needs_redeal(self.table.table_of(deck), self.rules):
                    break
            decks.append(deck)
        return np.array(decks), np.array(firsts)


def run_differential(
    rules: Rules,
    episode: str,
    reward: str,
    num_games: int,
    steps: int,
    seed: int,
    subsets: bool = False,
    table: str = "scopa",
) -> Counter[str]:
    """Drive both implementations in lockstep; returns counts of what was exercised."""
    kind = TABLES[table]
    agents = kind.agents
    seeds = [seed * 1000 + i for i in range(num_games)]
    envs = [make_aec(kind, rules=rules, episode=episode, reward=reward) for _ in seeds]
    for env, s in zip(envs, seeds, strict=True):
        env.reset(seed=s)
    batch = BatchedScopa(
        num_games,
        rules,
        table=table,
        episode=episode,
        reward=reward,
        deal_source=ReplayedDecks(seeds, rules, kind),
    )
    batch.reset()
    player = RandomAgent(seed=seed + 7)  # one uniform legal action per game, in one call
    rng = player.rng  # one stream for the subsets and the actions
    seen: Counter[str] = Counter()
    for _ in range(steps):
        games = np.arange(num_games)
        if subsets:
            games = np.flatnonzero(rng.random(num_games) < 0.6)
            if not games.size:
                continue
        hidden = batch.hidden()  # what an oracle critic reads beside the observation
        for g in games.tolist():
            env = envs[g]
            agent = env.agent_selection
            assert seat_of(agent) == batch.player[g]
            expected = env.observe(agent)
            assert_same(batch.obs[g], expected["observation"])
            assert_same(batch.mask[g], expected["action_mask"])
            if g == games[0]:  # one game a step: the state costs more than the rest
                assert_same(hidden[g], env.state()[batch.obs_size :])
            seen["pick steps" if env.phase == "pick" else "play steps"] += 1
        actions = player.act_batch(batch.obs[games], batch.mask[games])
        result = batch.step_games(games, actions) if subsets else batch.step(actions)
        for row, g in enumerate(games.tolist()):
            env = envs[g]
            actor = env.agent_selection
            env.step(int(actions[row]))
            assert tuple(result.rewards[row]) == tuple(env.rewards[a] for a in agents)
            assert bool(result.terminated[row]) == env.terminations[agents[0]]
            assert not result.truncated[row]
            info = env.infos[actor]
            ended = bool(result.infos.get("_deal_score", np.zeros(len(games), bool))[row])
            assert ended == ("deal_score" in info)
            if ended:
                seen["deals"] += 1
                breakdown = result.infos["deal_score"][row]
                assert breakdown.shape[0] == kind.sides
                for side in range(kind.sides):
                    side_scores = [info["deal_score"][side][k] for k in DEAL_SCORE_FIELDS]
                    assert breakdown[side].tolist() == side_scores
                assert tuple(result.infos["match_score"][row]) == tuple(info["match_score"])
            if result.terminated[row]:
                seen["episodes"] += 1
                assert result.infos["winner"][row] == side_of_winner(info["winner"], kind)
                for p, agent in enumerate(agents):
                    assert_same(
                        result.infos["final_obs"][row, p], env.observe(agent)["observation"]
                    )
                env.reset()
    return seen


@pytest.mark.parametrize("table", TABLE_NAMES)
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_the_aec_env(name: str, table: str) -> None:
    """Every rule set and preset at every table, each in one episode and reward mode."""
    index = sorted(CONFIGS).index(name) + TABLE_NAMES.index(table)
    episode, reward = MODES[index % len(MODES)]
    seen = run_differential(Rules(**CONFIGS[name]), episode, reward, 6, 150, 11, table=table)
    assert seen["deals"] >= 5 and seen["pick steps"] > 0, seen


@pytest.mark.parametrize("table", TABLE_NAMES)
@pytest.mark.parametrize(("episode", "reward"), MODES)
def test_matches_the_aec_env_every_episode_and_reward(
    episode: str, reward: str, table: str
) -> None:
    seen = run_differential(Rules(target=5), episode, reward, 8, 200, seed=3, table=table)
    assert seen["episodes"] >= 3, seen


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_matches_the_aec_env_when_stepping_subsets(table: str) -> None:
    seen = run_differential(Rules(target=4), "match", "points", 8, 250, 5, True, table=table)
    assert seen["episodes"] >= 2, seen


@pytest.mark.slow
@pytest.mark.parametrize("table", TABLE_NAMES)
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_the_aec_env_thousands_of_deals(name: str, table: str) -> None:
    """About 1,900 deals per rule set at two players and 120 to 150 at every other table, across
    every episode and reward mode: wide batches and fewer steps, since much of a batch step's
    cost is the step's, not the games'."""
    games, steps, least = (48, 400, 1500) if table == "scopa" else (10, 150, 100)
    deals = 0
    for seed, (episode, reward) in enumerate(MODES):
        seen = run_differential(
            Rules(**CONFIGS[name]), episode, reward, games, steps, seed=17 + seed, table=table
        )
        deals += seen["deals"]
    assert deals >= least, deals


# Captures on arbitrary tables --------------------------------------------------------------


def _positions(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random played cards and tables of 0..14 cards (larger than play usually makes)."""
    cards, tables = [], []
    for _ in range(n):
        perm = rng.permutation(40)
        size = int(rng.integers(0, 15))
        cards.append(int(perm[0]))
        tables.append(mask_of(perm[1 : 1 + size].tolist()))
    return np.array(cards), np.array(tables, dtype=np.uint64)


def _state(cards: np.ndarray, tables: np.ndarray) -> BatchState:
    """Player 0 holds the card, player 1 one other card; the rest are captured by player 1."""
    n = cards.shape[0]
    state = BatchState.zeros(n)
    for g in range(n):
        card, table = int(cards[g]), int(tables[g])
        other = next(c for c in range(40) if c != card and not table >> c & 1)
        state.hand[0, g] = 1 << card
        state.hand[1, g] = 1 << other
        state.pile[1, g] = ((1 << 40) - 1) & ~(table | 1 << card | 1 << other)
        state.table[g] = table
    state.pos[:] = 40
    state.cur[:] = 0
    state.first[:] = 0
    state.last[:] = 1
    return state


@pytest.mark.parametrize("name", ["scopa", "fewest_cards_capture", "scopa_d_assi",
                                  "scopa_a_quindici", "quindici_fewest"])  # fmt: skip
def test_capture_choice_matches_captures_module(name: str) -> None:
    rules = Rules(**CONFIGS[name])
    rng = np.random.default_rng(1)
    n = 3000
    cards, tables = _positions(rng, n)
    batch = BatchedScopa(n, rules)
    batch.set_state(_state(cards, tables))
    options = [capture_sets(int(t), int(c), rules) for c, t in zip(cards, tables, strict=True)]
    picked = [0] * n
    batch.step(cards)
    active = np.arange(n)
    kinds: Counter[str] = Counter()
    for _ in range(20):
        still = []
        for g in active.tolist():
            opts, table = options[g], int(tables[g])
            state = batch.state
            if state.pending[g] != NO_CARD:
                assert len(consistent_sets(opts, picked[g])) > 1
                expected = pickable_cards(opts, picked[g])
                assert mask_of(np.flatnonzero(batch.mask[g, 40:]).tolist()) == expected
                assert not batch.mask[g, :40].any()
                still.append(g)
                continue
            left = consistent_sets(opts, picked[g]) if opts else []
            if not opts:
                kinds["trail"] += 1
                assert int(state.table[g]) == table | 1 << int(cards[g])
            else:
                kinds["one" if len(opts) == 1 else "chosen"] += 1
                assert len(left) == 1
                assert int(state.pile[0, g]) == left[0] | 1 << int(cards[g])
                assert int(state.table[g]) == table & ~left[0]
        if not still:
            break
        active = np.array(still)
        cards_, offset = batch.legal_actions_bits()
        choice = random_legal_actions(cards_[active], rng) + offset[active]
        for g, a in zip(active.tolist(), choice.tolist(), strict=True):
            picked[g] |= 1 << (a - 40)
        batch.step_games(active, choice)
    assert (batch.state.pending == NO_CARD).all()
    assert kinds["trail"] > 50 and kinds["one"] > 50 and kinds["chosen"] > 50, kinds


def test_pattern_rows_are_every_multiset() -> None:
    classic, quindici = pattern_rows(None), pattern_rows(15)
    assert [row.need.shape[0] for row in classic] == [0, 1, 2, 4, 5, 9, 12, 18, 24, 33]
    assert [row.need.shape[0] for row in quindici] == [93, 72, 58, 43, 34, 25, 19, 13, 10, 6]
    for row in classic + quindici:
        assert (np.diff(row.size) >= 0).all()  # fewest cards first


# Reset, stepping, episodes -----------------------------------------------------------------


def test_reset_with_decks_deals_like_from_deck() -> None:
    rng = np.random.default_rng(0)
    decks = np.array([rng.permutation(40) for _ in range(6)])
    firsts = np.array([0, 1, 0, 1, 1, 0])
    batch = BatchedScopa(6)
    obs, mask, _ = batch.reset(decks=decks, first_players=firsts)
    for g in range(6):
        deal = Deal.from_deck(decks[g].tolist(), int(firsts[g]))
        masks = deal.masks
        expected = encode(
            masks["hands"], masks["table"], masks["piles"], masks["played"], len(deal.stock),
            deal.scope, deal.last_capturer, deal.dealer, deal.current_player,
        )  # fmt: skip
        np.testing.assert_array_equal(obs[g], expected)
        assert mask_of(np.flatnonzero(mask[g]).tolist()) == masks["hands"][deal.current_player]
        assert batch.player[g] == firsts[g]


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_reset_with_decks_deals_like_the_aec_options(table: str) -> None:
    """``reset(decks, first_players)`` is the AEC ``options={"deck", "first_player"}``."""
    kind = TABLES[table]
    rng = np.random.default_rng(0)
    decks = np.array([rng.permutation(40) for _ in range(6)])
    firsts = np.arange(6) % kind.players
    batch = BatchedScopa(6, table=table)
    obs, mask, _ = batch.reset(decks=decks, first_players=firsts)
    assert obs.shape == (6, batch.obs_size)
    for g in range(6):
        env = make_aec(kind)
        env.reset(options={"deck": decks[g].tolist(), "first_player": int(firsts[g])})
        expected = env.observe(env.agent_selection)
        assert seat_of(env.agent_selection) == batch.player[g] == firsts[g]
        np.testing.assert_array_equal(obs[g], expected["observation"])
        np.testing.assert_array_equal(mask[g], expected["action_mask"])
    with pytest.raises(ValueError, match="first_players"):
        batch.reset(decks=decks, first_players=kind.players)


def test_step_games_equals_full_steps() -> None:
    """Stepping in two halves changes nothing when each game's decks are its own."""
    rules = Rules()
    a = BatchedScopa(64, deal_source=ReplayedDecks(list(range(64)), rules))
    b = BatchedScopa(64, deal_source=ReplayedDecks(list(range(64)), rules))
    a.reset()
    b.reset()
    rng = np.random.default_rng(0)
    half = np.arange(32)
    for _ in range(120):
        actions = a.sample_actions(rng)
        ra = a.step(actions)
        rb1 = b.step_games(half, actions[:32])
        rb2 = b.step_games(half + 32, actions[32:])
        np.testing.assert_array_equal(a.obs, b.obs)
        np.testing.assert_array_equal(a.mask, b.mask)
        np.testing.assert_array_equal(ra.rewards, np.concatenate([rb1.rewards, rb2.rewards]))
        np.testing.assert_array_equal(ra.player, b.player)


def test_autoreset_keeps_final_observations() -> None:
    batch = BatchedScopa(32, Rules(target=3), seed=9)
    batch.reset()
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(400):
        result = batch.step(batch.sample_actions(rng))
        if not result.terminated.any():
            assert not result.rewards.any()
            continue
        done = result.terminated
        ended += int(done.sum())
        assert (result.infos["_final_obs"] == done).all()
        assert (result.rewards[done].sum(axis=1) == 0).all()
        assert set(np.abs(result.rewards[done]).ravel().tolist()) == {1.0}
        final = result.infos["final_obs"][done]
        assert (final[:, :, 40:80].sum(axis=2) == 0).all()  # leftovers went to a pile
        assert (final[:, :, 362] == 0).all()  # the stock is empty
        assert (result.obs[done, 362] == 1).all()  # the next episode starts with a full stock
        winner = result.infos["winner"][done]
        assert (result.rewards[done, 0] == np.where(winner == 0, 1, -1)).all()
    assert ended >= 10


def test_points_rewards_are_deal_point_differences() -> None:
    batch = BatchedScopa(16, episode="deal", reward="points", seed=1)
    batch.reset()
    rng = np.random.default_rng(3)
    for _ in range(200):
        result = batch.step(batch.sample_actions(rng))
        if result.infos:
            ended = result.infos["_deal_score"]
            totals = result.infos["deal_score"][ended, :, -1]
            np.testing.assert_array_equal(result.rewards[ended, 0], totals[:, 0] - totals[:, 1])
            assert (result.terminated == ended).all()


def test_illegal_actions_raise_and_change_nothing() -> None:
    batch = BatchedScopa(4, seed=0)
    batch.reset()
    before = batch.state.take(np.arange(4))
    actions = batch.sample_actions()
    actions[2] = next(a for a in range(80) if not batch.mask[2, a])
    with pytest.raises(IllegalMoveError, match="game 2"):
        batch.step(actions)
    for name in ("hand", "table", "pile", "cur"):
        np.testing.assert_array_equal(getattr(batch.state, name), getattr(before, name))
    with pytest.raises(ValueError):
        batch.step(actions[:3])


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_state_fits_in_a_kilobyte_per_game(table: str) -> None:
    batch = BatchedScopa(100, table=table)
    assert batch.state_bytes_per_game <= 1024


def test_set_state_refuses_a_state_of_another_table() -> None:
    batch = BatchedScopa(4, table="scopa_3", seed=0)
    batch.reset()
    before = batch.state.take(np.arange(4))
    with pytest.raises(ValueError, match="3 and 3"):
        batch.set_state(BatchState.zeros(4))
    np.testing.assert_array_equal(batch.state.hand, before.hand)


def test_random_legal_actions_are_uniform() -> None:
    rng = np.random.default_rng(0)
    cards = np.full(30000, mask_of([3, 17, 39]), dtype=np.uint64)
    counts = np.bincount(random_legal_actions(cards, rng), minlength=40)
    assert set(np.flatnonzero(counts).tolist()) == {3, 17, 39}
    assert counts[[3, 17, 39]].min() > 9000


def test_first_dealers_and_deals_come_from_the_seed() -> None:
    a, b = BatchedScopa(50, seed=8), BatchedScopa(50, seed=8)
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
    firsts = a.player.copy()
    assert 10 < firsts.sum() < 40
    tables = [cards_of(int(t)) for t in a.state.table]
    assert all(len(t) == 4 for t in tables)
    assert (a.state.pending == NO_CARD).all() and (a.state.last == NOBODY).all()
    assert int(np.bitwise_or.reduce(BIT)) == (1 << 40) - 1
