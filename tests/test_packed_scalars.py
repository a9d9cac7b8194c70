"""The table layouts' scalars packed ahead and looked up (``TableLayout``): the values agree
with the plain per-feature reference at counts past any deal's, where the lookups give way."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from scopa_env.engine import Deal
from scopa_env.observation import ObservationWriter
from scopa_env.table_observation import LAYOUTS
from tests.test_observation import old_encode_table


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_counts_past_a_deck_divide_as_the_reference(name: str) -> None:
    layout = LAYOUTS[name]
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
