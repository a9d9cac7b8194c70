"""Deals consistent with what a player knows: the forward model that search players sample.

``Determinizer`` turns a two-player ``InfoState`` (``scopa_env.info_state``) into full ``Deal``
positions by dealing the unseen cards at random to the opponent's hand and the stock. In every
determinized deal the observing player is player 0.
"""

from __future__ import annotations

import numpy as np

from scopa_env.cards import cards_of
from scopa_env.engine import Deal
from scopa_env.info_state import InfoState
from scopa_env.rules import Rules


class Determinizer:
    """Samples full deals consistent with an ``InfoState`` (the observer is player 0).

    The unseen cards (opponent's hand and the stock) are shuffled and dealt: the first
    ``opp_hand_size`` to the opponent, the rest to the stock in random order. Every such deal is
    equally likely given what the observer has seen, which is what SO-ISMCTS needs.
    """

    def __init__(self, info: InfoState, rules: Rules) -> None:
        if info.other_hands:
            raise ValueError("the determinizer deals two-player Scopa positions, not Scopone")
        unseen = cards_of(info.unseen)
        if len(unseen) != info.opp_hand_size + info.stock_size:
            raise ValueError(
                f"observation is inconsistent: {len(unseen)} unseen cards but the opponent holds "
                f"{info.opp_hand_size} and the stock {info.stock_size}"
            )
        self.info = info
        self.rules = rules
        self._unseen = np.array(unseen, dtype=np.int64)
        h = info.opp_hand_size
        # One validated position; samples are copies with the hidden cards dealt anew.
        self._template = Deal.from_position(
            hands=(cards_of(info.full_hand), unseen[:h]),
            table=cards_of(info.table),
            stock=unseen[h:],
            captures=(cards_of(info.piles[0]), cards_of(info.piles[1])),
            current_player=0,
            first_player=1 if info.is_dealer else 0,
            last_capturer=info.last_capturer,
            scope=info.scope,
            rules=rules,
        )

    def sample(self, rng: np.random.Generator) -> Deal:
        """One deal drawn uniformly from those consistent with the information state."""
        # Only the opponent's hand and the stock differ from the validated template; a
        # validating ``from_position`` per sample would cost a third of a greedy rollout.
        return self._template.with_hidden_cards(0, rng.permutation(self._unseen).tolist())
