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
| State Shape        | (617,)                                                            |
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

### State

`state()` and `state_space` are as in `scopa_v0`: the observation of the agent to act, then the
hands of the three other players in playing order from it and the stock, one plane of the 40
cards each (the stock is empty in Scopone, where every card is dealt), for a critic that sees
every card; never for a player.

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

* v0: Initial release (scopa-env 0.1.0). Scopone stays its own entry point with its own
  observation layout beside `scopa_v0`'s tables (`scopa_v0.env(table=...)` plays Scopa for 2,
  3, 4 or 6 and refers Scopone here); both share one AEC implementation. `state()` and
  `state_space` were added later in v0; observations and rewards did not change.
"""

from __future__ import annotations

from typing import Any, Literal

from pettingzoo import AECEnv

from scopa_env import render
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET
from scopa_env.capture_env import (
    CaptureGameEnv,
    IllegalActionError,
    Play,
    check_choice,
    classic_wrappers,
)
from scopa_env.rules import Rules
from scopa_env.scopone_observation import OBS_HIGH, encode_dealt
from scopa_env.tables import TABLES, Table

__all__ = [
    "AGENTS",
    "DEALS",
    "NUM_ACTIONS",
    "PICK_OFFSET",
    "IllegalActionError",
    "TEAMS",
    "Play",
    "ScoponeDeal",
    "env",
    "raw_env",
    "team_of",
]

#: The deals of Scopone: a name for ``raw_env(deal=...)``.
ScoponeDeal = Literal["scopone", "scopone_scientifico"]
DEALS: tuple[ScoponeDeal, ...] = ("scopone", "scopone_scientifico")
_TABLE = TABLES["scopone"]
AGENTS = _TABLE.agents
#: The partnerships, by team index: seats 0 and 2, seats 1 and 3.
TEAMS = tuple(tuple(AGENTS[seat] for seat in _TABLE.seats_of(side)) for side in range(2))


def team_of(agent: str) -> int:
    """The partnership of an agent: 0 for ``player_0`` and ``player_2``, else 1."""
    return _TABLE.side_of(AGENTS.index(agent))


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` in PettingZoo's classic wrappers: an illegal action loses with -1."""
    return classic_wrappers(raw_env(**kwargs))


class raw_env(CaptureGameEnv):  # noqa: N801 - PettingZoo's naming convention
    """Four-player Scopone as a PettingZoo AEC environment; the module docstring documents it."""

    metadata = {**CaptureGameEnv.metadata, "name": "scopone_v0"}
    _encode = staticmethod(encode_dealt)
    _OBS_HIGH = OBS_HIGH

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        deal: ScoponeDeal = "scopone",
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        render_mode: str | None = None,
        show_hands: str = "current",
        **unknown: Any,
    ) -> None:
        # The base refuses ``unknown`` with a message naming the environment's arguments.
        super().__init__(rules, episode, reward, render_mode, show_hands, deal=deal, **unknown)

    def _table_for(self, deal: str) -> Table:  # type: ignore[override]
        return TABLES[check_choice(deal, "deal", DEALS)]

    def _scene(self) -> render.TableScene:
        """The scene of the position as ``show_hands`` asks."""
        return self._table_scene(self.table.name.replace("_", " ").capitalize())
