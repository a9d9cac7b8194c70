"""
# Scopa

| Import             | `from scopa_env import scopa_v0`                              |
|--------------------|---------------------------------------------------------------|
| Creation           | `scopa_v0.env()` or `pettingzoo.make("aec", "scopa/scopa-v0")` |
| Actions            | Discrete                                                      |
| Parallel API       | No                                                            |
| Manual Control     | No                                                            |
| Agents             | `agents= ['player_0', 'player_1']`                            |
| Agents             | 2                                                             |
| Action Shape       | (1,)                                                          |
| Action Values      | Discrete(80)                                                  |
| Observation Shape  | (373,)                                                        |
| Observation Values | [0, 1] (match score in [0, 4])                                |
| Render Modes       | `human` (text on stdout), `ansi`, `rgb_array`                 |

Scopa is the Italian fishing card game for two players with the 40-card Italian pack. Each
player in turn plays one card from a hand of three: a card of the same value as a table card
must capture one such card, otherwise a card captures any set of table cards summing to its
value, otherwise it is laid on the table. Sweeping the table scores a *scopa*. After the deal,
points go for most cards, most coins, the seven of coins (settebello), the best *primiera* and
each scopa; deals continue until a player reaches the target (11) with a strict lead. The rules
are those of the project's `RULES.md`; every variant there is a `Rules` option or preset.

The agent makes every decision a real player makes, including *which* capture to take, through
one fixed masked action space.

### Arguments

``` python
scopa_v0.env(rules=None, episode="match", reward="match", render_mode=None, show_hands="current")
```

`rules`: a `scopa_env.Rules`, a preset name (`"scopa"`, `"scopa_d_assi"`, `"asso_pigliatutto"`,
`"scopa_a_quindici"`, `"napola"`, `"re_bello"`), a dict of options, or `None` for the defaults.

`episode`: `"match"` (deals until the match is won) or `"deal"` (one deal).

`reward`: `"match"`: +1 to the winner and -1 to the loser when the episode ends (with
`episode="deal"`, the winner of the deal on points; 0 each on a tie). `"points"`: at the end of
every deal each player receives its points minus the opponent's points for that deal.

`render_mode`: `None`, `"human"`, `"ansi"` or `"rgb_array"`.

`show_hands`: whose hand the picture shows face up: `"current"` (the agent to move), `"all"`,
`"player_0"` or `"player_1"`.

Invalid arguments raise `ValueError` at construction.

### Observation Space

The observation is a dict with an `"observation"` vector (float32) and an `"action_mask"`
(int8, length 80). The vector is seen from the observing agent's seat and holds nothing that
agent could not know (never the opponent's hand or the stock order). The 40-wide card planes
come first in card-id order (`id = suit * 10 + value - 1`, suits coins, cups, swords, clubs), so
`obs[:9 * 40].reshape(9, 40)` is a (plane, card) image. Use the named slices
`scopa_env.observation.OBS_SLICES` rather than the offsets below.

| Index | Name            | Size | Meaning (1.0 = yes unless stated)                          |
|-------|-----------------|------|------------------------------------------------------------|
| 0     | `hand`          | 40   | the card is in my hand (not the pending card)              |
| 40    | `table`         | 40   | the card is on the table                                   |
| 80    | `my_captures`   | 40   | the card is in my capture pile                             |
| 120   | `opp_captures`  | 40   | the card is in the opponent's capture pile                 |
| 160   | `my_played`     | 40   | I played the card this deal                                |
| 200   | `opp_played`    | 40   | the opponent played the card this deal                     |
| 240   | `unseen`        | 40   | the card is in the opponent's hand or the stock            |
| 280   | `pending`       | 40   | the card I have played and am capturing with               |
| 320   | `picked`        | 40   | the table cards I have picked so far for that capture      |
| 360   | `phase`         | 2    | one-hot: [choose a card to play, pick table cards]         |
| 362   | `stock_size`    | 1    | cards left in the stock / 30                               |
| 363   | `opp_hand_size` | 1    | cards in the opponent's hand / 3                           |
| 364   | `scope`         | 2    | scope this deal [mine, opponent's] / 18                    |
| 366   | `match_score`   | 2    | match points before this deal [mine, opp.] / target, max 4 |
| 368   | `target`        | 1    | the match target / 100                                     |
| 369   | `dealer`        | 1    | I am the dealer of this deal                               |
| 370   | `last_capturer` | 3    | one-hot: [me, the opponent, nobody yet]                    |

While an agent is choosing a capture, its opponent's observation still shows the position
before the play (the played card is revealed when the capture is made).

### Action Space

`Discrete(80)`, the same in every state:

- `0..39`: play that card from your hand.
- `40..79`: take table card `a - 40` into your capture.

After a card is played, if the rules allow exactly one capture for it (or none, and it is laid
on the table) the play is resolved at once. If they allow several (equal cards, several sums),
the same agent acts again and picks table cards one at a time: the mask offers only table cards
that still lead to some legal capture, and the capture is made as soon as exactly one legal
capture contains the picked cards. Every legal capture is reachable this way and nothing
illegal is.

#### Legal Actions Mask

`observation["action_mask"]` is an int8 vector of length 80 with 1 for each legal action of the
agent to move, and all zeros for the other agent and after the game ends. `raw_env.step` raises
`IllegalActionError` (a `ValueError`) for an illegal action and changes nothing; `env()` instead
ends the game with -1 for the offending agent and 0 for the other, as in PettingZoo's classic
environments.

### Rewards

| `reward`   | When                       | Winner / player p        | Loser / opponent |
|------------|----------------------------|--------------------------|------------------|
| `"match"`  | end of the episode         | +1                       | -1               |
| `"points"` | end of every deal          | p's points - opponent's  | the negation     |

### Infos

At the end of every deal both agents' infos hold `"deal_score"` (a list, by player index, of
dicts with the points per category and `"total"`) and `"match_score"` (the match points of
player 0 and player 1 after the deal); when the episode ends they also hold `"winner"` (the
winning agent's name, or `None` for a tied deal with `episode="deal"`). An agent's info is
cleared when that agent next acts.

### Reset options

`reset(seed=None, options=None)`. `options={"deck": [40 card ids], "first_player": 0 or 1}`
deals the first deal from that order by the deal convention of `RULES.md` (`deck[0], deck[2],
deck[4]` to the first player, `deck[1], deck[3], deck[5]` to the dealer, `deck[6:10]` to the
table, the rest is the stock), with no redeal; `first_player` defaults to 0 when a deck is
given. `{"first_player": p}` alone fixes who leads the first deal of a random deck. Later deals
come from the environment's seeded generator, and the first dealer of a match is drawn from it
unless given. Reseeding never changes the configuration.

### Introspection

`raw_env.match` (a `scopa_env.Match`) and `raw_env.deal` (the current `scopa_env.Deal`) expose
the engine for analysis and search; treat them as read-only. `raw_env.phase` is `"play"` or
`"pick"`, `raw_env.legal_actions()` lists the legal actions, `raw_env.describe_action(a)`
names one and `raw_env.last_play` is the last resolved `Play` (`scopa_env.render.describe_play`
puts it in words). Pickling (or `copy.deepcopy`) keeps the whole game state, including the random
generator.

### Version History

* v0: Initial release (scopa-env 0.1.0)
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from scopa_env.captures import capture_table, consistent_sets, pickable_cards
from scopa_env.cards import CAPTURE_VALUE, NUM_CARDS, card_name, cards_of
from scopa_env.engine import Deal, IllegalMoveError, Match
from scopa_env.observation import OBS_HIGH, OBS_SIZE, OBS_SLICES, encode
from scopa_env.rules import Rules, resolve_rules

__all__ = ["NUM_ACTIONS", "PICK_OFFSET", "IllegalActionError", "Play", "env", "raw_env"]

AGENTS = ("player_0", "player_1")
NUM_ACTIONS = 2 * NUM_CARDS
#: Actions ``PICK_OFFSET + c`` take table card ``c`` during a capture choice.
PICK_OFFSET = NUM_CARDS
EPISODES = ("match", "deal")
REWARDS = ("match", "points")
SHOW_HANDS = ("current", "all", *AGENTS)
RENDER_MODES = ("human", "ansi", "rgb_array")
RESET_OPTIONS = ("deck", "first_player")

_INDEX = {agent: i for i, agent in enumerate(AGENTS)}
_VALUE = [int(v) for v in CAPTURE_VALUE]
_MASK_BYTES = NUM_ACTIONS // 8
_HAND = OBS_SLICES["hand"]


class Play(NamedTuple):
    """A resolved play: who played which card, the table cards taken (a bit mask; 0 when the
    card was laid down), and whether it scored a scopa."""

    player: int
    card: int
    capture: int
    scopa: bool


class IllegalActionError(IllegalMoveError):
    """An action that is not legal for the agent to move (see its ``action_mask``)."""


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
    """Two-player Scopa as a PettingZoo AEC environment; the module docstring documents it."""

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "scopa_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        render_mode: str | None = None,
        show_hands: str = "current",
    ) -> None:
        EzPickle.__init__(
            self,
            rules=rules,
            episode=episode,
            reward=reward,
            render_mode=render_mode,
            show_hands=show_hands,
        )
        super().__init__()
        self.rules: Rules = resolve_rules(rules)
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
            first_player = int(self._rng.integers(2))
        self._match: Match = Match(self.rules, first_dealer=1 - first_player)
        if deck is not None:
            self._deal: Deal = Deal.from_deck(deck, first_player, self.rules)
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
        obs = self._obs_cache[_INDEX[agent]]
        if obs is None:
            obs = self._obs_cache[_INDEX[agent]] = self._observe(_INDEX[agent])
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

        scene = render.Scene.from_env(self)
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
        """The match: scores, dealer and winner (read-only)."""
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

    @staticmethod
    def describe_action(action: int) -> str:
        """A readable name for an action, e.g. ``"play 7D"`` or ``"take 5C"``."""
        action = operator.index(action)
        if 0 <= action < PICK_OFFSET:
            return f"play {card_name(action)}"
        if PICK_OFFSET <= action < NUM_ACTIONS:
            return f"take {card_name(action - PICK_OFFSET)}"
        raise ValueError(f"not an action: {action!r} (actions are 0..{NUM_ACTIONS - 1})")

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
                f"scopa_v0.reset ignores unknown option(s) {unknown}; "
                f"it understands {list(RESET_OPTIONS)}",
                stacklevel=3,
            )
        deck = options.get("deck")
        first_player = options.get("first_player")
        if first_player is not None and (
            isinstance(first_player, bool)
            or not isinstance(first_player, int | np.integer)
            or first_player not in (0, 1)
        ):
            raise ValueError(f"options['first_player'] must be 0 or 1, got {first_player!r}")
        if deck is not None:
            # Validate before anything changes, so a bad deck leaves the environment as it was.
            Deal.from_deck(deck, 0, self.rules)
            if first_player is None:
                first_player = 0
        return deck, None if first_player is None else int(first_player)

    def _refresh(self) -> None:
        """Recompute what the next step and observations need; drop cached observations."""
        deal = self._deal
        masks = deal.masks
        self._masks = masks
        self._table = masks["table"]
        self._obs_cache: list[dict[str, np.ndarray] | None] = [None, None]
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
        rewards = None
        if self.reward_mode == "points":
            rewards = (float(totals[0] - totals[1]), float(totals[1] - totals[0]))
        if done:
            if self.episode == "match":
                winner = match.winner
            else:
                winner = None if totals[0] == totals[1] else int(totals[1] > totals[0])
            info["winner"] = None if winner is None else AGENTS[winner]
            if self.reward_mode == "match" and winner is not None:
                rewards = (1.0, -1.0) if winner == 0 else (-1.0, 1.0)
            self.terminations = dict.fromkeys(AGENTS, True)
            self._done = True
        self.infos = {agent: dict(info) for agent in AGENTS}
        if rewards is not None:
            self.rewards = dict(zip(AGENTS, rewards, strict=True))
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
