"""The observation encoder against a plain per-card reference, and the documented layout."""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.engine import Deal
from scopa_env.observation import OBS_HIGH, OBS_SIZE, OBS_SLICES, PLANES, encode, plane


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
