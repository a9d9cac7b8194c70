"""Deals consistent with what a player knows: the forward model that search players sample.

``Determinizer`` turns a ``SeatView`` (``agents.seats``: every seat as the observer sees it,
at any table) into full ``Deal`` positions by dealing the unseen cards at random to every other
seat's hand (each keeps its size) and the stock, through ``Deal.with_hidden_cards``. In every
determinized deal the observing player is seat 0 and its side is side 0.
"""

from __future__ import annotations

import numpy as np

from agents.seats import SeatView
from scopa_env.cards import cards_of
from scopa_env.engine import Deal
from scopa_env.rules import Rules


class Determinizer:
    """Samples full deals consistent with a ``SeatView`` (the observer is seat 0).

    The unseen cards (the other hands and the stock) are shuffled and dealt: the other hands in
    seat order from the next seat, then the stock in random order. Every such deal is equally
    likely given what the observer has seen, which is what SO-ISMCTS needs.
    """

    def __init__(self, view: SeatView, rules: Rules) -> None:
        self.view = view
        self.rules = rules
        self._unseen = np.array(cards_of(view.info.unseen), dtype=np.int64)
        # One validated position; samples are copies with the hidden cards dealt anew (a
        # validating ``from_position`` per sample would cost a third of a greedy rollout).
        self._template = view.position(rules)

    def sample(self, rng: np.random.Generator) -> Deal:
        """One deal drawn uniformly from those consistent with the view."""
        return self.deal(self.hidden(rng))

    def hidden(self, rng: np.random.Generator) -> list[int]:
        """The unseen cards in a uniformly random order: the next seat's hand first, as
        ``deal`` places them (a sampler can weigh the hands before it builds the deals)."""
        return rng.permutation(self._unseen).tolist()

    def deal(self, hidden: list[int]) -> Deal:
        """The deal with the unseen cards placed in the order of ``hidden``."""
        return self._template.with_hidden_cards(0, hidden)
