"""The observation encoder against a plain per-card reference, and the documented layout."""

from __future__ import annotations

import struct
from functools import partial

import numpy as np
import pytest
from conftest import scalar_values

from scopa_env import scopa_v0, scopone_observation, scopone_v0, table_observation
from scopa_env.actions import NUM_ACTIONS
from scopa_env.cards import mask_of
from scopa_env.engine import Deal
from scopa_env.observation import (
    OBS_HIGH,
    OBS_SIZE,
    OBS_SLICES,
    PLANES,
    ObservationWriter,
    encode,
    plane,
)


def reference_encode(deal: Deal, player: int, pending: int | None, picked: int, score, target):
    """The layout of observation.py's docstring, written card by card."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    opp = 1 - player
    hands, table, captures, played = deal.hands, deal.table, deal.captures, deal.played
    seen = set(hands[player]) | set(table) | set(captures[0]) | set(captures[1])
    members = {
        "hand": set(hands[player]) - {pending},
        "table": set(table),
        "my_captures": set(captures[player]),
        "opp_captures": set(captures[opp]),
        "my_played": set(played[player]),
        "opp_played": set(played[opp]),
        "unseen": set(range(40)) - seen,
        "pending": set() if pending is None else {pending},
        "picked": {c for c in range(40) if picked >> c & 1},
    }
    for name, cards in members.items():
        for card in cards:
            obs[OBS_SLICES[name].start + card] = 1.0
    obs[OBS_SLICES["phase"].start + (pending is not None)] = 1.0
    obs[OBS_SLICES["stock_size"]] = len(deal.stock) / 30
    obs[OBS_SLICES["opp_hand_size"]] = len(hands[opp]) / 3
    obs[OBS_SLICES["scope"]] = (deal.scope[player] / 18, deal.scope[opp] / 18)
    obs[OBS_SLICES["match_score"]] = (min(score[player] / target, 4), min(score[opp] / target, 4))
    obs[OBS_SLICES["target"]] = target / 100
    obs[OBS_SLICES["dealer"]] = float(deal.dealer == player)
    last = deal.last_capturer
    obs[OBS_SLICES["last_capturer"].start + (2 if last is None else int(last != player))] = 1.0
    return obs


def test_layout_is_contiguous_and_planes_come_first():
    assert [OBS_SLICES[name] for name in PLANES] == [slice(40 * i, 40 * i + 40) for i in range(9)]
    stops = sorted((s.start, s.stop) for s in OBS_SLICES.values())
    assert all(a[1] == b[0] for a, b in zip(stops, stops[1:], strict=False))
    assert stops[0][0] == 0 and stops[-1][1] == OBS_SIZE == 373


@pytest.mark.parametrize("seed", range(4))
def test_encode_matches_the_card_by_card_reference(seed):
    rng = np.random.default_rng(seed)
    for _ in range(150):
        deal = Deal.new(rng, first_player=int(rng.integers(2)))
        for _ in range(int(rng.integers(0, 36))):
            moves = deal.legal_mask_moves()
            deal.play_unchecked(*moves[int(rng.integers(len(moves)))])
        player = int(rng.integers(2))
        pending, picked = None, 0
        hand = deal.hands[player]
        if hand and rng.random() < 0.3:
            pending = int(rng.choice(hand))
            picked = deal.masks["table"] & int(rng.integers(1 << 40))
        score = (int(rng.integers(30)), int(rng.integers(30)))
        target = int(rng.choice([11, 16, 21, 31]))
        masks = deal.masks
        obs = encode(
            masks["hands"],
            masks["table"],
            masks["piles"],
            masks["played"],
            len(deal.stock),
            deal.scope,
            deal.last_capturer,
            deal.dealer,
            player,
            pending_card=pending,
            picked=picked,
            match_score=score,
            target=target,
        )
        expected = reference_encode(deal, player, pending, picked, score, target)
        np.testing.assert_array_equal(obs, expected)
        assert obs.dtype == np.float32 and np.all(obs >= 0) and np.all(obs <= OBS_HIGH)
        assert plane(obs, "hand").shape == (40,)


# The encoders as they were before the fast path (one byte lookup per mask, the scalars as a
# tuple), kept verbatim as the reference the fast encoders must equal bit for bit. ---------

_OLD_BYTE_BITS = np.unpackbits(
    np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little"
).astype(np.float32)


def _old_masks_to_planes(masks) -> np.ndarray:
    raw = b"".join(mask.to_bytes(5, "little") for mask in masks)
    return _OLD_BYTE_BITS[np.frombuffer(raw, dtype=np.uint8)].ravel()


def old_encode_scopa(
    hands, table, piles, played, stock_size, scope, last_capturer, dealer, player,
    *, pending_card=None, picked=0, match_score=(0, 0), target=11,
):  # fmt: skip
    opp = 1 - player
    hand = hands[player]
    unseen = ((1 << 40) - 1) & ~(hand | table | piles[0] | piles[1])
    pending = 0 if pending_card is None else 1 << pending_card
    planes = (
        hand & ~pending, table, piles[player], piles[opp], played[player], played[opp],
        unseen, pending, picked,
    )  # fmt: skip
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    obs[:360] = _old_masks_to_planes(planes)
    last = 2 if last_capturer is None else (0 if last_capturer == player else 1)
    choosing = pending_card is not None
    obs[360:] = (
        float(not choosing), float(choosing), stock_size / 30.0, hands[opp].bit_count() / 3.0,
        scope[player] / 18.0, scope[opp] / 18.0, min(match_score[player] / target, 4.0),
        min(match_score[opp] / target, 4.0), target / 100.0, float(dealer == player),
        float(last == 0), float(last == 1), float(last == 2),
    )  # fmt: skip
    return obs


def old_encode_scopone(
    hands, table, piles, played, scope, last_capturer, dealer, player,
    *, pending_card=None, picked=0, match_score=(0, 0), target=11,
):  # fmt: skip
    seats = [(player + offset) % 4 for offset in range(4)]
    me, after, partner, before = seats
    ours, theirs = piles[me] | piles[partner], piles[after] | piles[before]
    hand = hands[me]
    unseen = ((1 << 40) - 1) & ~(hand | table | ours | theirs)
    pending = 0 if pending_card is None else 1 << pending_card
    planes = (
        hand & ~pending, table, ours, theirs, played[me], played[after], played[partner],
        played[before], unseen, pending, picked,
    )  # fmt: skip
    obs = np.empty(scopone_observation.OBS_SIZE, dtype=np.float32)
    obs[:440] = _old_masks_to_planes(planes)
    team = me & 1
    last = 2 if last_capturer is None else (0 if last_capturer & 1 == team else 1)
    choosing = pending_card is not None
    obs[440:] = (
        float(not choosing), float(choosing), hands[after].bit_count() / 10.0,
        hands[partner].bit_count() / 10.0, hands[before].bit_count() / 10.0,
        (scope[me] + scope[partner]) / 20.0, (scope[after] + scope[before]) / 20.0,
        min(match_score[team] / target, 4.0), min(match_score[1 - team] / target, 4.0),
        target / 100.0, *(float(dealer == seat) for seat in seats),
        float(last == 0), float(last == 1), float(last == 2),
    )  # fmt: skip
    return obs


def old_encode_table(
    layout, hands, table, piles, played, stock_size, scope, last_capturer, dealer, player,
    *, pending_card=None, picked=0, match_score=(), target=11,
):  # fmt: skip
    t = layout.table
    n = t.players
    seats = tuple((player + k) % n for k in range(n))
    hand = hands[player]
    captured = 0
    for pile in piles:
        captured |= pile
    pending = 0 if pending_card is None else 1 << pending_card
    unseen = ((1 << 40) - 1) & ~(hand | table | captured)
    masks = [hand & ~pending, table]
    masks += [piles[s] for s in seats]
    masks += [played[s] for s in seats]
    masks += (unseen, pending, picked)
    obs = np.empty(layout.size, dtype=np.float32)
    planes = len(masks) * 40
    obs[:planes] = _old_masks_to_planes(masks)
    scores = match_score or (0,) * t.sides
    choosing = pending_card is not None
    stock_scale = float(40 - t.round_cards - t.table_size)
    scalars = [float(not choosing), float(choosing), stock_size / stock_scale]
    scalars += [hands[s].bit_count() / float(t.hand_size) for s in seats[1:]]
    scalars += [scope[s] / float(t.hand_size * t.rounds) for s in seats]
    scalars += [float(t.side_of(s) == t.side_of(player)) for s in seats]
    scalars += [min(scores[side] / target, 4.0) for side in layout.side_order[player]]
    scalars.append(target / 100.0)
    scalars += [float(k == (dealer - player) % n) for k in range(n)]
    last = n if last_capturer is None else (last_capturer - player) % n
    scalars += [float(k == last) for k in range(n + 1)]
    obs[planes:] = scalars
    return obs


def _old_observation(env, agent: str) -> dict[str, np.ndarray]:
    """What ``env.observe(agent)`` returned before the fast path, from the engine's state."""
    u = env.unwrapped
    deal, player = u.deal, u.possible_agents.index(agent)
    masks = deal.masks
    to_move = bool(u.agents) and not all(u.terminations.values()) and agent == u.agent_selection
    choosing = to_move and u.pending_card is not None
    options = {
        "pending_card": u.pending_card if choosing else None,
        "picked": mask_of(u.picked) if choosing else 0,
        "match_score": u._score_before,
        "target": u.rules.target,
    }
    state = (masks["hands"], masks["table"], masks["piles"], masks["played"])
    rest = (deal.scope, deal.last_capturer, deal.dealer, player)
    if u.table.name.startswith("scopone"):
        obs = old_encode_scopone(*state, *rest, **options)
    elif u.table.players == 2:
        obs = old_encode_scopa(*state, len(deal.stock), *rest, **options)
    else:
        layout = table_observation.layout_for(u.table)
        obs = old_encode_table(layout, *state, len(deal.stock), *rest, **options)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if to_move:
        mask[u.legal_actions()] = 1
    return {"observation": obs, "action_mask": mask}


ENVIRONMENTS = {
    "scopa": scopa_v0.raw_env,
    "scopa_3": partial(scopa_v0.raw_env, table="scopa_3"),
    "scopa_4": partial(scopa_v0.raw_env, table="scopa_4"),
    "scopa_6": partial(scopa_v0.raw_env, table="scopa_6"),
    "scopone": scopone_v0.raw_env,
    "scopone_scientifico": partial(scopone_v0.raw_env, deal="scopone_scientifico"),
}


@pytest.mark.parametrize("name", list(ENVIRONMENTS))
def test_fast_encoders_equal_the_old_ones_for_every_seat_at_every_table(name: str) -> None:
    """Every agent's observation in every state of random matches, bit for bit, at every table,
    with a points reward so that match scores and several deals are seen."""
    env = ENVIRONMENTS[name](reward="points")
    rng = np.random.default_rng(15)
    for game in range(3):
        env.reset(seed=game, options={"first_player": game % env.table.players})
        for _agent in env.agent_iter():
            if not env.agents or all(env.terminations.values()):
                env.step(None)
                continue
            for other in env.possible_agents:
                got, expected = env.observe(other), _old_observation(env, other)
                assert got["observation"].dtype == np.float32
                assert got["observation"].tobytes() == expected["observation"].tobytes()
                assert got["action_mask"].dtype == np.int8
                np.testing.assert_array_equal(got["action_mask"], expected["action_mask"])
            env.step(int(rng.choice(env.legal_actions())))


# The table layouts' scalars packed ahead and looked up: at counts past any deal's, where the
# lookups give way to division, they still agree with the plain per-feature reference.


@pytest.mark.parametrize("name", sorted(table_observation.LAYOUTS))
def test_counts_past_a_deck_divide_as_the_reference(name: str) -> None:
    layout = table_observation.LAYOUTS[name]
    n = layout.table.players
    deal = Deal.new(np.random.default_rng(3), kind=name)
    masks = deal.masks
    for scope, stock_size, last in (([0] * n, 41, None), ([50] + [1] * (n - 1), 7, 1)):
        for player in range(n):
            state = (masks["hands"], masks["table"], masks["piles"], masks["played"])
            rest = (stock_size, scope, last, deal.dealer, player)
            options = {"match_score": (3,) * layout.table.sides, "target": 11}
            got = layout.encode(*state, *rest, **options)
            expected = old_encode_table(layout, *state, *rest, **options)
            assert got.tobytes() == expected.tobytes()


def test_a_writer_packs_little_endian_only() -> None:
    with pytest.raises(ValueError, match="little-endian"):
        ObservationWriter(9, struct.Struct(">14f"))


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("name", ["scopa", "scopone", *sorted(table_observation.LAYOUTS)])
def test_a_writer_writes_as_write_observation_in_native_and_standard_words(
    name: str, native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Native ``size_t`` words (padded after an odd count of scalars) or little-endian ``Q``
    words: the same vector as the plain ``write_observation``, and the mask of ``legal``."""
    from scopa_env import observation

    monkeypatch.setattr(observation, "_NATIVE_WORDS", native)
    if name == "scopa":
        num_planes, scalars = observation.NUM_PLANES, observation._SCALARS
    elif name == "scopone":
        num_planes, scalars = scopone_observation.NUM_PLANES, scopone_observation._SCALARS
    else:
        layout = table_observation.LAYOUTS[name]
        num_planes, scalars = layout.num_planes, layout._scalars
    writer = ObservationWriter(num_planes, scalars)
    rng = np.random.default_rng(5)
    for _ in range(20):
        planes = [int(m) for m in rng.integers(0, 1 << 40, num_planes, dtype=np.uint64)]
        values = scalar_values(scalars, rng.random)
        legal = int(rng.integers(0, 1 << 62)) << 18
        expected = observation.write_observation(planes, num_planes, scalars, values)
        assert writer.write(planes, values).tobytes() == expected.tobytes()
        vector, mask = writer.observe(planes, values, legal)
        assert vector.tobytes() == expected.tobytes()
        np.testing.assert_array_equal(mask, observation.bits_to_mask(legal, NUM_ACTIONS))


@pytest.mark.parametrize("name", ["scopa", "scopone", *sorted(table_observation.LAYOUTS)])
def test_deal_blocks_are_every_seats_deal_block(name: str) -> None:
    """The memoised all-seats call gives ``deal_block`` seat by seat, on a hit as on a miss."""
    from scopa_env import observation

    if name == "scopa":
        layout, players, sides = observation, 2, 2
    elif name == "scopone":
        layout, players, sides = scopone_observation, 4, 2
    else:
        layout = table_observation.LAYOUTS[name]
        players, sides = layout.table.players, layout.table.sides
    rng = np.random.default_rng(8)
    for _ in range(40):
        scores = tuple(int(s) for s in rng.integers(0, 60, sides))
        target, dealer = int(rng.choice([11, 16, 21])), int(rng.integers(players))
        expected = tuple(layout.deal_block(scores, target, dealer, p) for p in range(players))
        assert layout.deal_blocks(scores, target, dealer) == expected
        assert layout.deal_blocks(scores, target, dealer) == expected


def test_a_seat_encoder_keeps_a_bounded_memo_of_scope_tuples() -> None:
    """Past ``SCOPE_MEMO`` tuples the encoder still packs ``scope`` right, keeping no more."""
    layout = table_observation.LAYOUTS["scopa_6"]
    deal = Deal.new(np.random.default_rng(4), kind="scopa_6")
    masks = deal.masks
    state = (masks["hands"], masks["table"], masks["piles"], masks["played"], 12)
    memo = layout.seat_features(6)[2].__globals__["SCOPES"]
    options = {"match_score": (1, 2), "target": 11}
    for k in range(table_observation.SCOPE_MEMO + 50):
        scope = (k % 7, 0, k // 7 % 5, 1, 0, k // 35)
        got = layout.encode(*state, scope, 3, deal.dealer, 2, **options)
        if k % 97 == 0 or k >= table_observation.SCOPE_MEMO:
            expected = old_encode_table(layout, *state, scope, 3, deal.dealer, 2, **options)
            assert got.tobytes() == expected.tobytes()
    assert len(memo) == table_observation.SCOPE_MEMO
