"""
# Scopone

| Import             | `from scopa_env import scopone_v0`                                |
|--------------------|-------------------------------------------------------------------|
| Creation           | `scopone_v0.env()` or `pettingzoo.make("aec", "scopa/scopone-v0")` |
| Actions            | Discrete                                                          |
| Parallel API       | No                                                                |
| Manual Control     | No                                                                |
| Agents             | `agents= ['player_0', 'player_1', 'player_2', 'player_3']`        |
| Agents             | 4                                                                 |
| Action Shape       | (1,)                                                              |
| Action Values      | Discrete(80)                                                      |
| Observation Shape  | (457,)                                                            |
| Observation Values | [0, 1] (match score in [0, 4])                                    |
| Render Modes       | `human` (text on stdout), `ansi`, `rgb_array`                     |

Scopone is Scopa for four players in two fixed partnerships: `player_0` and `player_2` against
`player_1` and `player_3`, sitting alternately, with play passing in seat order. All forty cards
are dealt at once: in `scopone` nine to each player and four face up to the table (dealt again
if three or more of them are kings), in `scopone_scientifico` ten to each player and none to the
table. Captures, scope and the scoring categories are those of Scopa, counted per partnership:
partners pool their captures, scope and points, and a match ends when a partnership reaches the
target with a strict lead. The rules are section 8 of the project's `RULES.md`; every rule option
and preset of `scopa_v0` applies (a sweep on the last play of the deal scores only with
`last_play_scopa`).

The action space, the capture choice and the masking are exactly those of `scopa_v0`.

### Arguments

``` python
scopone_v0.env(rules=None, deal="scopone", episode="match", reward="match", render_mode=None,
               show_hands="current")
```

`rules`: a `scopa_env.Rules`, a preset name (`"scopa"`, `"scopa_d_assi"`, `"asso_pigliatutto"`,
`"scopa_a_quindici"`, `"napola"`, `"re_bello"`), a dict of options, or `None` for the defaults.

`deal`: `"scopone"` (9 cards each, 4 on the table) or `"scopone_scientifico"` (10 each).

`episode`: `"match"` (deals until the match is won) or `"deal"` (one deal).

`reward`: `"match"`: +1 to both players of the winning partnership and -1 to both of the other
when the episode ends (with `episode="deal"`, the partnership ahead on points in the deal; 0 each
on a tie). `"points"`: at the end of every deal each player receives its partnership's points
minus the other partnership's points for that deal.

`render_mode`: `None`, `"human"`, `"ansi"` or `"rgb_array"`.

`show_hands`: whose hand the picture shows face up: `"current"` (the agent to move), `"all"`,
or one agent's name.

Invalid arguments raise `ValueError` at construction.

### Observation Space

The observation is a dict with an `"observation"` vector (float32) and an `"action_mask"`
(int8, length 80). The vector is seen from the observing agent's seat and holds nothing that
agent could not know: the other three hands (partner's included) appear only as the `unseen`
plane and their sizes. Seats are named from the observer: `next` plays right after me (an
opponent), `partner` sits opposite, `prev` plays right before me (the other opponent). The
40-wide card planes come first in card-id order, so `obs[:11 * 40].reshape(11, 40)` is a
(plane, card) image. Use the named slices `scopa_env.scopone_observation.OBS_SLICES` rather than
the offsets below.

| Index | Name             | Size | Meaning (1.0 = yes unless stated)                          |
|-------|------------------|------|------------------------------------------------------------|
| 0     | `hand`           | 40   | the card is in my hand (not the pending card)              |
| 40    | `table`          | 40   | the card is on the table                                   |
| 80    | `our_captures`   | 40   | the card is in my partnership's capture pile               |
| 120   | `their_captures` | 40   | the card is in the opponents' capture pile                 |
| 160   | `my_played`      | 40   | I played the card this deal                                |
| 200   | `next_played`    | 40   | the next player (an opponent) played the card              |
| 240   | `partner_played` | 40   | my partner played the card                                 |
| 280   | `prev_played`    | 40   | the previous player (an opponent) played the card          |
| 320   | `unseen`         | 40   | the card is in another player's hand                       |
| 360   | `pending`        | 40   | the card I have played and am capturing with               |
| 400   | `picked`         | 40   | the table cards I have picked so far for that capture      |
| 440   | `phase`          | 2    | one-hot: [choose a card to play, pick table cards]         |
| 442   | `hand_sizes`     | 3    | cards in hand / 10: [next, partner, prev]                  |
| 445   | `scope`          | 2    | scope this deal [ours, theirs] / 20                        |
| 447   | `match_score`    | 2    | match points before this deal [ours, theirs]/target, max 4 |
| 449   | `target`         | 1    | the match target / 100                                     |
| 450   | `dealer`         | 4    | one-hot, who deals: [me, next, partner, prev]              |
| 454   | `last_capturer`  | 3    | one-hot: [my partnership, the opponents, nobody yet]       |

While an agent is choosing a capture, the other agents' observations still show the position
before the play (the played card is revealed when the capture is made).

### Action Space

`Discrete(80)`, the same in every state and the same as `scopa_v0`:

- `0..39`: play that card from your hand.
- `40..79`: take table card `a - 40` into your capture.

After a card is played, if the rules allow exactly one capture for it (or none, and it is laid
on the table) the play is resolved at once. If they allow several, the same agent acts again and
picks table cards one at a time: the mask offers only table cards that still lead to some legal
capture, and the capture is made as soon as exactly one legal capture contains the picked cards.

#### Legal Actions Mask

`observation["action_mask"]` is an int8 vector of length 80 with 1 for each legal action of the
agent to move, and all zeros for the other agents and after the game ends. `raw_env.step`
raises `IllegalActionError` (a `ValueError`, the class of `scopa_v0`) for an illegal action and
changes nothing; `env()` instead ends the game with -1 for the offending agent and 0 for the
others, as in PettingZoo's classic environments.

### Rewards

| `reward`   | When                       | Winning partnership      | Other partnership |
|------------|----------------------------|--------------------------|-------------------|
| `"match"`  | end of the episode         | +1 each                  | -1 each           |
| `"points"` | end of every deal          | own points - theirs      | the negation      |

### Infos

At the end of every deal every agent's info holds `"deal_score"` (a list, by partnership, of
dicts with the points per category and `"total"`; partnership 0 is `player_0` and `player_2`)
and `"match_score"` (the match points of partnerships 0 and 1 after the deal); when the episode
ends they also hold `"winner"` (the winning partnership as a tuple of agent names, e.g.
`("player_1", "player_3")`, or `None` for a tied deal with `episode="deal"`). An agent's info is
cleared when that agent next acts.

### Reset options

`reset(seed=None, options=None)`. `options={"deck": [40 card ids], "first_player": 0..3}` deals
the first deal from that order, with no redeal: cards go one at a time in playing order starting
with the first player, so `deck[i]` goes to `player_{(first_player + i) % 4}` while the hands
fill (`i < 36` for `scopone`, every card for `scopone_scientifico`) and `deck[36:40]` to the
table in `scopone`. `first_player` defaults to 0 when a deck is given. `{"first_player": p}`
alone fixes who leads the first deal of a random deck. The dealer is the player before the
first player and plays last; the deal passes to the next seat every deal. Later deals come from
the environment's seeded generator, and the first dealer is drawn from it unless given.
Reseeding never changes the configuration.

### Introspection

`raw_env.match` (a `scopa_env.Match`: scores and winner per partnership) and `raw_env.deal`
(the current `scopa_env.Deal`, with each seat's hand, captures and scope, and the partnerships'
`team_captures` and `team_scope`) expose the engine; treat them as read-only. `raw_env.phase`,
`raw_env.legal_actions()`, `raw_env.describe_action(a)` and `raw_env.last_play` are as in
`scopa_v0`. Pickling (or `copy.deepcopy`) keeps the whole game state, including the random
generator.

### Version History

* v0: Initial release (scopa-env 0.1.0)
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env.captures import capture_table, consistent_sets, pickable_cards
from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, card_name, cards_of
from scopa_env.engine import DEAL_KINDS, Deal, Match
from scopa_env.rules import Rules, resolve_rules
from scopa_env.scopa_v0 import NUM_ACTIONS, PICK_OFFSET, IllegalActionError, Play
from scopa_env.scopa_v0 import raw_env as _scopa_env
from scopa_env.scopone_observation import OBS_HIGH, OBS_SIZE, OBS_SLICES, encode

__all__ = [
    "AGENTS",
    "DEALS",
    "NUM_ACTIONS",
    "PICK_OFFSET",
    "IllegalActionError",
    "TEAMS",
    "Play",
    "env",
    "raw_env",
    "team_of",
]

AGENTS = ("player_0", "player_1", "player_2", "player_3")
#: The partnerships, by team index: seats 0 and 2, seats 1 and 3.
TEAMS = (("player_0", "player_2"), ("player_1", "player_3"))
DEALS = ("scopone", "scopone_scientifico")
EPISODES = ("match", "deal")
REWARDS = ("match", "points")
SHOW_HANDS = ("current", "all", *AGENTS)
RENDER_MODES = ("human", "ansi", "rgb_array")
RESET_OPTIONS = ("deck", "first_player")

_INDEX = {agent: i for i, agent in enumerate(AGENTS)}
_VALUE = [int(v) for v in CAPTURE_VALUE]
_MASK_BYTES = NUM_ACTIONS // 8
_HAND = OBS_SLICES["hand"]


def team_of(agent: str) -> int:
    """The partnership of an agent: 0 for ``player_0`` and ``player_2``, else 1."""
    return _INDEX[agent] % 2


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` in PettingZoo's classic wrappers: an illegal action loses with -1."""
    aec = raw_env(**kwargs)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    aec = wrappers.OrderEnforcingWrapper(aec)
    return aec


def _check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


class raw_env(AECEnv, EzPickle):  # noqa: N801 - PettingZoo's naming convention
    """Four-player Scopone as a PettingZoo AEC environment; the module docstring documents it."""

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "scopone_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        deal: Literal["scopone", "scopone_scientifico"] = "scopone",
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        render_mode: str | None = None,
        show_hands: str = "current",
    ) -> None:
        EzPickle.__init__(
            self,
            rules=rules,
            deal=deal,
            episode=episode,
            reward=reward,
            render_mode=render_mode,
            show_hands=show_hands,
        )
        super().__init__()
        self.rules: Rules = resolve_rules(rules)
        self.deal_kind = DEAL_KINDS[_check_choice(deal, "deal", DEALS)]
        self.episode = _check_choice(episode, "episode", EPISODES)
        self.reward_mode = _check_choice(reward, "reward", REWARDS)
        if render_mode is not None:
            _check_choice(render_mode, "render_mode", RENDER_MODES)
        self.render_mode = render_mode
        self.show_hands = _check_choice(show_hands, "show_hands", SHOW_HANDS)

        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, OBS_HIGH, shape=(OBS_SIZE,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for agent in AGENTS
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        self._capture_sets = capture_table(self.rules)
        self._rng: np.random.Generator | None = None
        self._current: int | None = None  # the player to move; None once the game is over

    # PettingZoo API -------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        deck, first_player = self._parse_options(options)  # may raise: change nothing before
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        if first_player is None:
            first_player = int(self._rng.integers(len(AGENTS)))
        dealer = (first_player - 1) % len(AGENTS)
        self._match: Match = Match(self.rules, first_dealer=dealer, kind=self.deal_kind)
        if deck is not None:
            self._deal: Deal = Deal.from_deck(deck, first_player, self.rules, self.deal_kind)
        else:
            self._deal = self._match.new_deal(self._rng)
        self._score_before = (0, 0)

        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self._rewards_pending = False
        self._done = False
        self._skip_agent_selection = None
        self._pending: int | None = None
        self._options: tuple[int, ...] = ()
        self._picked = 0
        self._last_play: Play | None = None
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation; repeated calls in one state return the same arrays."""
        player = _INDEX[agent]
        obs = self._obs_cache[player]
        if obs is None:
            obs = self._obs_cache[player] = self._observe(player)
        return obs

    def step(self, action: int | np.integer) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
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
        self._cumulative_rewards[agent] = 0.0
        if self.infos[agent]:
            self.infos[agent] = {}

        if self._pending is None:
            options = self._capture_sets(self._table, _VALUE[a])
            if len(options) > 1:  # a choice: the same agent picks table cards next
                self._pending, self._options, self._picked = a, options, 0
            else:
                self._play(a, options[0] if options else 0)
        else:
            picked = self._picked | 1 << (a - PICK_OFFSET)
            sets = consistent_sets(self._options, picked)
            if len(sets) > 1:
                self._picked = picked
            else:
                card = self._pending
                self._pending, self._options, self._picked = None, (), 0
                self._play(card, sets[0])
        self._refresh()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        from scopa_env import render

        scene = render.ScoponeScene.from_env(self)
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
        """The match: scores, dealer and winner per partnership (read-only)."""
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
        return self._last_play

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

    describe_action = staticmethod(_scopa_env.describe_action)

    # Pickling keeps the game, not just the constructor arguments ---------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = EzPickle.__getstate__(self)
        if "_deal" in self.__dict__:
            state["game"] = {
                "deal": self._deal.to_dict(),
                "match": self._match,
                "rng": self._rng,
                "score_before": self._score_before,
                "pending": self._pending,
                "options": self._options,
                "picked": self._picked,
                "last_play": self._last_play,
                "agents": list(self.agents),
                "agent_selection": self.agent_selection,
                "skip_agent_selection": self._skip_agent_selection,
                "rewards": dict(self.rewards),
                "cumulative_rewards": dict(self._cumulative_rewards),
                "rewards_pending": self._rewards_pending,
                "done": self._done,
                "terminations": dict(self.terminations),
                "truncations": dict(self.truncations),
                "infos": {agent: dict(info) for agent, info in self.infos.items()},
            }
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        EzPickle.__setstate__(self, state)
        game = state.get("game")
        if game is None:
            return
        self._deal = Deal.from_dict(game["deal"])
        self._match = game["match"]
        self._rng = game["rng"]
        self._score_before = game["score_before"]
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
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            warnings.warn(
                f"scopone_v0.reset ignores unknown option(s) {unknown}; "
                f"it understands {list(RESET_OPTIONS)}",
                stacklevel=3,
            )
        deck = options.get("deck")
        first_player = options.get("first_player")
        if first_player is not None and (
            isinstance(first_player, bool)
            or not isinstance(first_player, int | np.integer)
            or not 0 <= first_player < len(AGENTS)
        ):
            raise ValueError(f"options['first_player'] must be 0, 1, 2 or 3, got {first_player!r}")
        if deck is not None:
            # Validate before anything changes, so a bad deck leaves the environment as it was.
            Deal.from_deck(deck, 0, self.rules, self.deal_kind)
            if first_player is None:
                first_player = 0
        return deck, None if first_player is None else int(first_player)

    def _refresh(self) -> None:
        """Recompute what the next step and observations need; drop cached observations."""
        deal = self._deal
        masks = deal.masks
        self._masks = masks
        self._table = masks["table"]
        self._obs_cache: list[dict[str, np.ndarray] | None] = [None] * len(AGENTS)
        if self._done:
            self._current = None
            self._legal = 0
            return
        player = deal.current_player
        self._current = player
        self.agent_selection = AGENTS[player]
        if self._pending is None:
            self._legal = masks["hands"][player]
        else:
            self._legal = pickable_cards(self._options, self._picked) << PICK_OFFSET

    def _observe(self, player: int) -> dict[str, np.ndarray]:
        masks = self._masks
        deal = self._deal
        choosing = player == self._current and self._pending is not None
        observation = encode(
            masks["hands"],
            masks["table"],
            masks["piles"],
            masks["played"],
            deal.scope,
            deal.last_capturer,
            deal.dealer,
            player,
            pending_card=self._pending if choosing else None,
            picked=self._picked if choosing else 0,
            match_score=self._score_before,
            target=self.rules.target,
        )
        if player != self._current:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        elif self._pending is None:
            # Every card in hand may be played: the mask is the hand plane, already encoded.
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
            mask[:NUM_CARDS] = observation[_HAND]
        else:
            legal = np.frombuffer(self._legal.to_bytes(_MASK_BYTES, "little"), dtype=np.uint8)
            mask = np.unpackbits(legal, bitorder="little").view(np.int8)
        return {"observation": observation, "action_mask": mask}

    def _play(self, card: int, capture: int) -> None:
        """Apply a resolved play to the engine; score the deal if it ends."""
        deal = self._deal
        player = deal.current_player
        sweep = capture != 0 and capture == self._table
        scope = deal.scope[player] if sweep else 0
        deal.play_unchecked(card, capture)
        self._last_play = Play(player, card, capture, sweep and deal.scope[player] > scope)
        if deal.is_over:
            self._end_deal()

    def _end_deal(self) -> None:
        deal, match = self._deal, self._match
        breakdowns = deal.score()
        totals = (breakdowns[0].total, breakdowns[1].total)
        match.record_deal(totals)
        done = self.episode == "deal" or match.is_over
        info: dict[str, Any] = {
            "deal_score": [b.to_dict() for b in breakdowns],
            "match_score": match.scores,
        }
        by_team = None
        if self.reward_mode == "points":
            by_team = (float(totals[0] - totals[1]), float(totals[1] - totals[0]))
        if done:
            if self.episode == "match":
                winner = match.winner
            else:
                winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
            info["winner"] = None if winner is None else TEAMS[winner]
            if self.reward_mode == "match" and winner is not None:
                by_team = (1.0, -1.0) if winner == 0 else (-1.0, 1.0)
            self.terminations = dict.fromkeys(AGENTS, True)
            self._done = True
        self.infos = {agent: dict(info) for agent in AGENTS}
        if by_team is not None:
            self.rewards = {agent: by_team[p % 2] for p, agent in enumerate(AGENTS)}
            self._accumulate_rewards()
            self._rewards_pending = True
        if not done:
            self._deal = match.new_deal(self._rng)  # type: ignore[arg-type]  # set by reset
            self._score_before = match.scores

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
