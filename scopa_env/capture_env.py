"""The AEC environment shared by ``scopa_v0`` and ``scopone_v0``: one implementation of the
action space, the capture-picking phase, rewards, infos, reset options and pickling.

``CaptureGameEnv`` plays any table of the engine (``scopa_env.tables``), which names the agents
and the sides. A subclass supplies only what differs between the games: its table, the
observation layout (encoder, bounds) of that table, the render scene and its
metadata. Each environment module documents the environment itself.

Rewards and infos are per side, and every seat of a side receives its side's: with rewards
``x`` per side (points in the deal, or 1 for the winner and 0 for the others), a side receives
``x[side]`` minus the mean of the other sides' ``x``, so rewards sum to zero over the sides and
two sides receive ``+d`` and ``-d``.
"""

from __future__ import annotations

import copy
import functools
import inspect
import operator
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, NamedTuple, cast

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env import render
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET, describe_action
from scopa_env.captures import capture_table, choose_capture, pickable_cards
from scopa_env.cards import (
    CAPTURE_VALUE,
    COINS_MASK,
    SETTEBELLO,
    card_name,
    cards_of,
    mask_of,
)
from scopa_env.engine import Deal, IllegalMoveError, Match
from scopa_env.errors import EnvironmentArgumentError, ResetNeededError
from scopa_env.observation import ObservationWriter, bits_to_mask
from scopa_env.privileged import deal_hidden, with_hidden
from scopa_env.rules import Rules, resolve_rules
from scopa_env.seeds import check_seed
from scopa_env.tables import Table

__all__ = [
    "NUM_ACTIONS",
    "PICK_OFFSET",
    "CaptureGameEnv",
    "IllegalActionError",
    "Play",
    "check_choice",
    "side_rewards",
    "classic_wrappers",
]

EPISODES = ("match", "deal")
REWARDS = ("match", "points")
RENDER_MODES = ("human", "ansi", "rgb_array")
RESET_OPTIONS = ("deck", "first_player")

_VALUE = [int(v) for v in CAPTURE_VALUE]
#: An observation layout: the encoder and the upper bounds of the vector.
Layout = tuple[Callable[..., np.ndarray], np.ndarray]
#: A seat's ``view_features`` (``scopa_env.observation`` documents it).
Features = Callable[..., tuple[tuple[int, ...], tuple[Any, ...]]]
#: A layout's hot path: its ``view_features`` for each seat of a table of that many seats,
#: ``deal_blocks`` and ``writer`` (``scopa_env.observation`` documents them).
FastLayout = tuple[
    Callable[[int], Sequence[Features]],
    Callable[..., tuple[Any, ...]],
    Callable[[], ObservationWriter],
]


def fast_layout(encoder: Callable[..., np.ndarray]) -> FastLayout | None:
    """The hot path of one of this package's encoders, or None for any other encoder.

    An environment with such an encoder observes straight from its deal (``Deal.view``) with
    the match features worked out once a deal, writing the vector and the action mask
    together (``ObservationWriter.observe``); ``tests/test_fast_paths.py`` holds the two
    paths equal at every table.
    """
    from scopa_env import observation, scopone_observation, table_observation

    module: types.ModuleType
    if encoder is observation.encode:
        module = observation
    elif encoder is scopone_observation.encode_dealt:
        module = scopone_observation
    else:
        layout = getattr(encoder, "__self__", None)
        if isinstance(layout, table_observation.TableLayout) and encoder == layout.encode:
            return layout.seat_features, layout.deal_blocks, layout.writer
        return None
    features = module.view_features
    return (lambda players: (features,) * players), module.deal_blocks, module.writer


class Play(NamedTuple):
    """A resolved play: who played which card, the table cards taken (a bit mask; 0 when the
    card was laid down), and whether it scored a scopa."""

    player: int
    card: int
    capture: int
    scopa: bool


class IllegalActionError(IllegalMoveError):
    """An action that is not legal for the agent to move (see its ``action_mask``)."""


def classic_wrappers(aec: AECEnv) -> AECEnv:
    """``aec`` in PettingZoo's classic wrappers: an illegal action loses with -1.

    A ``CaptureGameEnv`` publishes its per-step attributes into the wrappers (``_PUBLISHED``).
    """
    raw = aec
    terminate = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    bounds = wrappers.AssertOutOfBoundsWrapper(terminate)
    aec = wrappers.OrderEnforcingWrapper(bounds)
    if isinstance(raw, CaptureGameEnv):
        raw._publish_to((terminate, bounds, aec))
    return aec


#: The attributes PettingZoo's wrappers read from the environment at every step. A wrapper
#: finds an attribute it lacks through ``__getattr__``, one Python call per wrapper level,
#: which costs more than a whole step of the game; so the environment writes each of these,
#: whenever it is set, into its wrappers' own ``__dict__`` too, where plain lookup finds it.
#: The objects are shared, so changes in place (``del rewards[agent]``) need no publishing.
_PUBLISHED = (
    "agents",
    "agent_selection",
    "rewards",
    "_cumulative_rewards",
    "terminations",
    "truncations",
    "infos",
)


@functools.cache
def _observation_space(high: bytes) -> spaces.Dict:
    """A layout's space, built once: each environment's seats get copies (own random streams),
    since Gymnasium's ``Box`` writes out its bounds in full when built (about 4 ms each)."""
    bounds = np.frombuffer(high, dtype=np.float32)
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, bounds, shape=bounds.shape, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8),
        }
    )


def _published(name: str) -> property:
    """An attribute kept in ``_published_<name>`` and written into every wrapper as set."""
    key = f"_published_{name}"

    def publish(self: CaptureGameEnv, value: Any) -> None:
        self.__dict__[key] = value
        for attributes in self._wrapper_dicts:
            attributes[name] = value

    return property(operator.attrgetter(key), publish, doc=f"PettingZoo's ``{name}``.")


def side_rewards(values: Sequence[float]) -> tuple[float, ...]:
    """Each side's reward: its value minus the mean of the other sides' values."""
    total, others = sum(values), len(values) - 1
    return tuple(float(v - (total - v) / others) for v in values)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a ``ValueError`` naming the argument."""
    if not isinstance(value, str) or value not in choices:
        raise EnvironmentArgumentError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


class CaptureGameEnv(AECEnv, EzPickle):
    """A fishing card game (Scopa, Scopone) as a PettingZoo AEC environment.

    Subclasses set the class attributes below, ``metadata``, ``_table_for`` and ``_scene``, and
    may add constructor arguments of their own: the base passes them to ``_table_for`` and
    records them for pickling.
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "capture_game",  # each subclass names itself
        "is_parallelizable": False,
        "render_fps": 2,
    }
    #: The observation encoder, with the signature of ``scopa_env.observation.encode``.
    _encode: ClassVar[Callable[..., np.ndarray]]
    #: Upper bounds of the observation vector (its shape is the observation's).
    _OBS_HIGH: ClassVar[np.ndarray]

    agents = _published("agents")
    agent_selection = _published("agent_selection")
    rewards = _published("rewards")
    _cumulative_rewards = _published("_cumulative_rewards")
    terminations = _published("terminations")
    truncations = _published("truncations")
    infos = _published("infos")

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        render_mode: str | None = None,
        show_hands: str = "current",
        **variant: Any,
    ) -> None:
        EzPickle.__init__(
            self,
            rules=rules,
            **variant,
            episode=episode,
            reward=reward,
            render_mode=render_mode,
            show_hands=show_hands,
        )
        super().__init__()
        self._wrapper_dicts: tuple[dict[str, Any], ...] = ()  # see ``_publish_to``
        self.rules: Rules = resolve_rules(rules)
        takes = inspect.signature(self._table_for).parameters
        unknown = sorted(set(variant) - set(takes))
        if unknown:
            accepted = [
                name
                for name, p in inspect.signature(type(self)).parameters.items()
                if p.kind is not inspect.Parameter.VAR_KEYWORD
            ]
            raise EnvironmentArgumentError(
                f"{self.metadata['name']} takes no argument {', '.join(map(repr, unknown))}; "
                f"its arguments are {accepted}"
            )
        self.table: Table = self._table_for(**variant)
        agents = self.table.agents
        self.episode = check_choice(episode, "episode", EPISODES)
        self.reward_mode = check_choice(reward, "reward", REWARDS)
        if render_mode is not None:
            check_choice(render_mode, "render_mode", RENDER_MODES)
        self.render_mode = render_mode
        self.show_hands = check_choice(show_hands, "show_hands", ("current", "all", *agents))

        encoder, high = self._layout()
        self.possible_agents = list(agents)
        self.agents = []
        space = _observation_space(np.asarray(high, dtype=np.float32).tobytes())
        self.observation_spaces = {agent: copy.deepcopy(space) for agent in agents}
        self.action_spaces: dict[str, spaces.Space[Any]] = {
            agent: spaces.Discrete(NUM_ACTIONS) for agent in agents
        }
        self._capture_sets = capture_table(self.rules)
        # Instance copies of the class constants the hot path reads (faster to look up).
        self._agents = agents
        self._players = len(agents)
        self._index = {agent: seat for seat, agent in enumerate(agents)}
        self._encoder = encoder
        fast = fast_layout(encoder)
        #: The layout's ``deal_blocks``, for ``_deal_blocks``; each seat's ``view_features``
        #: and the writer's ``observe``, for ``_observe``.
        self._seat_blocks = None if fast is None else fast[1]
        self._features = None if fast is None else fast[0](self._players)
        self._write = None if fast is None else fast[2]().observe
        self._rng: np.random.Generator | None = None
        self._current: int | None = None  # the player to move; None once the game is over

    def _table_for(self, **variant: Any) -> Table:
        """The table of the game, from the subclass's own constructor arguments."""
        raise NotImplementedError

    def _layout(self) -> Layout:
        """The observation layout of ``self.table`` (by default the class attributes)."""
        return self._encode, self._OBS_HIGH

    def _scene(self) -> render.Scene | render.TableScene:
        """The ``scopa_env.render`` scene of the current position, as ``show_hands`` asks."""
        raise NotImplementedError

    def _table_scene(self, game: str) -> render.TableScene:
        """The scene of a table of more than two seats: each side's pile, the table, each
        seat's hand (face up as ``show_hands`` asks); ``game`` opens the header."""
        deal, match = self.deal, self.match
        t = self.table
        masks = deal.masks
        over, in_play, deal_number = self._moment()
        to_move = None if over or not self.agents else deal.current_player
        show = self.show_hands
        piles = [mask_of(cards) for cards in deal.team_captures]
        scope, scores = deal.team_scope, match.scores
        sides = []
        for side in range(t.sides):
            pile = piles[side]
            label = " + ".join(t.agents[seat] for seat in t.seats_of(side))
            sides.append(
                f"{label}  match {scores[side]}  "
                + render.pile_summary(
                    pile.bit_count(),
                    (pile & COINS_MASK).bit_count(),
                    bool(pile >> SETTEBELLO & 1),
                    scope[side],
                )
            )
        seats = []
        for p, agent in enumerate(t.agents):
            role = {deal.first_player: " (first player)", deal.dealer: " (dealer)"}.get(p, "")
            visible = show in ("all", agent) or (show == "current" and to_move == p)
            seats.append((f"{agent}{role}", cards_of(masks["hands"][p] & ~in_play), visible))
        stock = f"  stock {len(deal.stock)}" if t.rounds > 1 else ""
        header = (
            f"{game}  deal {deal_number}  match {'-'.join(map(str, scores))} "
            f"(target {match.rules.target}){stock}"
        )
        return render.TableScene(
            header=header,
            teams=tuple(sides),
            table=cards_of(masks["table"]),
            seats=tuple(seats),
            to_move=to_move,
            pending=self.pending_card,
            picked=self.picked,
            last_play="last play: " + render.describe_play(self.last_play),
            status=self._status(over, None if to_move is None else t.agents[to_move]),
        )

    def _moment(self) -> tuple[bool, int, int]:
        """Whether the game is over, the card being played (a bit mask) and the deal's number."""
        over = bool(self.terminations) and all(self.terminations.values())
        in_play = 0 if self._pending is None else 1 << self._pending
        return over, in_play, self._match.deals_played + (0 if self._deal.is_over else 1)

    def _status(self, over: bool, to_move: str | None) -> str:
        """The last line of a picture: who is to do what, or how the game ended."""
        info = self.infos.get(self.agent_selection, {}) if over else {}
        winner = info.get("winner", False)
        if isinstance(winner, tuple):  # a partnership
            return f"game over: {' and '.join(winner)} win"
        if winner is not False:
            return "game over: " + (f"{winner} wins" if winner else "a tie")
        if to_move is None:
            return "game over"
        if self._pending is None:
            return f"{to_move} to play a card"
        return f"{to_move} to pick table cards for {card_name(self._pending)}"

    # PettingZoo API -------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        check_seed(seed)
        deck, first_player = self._parse_options(options)  # may raise: change nothing before
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        agents = self.table.agents
        if first_player is None:
            first_player = int(self._rng.integers(len(agents)))
        dealer = (first_player - 1) % len(agents)
        self._match: Match = Match(self.rules, first_dealer=dealer, kind=self.table)
        if deck is not None:
            self._deal: Deal = Deal.from_deck(deck, first_player, self.rules, self.table)
        else:
            self._deal = self._match.new_deal(self._rng)
        self._score_before = (0,) * self.table.sides
        self._deal_blocks()

        self.agents = list(agents)
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {agent: {} for agent in agents}
        self._rewards_pending = False
        self._done = False
        self._skip_agent_selection = None
        self._pending: int | None = None
        self._options: tuple[int, ...] = ()
        self._picked = 0
        self._last_play: tuple[int, int, int, bool] | None = None  # a Play's fields
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation; repeated calls in one state return the same arrays."""
        try:
            obs = self._obs_cache.get(agent)
        except AttributeError:
            raise ResetNeededError(
                f"{self.metadata['name']}: call reset() before observe({agent!r})"
            ) from None
        if obs is None:
            obs = self._obs_cache[agent] = self._observe(self._index[agent])
        return obs

    def last(
        self, observe: bool = True
    ) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last``, reading the published attributes straight (the hot path)."""
        d = self.__dict__
        try:
            agent = d["_published_agent_selection"]
        except KeyError:
            raise ResetNeededError(f"{self.metadata['name']}: call reset() before last()") from None
        obs = None
        if observe:
            cache = self._obs_cache  # ``observe(agent)``, without its call
            obs = cache.get(agent)
            if obs is None:
                obs = cache[agent] = self._observe(self._index[agent])
        return (
            obs,
            d["_published__cumulative_rewards"][agent],
            d["_published_terminations"][agent],
            d["_published_truncations"][agent],
            d["_published_infos"][agent],
        )

    @functools.cached_property
    def state_space(self) -> spaces.Box:
        """PettingZoo's ``state_space``: the bounds of ``state()``."""
        space = cast(spaces.Dict, self.observation_spaces[self.possible_agents[0]])
        return with_hidden(cast(spaces.Box, space["observation"]), self._players)

    def state(self) -> np.ndarray:
        """PettingZoo's global state, for a critic that sees every card: the observation of the
        seat to act (``agent_selection``), then ``scopa_env.privileged``'s block of the cards it
        cannot see (every other hand, in playing order from it, then the stock). It is what an
        oracle critic reads in training (``ppo.oracle_critic``); a player never should."""
        try:
            agent = self.__dict__["_published_agent_selection"]
        except KeyError:
            name = self.metadata["name"]
            raise ResetNeededError(f"{name}: call reset() before state()") from None
        observation = self.observe(agent)["observation"]
        return np.concatenate([observation, deal_hidden(self._deal, self._index[agent])])

    def step(self, action: int | np.integer) -> None:
        d = self.__dict__  # the published attributes, read without their properties
        try:
            agent = d["_published_agent_selection"]
        except KeyError:
            raise ResetNeededError(
                f"{self.metadata['name']}: call reset() before step({action!r})"
            ) from None
        if self._done and (
            d["_published_terminations"][agent] or d["_published_truncations"][agent]
        ):
            self._was_dead_step(action)
            return
        try:
            a = operator.index(action)
        except TypeError:
            a = -1
        if not 0 <= a < NUM_ACTIONS or not self._legal >> a & 1:
            raise IllegalActionError(self._illegal_message(action))
        if self._rewards_pending:
            self._clear_rewards()
            self._rewards_pending = False
        d["_published__cumulative_rewards"][agent] = 0.0
        infos = d["_published_infos"]
        if infos[agent]:
            infos[agent] = {}

        self._pending, self._options, self._picked, play = choose_capture(
            a, self._table_cards, self._capture_sets, self._pending, self._options, self._picked
        )
        if play is not None:
            # The play resolved: apply it to the engine; score the deal if it ends.
            card, capture = play
            deal, player = self._deal, self._current
            assert player is not None  # a play resolved, so the game is on
            scopa = deal.play_unchecked(card, capture)
            self._last_play = (player, card, capture, scopa)
            if deal.is_over:
                self._end_deal()
        self._refresh()
        if self.render_mode is not None and self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        scene = self._scene()
        if self.render_mode == "rgb_array":
            return render.to_rgb_array(scene)
        text = render.to_ansi(scene)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # Introspection --------------------------------------------------------------------------

    @property
    def deal(self) -> Deal:
        """The current deal (read-only: use ``step`` to change it)."""
        if "_deal" not in self.__dict__:
            raise AttributeError("the environment has not been reset yet")
        return self._deal

    @property
    def match(self) -> Match:
        """The match: scores, dealer and winner (per side; read-only)."""
        if "_match" not in self.__dict__:
            raise AttributeError("the environment has not been reset yet")
        return self._match

    @property
    def phase(self) -> Literal["play", "pick"]:
        """``"play"``: choose a card to play; ``"pick"``: choose table cards to capture."""
        return "play" if self._pending is None else "pick"

    @property
    def pending_card(self) -> int | None:
        """The card being played while its capture is chosen."""
        return self._pending

    @property
    def last_play(self) -> Play | None:
        """The last play resolved in this episode (it may belong to the previous deal)."""
        play = self._last_play
        return None if play is None else Play._make(play)

    @property
    def picked(self) -> tuple[int, ...]:
        """The table cards picked so far for the pending capture."""
        return cards_of(self._picked)

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to move (empty when the game is over)."""
        legal, actions = self._legal, []
        while legal:
            low = legal & -legal
            actions.append(low.bit_length() - 1)
            legal ^= low
        return actions

    describe_action = staticmethod(describe_action)

    def winner_label(self, side: int) -> str | tuple[str, ...]:
        """The ``"winner"`` info of a side: its agent, or its partners' agents as a tuple."""
        agents = self.table.agents
        if not self.table.partnerships:
            return agents[side]
        return tuple(agents[seat] for seat in self.table.seats_of(side))

    def _publish_to(self, wrapper_chain: Sequence[AECEnv]) -> None:
        """Write the ``_PUBLISHED`` attributes into these wrappers of this environment from
        now on (from the next reset: before it the wrappers' own checks still apply)."""
        self._wrappers = tuple(wrapper_chain)
        self._wrapper_dicts = tuple(vars(wrapper) for wrapper in self._wrappers)

    # Pickling keeps the game, not just the constructor arguments ---------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = EzPickle.__getstate__(self)
        # The wrappers, and below the very objects they hold, so that a pickled ``env()``
        # comes back with its wrappers and the environment sharing them again.
        state["wrappers"] = self.__dict__.get("_wrappers", ())
        if "_deal" in self.__dict__:
            state["game"] = {
                "deal": self._deal.to_dict(),
                "match": self._match,
                "rng": self._rng,
                "score_before": self._score_before,
                "pending": self._pending,
                "options": self._options,
                "picked": self._picked,
                "last_play": self.last_play,
                "agents": self.agents,
                "agent_selection": self.agent_selection,
                "skip_agent_selection": self._skip_agent_selection,
                "rewards": self.rewards,
                "cumulative_rewards": self._cumulative_rewards,
                "rewards_pending": self._rewards_pending,
                "done": self._done,
                "terminations": self.terminations,
                "truncations": self.truncations,
                "infos": self.infos,
            }
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        EzPickle.__setstate__(self, state)
        if state.get("wrappers"):
            self._publish_to(state["wrappers"])
        game = state.get("game")
        if game is None:
            return
        self._deal = Deal.from_dict(game["deal"])
        self._match = game["match"]
        self._rng = game["rng"]
        self._score_before = game["score_before"]
        self._deal_blocks()
        self._pending = game["pending"]
        self._options = game["options"]
        self._picked = game["picked"]
        self._last_play = game["last_play"]
        self.agents = game["agents"]
        self.agent_selection = game["agent_selection"]
        self._skip_agent_selection = game["skip_agent_selection"]
        self.rewards = game["rewards"]
        self._cumulative_rewards = game["cumulative_rewards"]
        self._rewards_pending = game["rewards_pending"]
        self._done = game["done"]
        self.terminations = game["terminations"]
        self.truncations = game["truncations"]
        self.infos = game["infos"]
        self._refresh()

    # Internals ------------------------------------------------------------------------------

    def _parse_options(self, options: dict[str, Any] | None) -> tuple[Any, int | None]:
        if options is None:
            return None, None
        if not isinstance(options, dict):
            raise EnvironmentArgumentError(
                f"reset options must be a dict, got {type(options).__name__}"
            )
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            warnings.warn(
                f"{self.metadata['name']}.reset ignores unknown option(s) {unknown}; "
                f"it understands {list(RESET_OPTIONS)}",
                stacklevel=3,
            )
        deck = options.get("deck")
        first_player = options.get("first_player")
        players = self.table.players
        if first_player is not None and (
            isinstance(first_player, bool)
            or not isinstance(first_player, int | np.integer)
            or not 0 <= first_player < players
        ):
            seats = ", ".join(str(p) for p in range(players - 1))
            raise EnvironmentArgumentError(
                f"options['first_player'] must be {seats} or {players - 1}, got {first_player!r}"
            )
        if deck is not None:
            # Validate before anything changes, so a bad deck leaves the environment as it was.
            Deal.from_deck(deck, 0, self.rules, self.table)
            if first_player is None:
                first_player = 0
        return deck, None if first_player is None else int(first_player)

    def _deal_blocks(self) -> None:
        """Each seat's observation features that hold for the whole deal (``deal_blocks``)."""
        blocks = self._seat_blocks
        if blocks is not None:
            self._blocks = blocks(self._score_before, self.rules.target, self._deal.dealer)

    def _refresh(self) -> None:
        """Recompute what the next step and observations need; drop cached observations."""
        deal = self._deal
        view = self._view = deal.view()
        self._table_cards = view[1]
        self._obs_cache: dict[str, dict[str, np.ndarray]] = {}
        if self._done:
            self._current = None
            self._legal = 0
            return
        player = self._current = deal.current_player
        agent = self._agents[player]
        # ``agent_selection = agent``, without its property's Python setter.
        self.__dict__["_published_agent_selection"] = agent
        for attributes in self._wrapper_dicts:
            attributes["agent_selection"] = agent
        if self._pending is None:
            self._legal = view[0][player]
        else:
            self._legal = pickable_cards(self._options, self._picked) << PICK_OFFSET

    def _observe(self, player: int) -> dict[str, np.ndarray]:
        features, write = self._features, self._write
        if features is None or write is None:
            return self._observe_simple(player)
        if player != self._current:
            planes, values = features[player](self._view, player, None, 0, self._blocks[player])
            observation, mask = write(planes, values, 0)
        else:
            planes, values = features[player](
                self._view, player, self._pending, self._picked, self._blocks[player]
            )
            observation, mask = write(planes, values, self._legal)
        return {"observation": observation, "action_mask": mask}

    def _observe_simple(self, player: int) -> dict[str, np.ndarray]:
        """``_observe`` through the layout's encoder and ``Deal.masks``: any encoder's path."""
        deal = self._deal
        masks = deal.masks
        current = player == self._current
        choosing = current and self._pending is not None
        observation = self._encoder(
            masks["hands"],
            masks["table"],
            masks["piles"],
            masks["played"],
            len(deal.stock),
            deal.scope,
            deal.last_capturer,
            deal.dealer,
            player,
            pending_card=self._pending if choosing else None,
            picked=self._picked if choosing else 0,
            match_score=self._score_before,
            target=self.rules.target,
        )
        if current:
            mask = bits_to_mask(self._legal, NUM_ACTIONS)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": observation, "action_mask": mask}

    def _was_dead_step(self, action: Any) -> None:
        """PettingZoo's, on the published dictionaries straight: every seat takes a dead step at
        the end of a game, and the generic one reads each attribute through its property."""
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        d = self.__dict__
        agent = d["_published_agent_selection"]
        terminations, truncations = d["_published_terminations"], d["_published_truncations"]
        del terminations[agent], truncations[agent], d["_published_rewards"][agent]
        del d["_published__cumulative_rewards"][agent], d["_published_infos"][agent]
        agents = d["_published_agents"]
        agents.remove(agent)
        for other in agents:
            if terminations[other] or truncations[other]:
                if self._skip_agent_selection is None:
                    self._skip_agent_selection = agent
                self.agent_selection = other
                break
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        self._clear_rewards()

    def _accumulate_rewards(self) -> None:
        """PettingZoo's, on the published dictionaries straight."""
        d = self.__dict__
        cumulative = d["_published__cumulative_rewards"]
        for agent, reward in d["_published_rewards"].items():
            cumulative[agent] += reward

    def _clear_rewards(self) -> None:
        """PettingZoo's, on the published dictionary straight."""
        rewards = self.__dict__["_published_rewards"]
        for agent in rewards:
            rewards[agent] = 0

    def _end_deal(self) -> None:
        deal, match = self._deal, self._match
        agents = self.table.agents
        breakdowns = deal.score()  # by side
        totals = tuple(b.total for b in breakdowns)
        match.record_deal(totals)
        done = self.episode == "deal" or match.is_over
        info: dict[str, Any] = {
            "deal_score": [b.to_dict() for b in breakdowns],
            "match_score": match.scores,
        }
        by_side = None
        if self.reward_mode == "points":
            by_side = side_rewards(totals)
        if done:
            if self.episode == "match":
                winner = match.winner
            else:
                best = max(totals)
                winner = totals.index(best) if totals.count(best) == 1 else None
            info["winner"] = None if winner is None else self.winner_label(winner)
            if self.reward_mode == "match" and winner is not None:
                by_side = side_rewards([int(side == winner) for side in range(len(totals))])
            self.terminations = dict.fromkeys(agents, True)
            self._done = True
        self.infos = {agent: dict(info) for agent in agents}
        if by_side is not None:
            self.rewards = {agent: by_side[self.table.side_of(p)] for p, agent in enumerate(agents)}
            self._accumulate_rewards()
            self._rewards_pending = True
        if not done:
            self._deal = match.new_deal(self._rng)  # type: ignore[arg-type]  # set by reset
            self._score_before = match.scores
            self._deal_blocks()

    def _illegal_message(self, action: Any) -> str:
        agent = self.agent_selection
        legal = ", ".join(f"{a} ({self.describe_action(a)})" for a in self.legal_actions())
        if self._pending is None:
            doing = "playing a card"
        else:
            doing = f"choosing the capture for {card_name(self._pending)}"
            if self._picked:
                doing += f" (picked {' '.join(card_name(c) for c in cards_of(self._picked))})"
        return f"action {action!r} is not legal for {agent}, who is {doing}; legal actions: {legal}"
