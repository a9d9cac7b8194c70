"""
# Scopa

| Import             | `from scopa_env import scopa_v0`                              |
|--------------------|---------------------------------------------------------------|
| Creation           | `scopa_v0.env()` or `pettingzoo.make("aec", "scopa/scopa-v0")` |
| Actions            | Discrete                                                      |
| Parallel API       | No                                                            |
| Manual Control     | No                                                            |
| Agents             | `agents= ['player_0', 'player_1']` (`player_0` .. by table)   |
| Agents             | 2 (3, 4 or 6 with `table=` or `players=`)                     |
| Action Shape       | (1,)                                                          |
| Action Values      | Discrete(80)                                                  |
| Observation Shape  | (373,)                                                        |
| Other tables       | scopa_3 (462,), scopa_4 (546,), scopa_6 (716,)                |
| Observation Values | [0, 1] (match score in [0, 4])                                |
| State Shape        | (453,); scopa_3 (582,), scopa_4 (706,), scopa_6 (956,)        |
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

Like PettingZoo's multi-player classic environments it takes the table as an argument: Scopa
for three (each for themselves, four rounds of three cards), four (two partnerships, seats
0+2 against 1+3, three rounds) or six (two teams of three, 0+2+4 against 1+3+5, two rounds),
as in section 8 of `RULES.md`. Partners pool their captures, scope and points and receive the
same reward; with three sides a category goes only to the one side strictly ahead of every
other, and the match ends when a side at the target has the highest total alone. Scopone is
`scopone_v0`.

### Arguments

``` python
scopa_v0.env(rules=None, episode="match", reward="match", render_mode=None, show_hands="current",
             table=None, players=None)
```

`table`: `"scopa"` (the default, two players), `"scopa_3"`, `"scopa_4"` or `"scopa_6"`, or a
`scopa_env.tables.Table`. `players`: 2, 3, 4 or 6, shorthand for those tables (give one of the
two, or both agreeing).

`rules`: a `scopa_env.Rules`, a preset name (`"scopa"`, `"scopa_d_assi"`, `"asso_pigliatutto"`,
`"scopa_a_quindici"`, `"napola"`, `"re_bello"`), a dict of options, or `None` for the defaults.

`episode`: `"match"` (deals until the match is won) or `"deal"` (one deal).

`reward`: `"match"`: +1 to the winner and -1 to the loser when the episode ends (with
`episode="deal"`, the winner of the deal on points; 0 each on a tie). `"points"`: at the end of
every deal each player receives its points minus the opponent's points for that deal.

`render_mode`: `None`, `"human"`, `"ansi"` or `"rgb_array"`.

`show_hands`: whose hand the picture shows face up: `"current"` (the agent to move), `"all"`,
or one agent's name (`"player_0"`, `"player_1"`, ...).

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

At `scopa_3`, `scopa_4` and `scopa_6` the observation is the layout of
`scopa_env.table_observation` (its docstring has the index table; `OBS_SLICES[table]` the named
slices): every seat seen from the observer (me, the next seat, the one after...), with what it
has captured and played, its hand size and scope, which seats are my partners, the sides' match
scores, the dealer and the last capturer. No hand but the observer's is ever shown, a
partner's included.

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

Rewards are per side: every seat of a partnership receives its side's reward. With three sides
a side receives its value minus the mean of the other two: `"match"` gives the winner +1 and
each other side -1/2; `"points"` gives `own - (a + b) / 2`. Rewards sum to zero over the sides.

### Infos

At the end of every deal every agent's info holds `"deal_score"` (a list, by side, of dicts
with the points per category and `"total"`) and `"match_score"` (the match points of each side
after the deal); when the episode ends they also hold `"winner"` (the winning agent's name, a
tuple of the winning partners' names at `scopa_4` and `scopa_6`, or `None` for a deal without a
single leader with `episode="deal"`). Side `s` is the seats `s, s + sides, ...`: with two
players side `p` is `player_p`. An agent's info is cleared when that agent next acts.

### State

`state()`, PettingZoo's global state (its bounds `state_space`), is for a critic that sees every
card (an oracle critic, as `ppo.oracle_critic` trains; the centralised critic of MAPPO): the
observation of the agent to act, followed by `40 x players` floats, one 0/1 plane of the 40
cards for the hand of each other seat in playing order from the agent to act, then one for the
stock (`scopa_env.privileged`). A player must never read it.

### Reset options

`reset(seed=None, options=None)`. `options={"deck": [40 card ids], "first_player": 0 or 1}`
deals the first deal from that order by the deal convention of `RULES.md` (`deck[0], deck[2],
deck[4]` to the first player, `deck[1], deck[3], deck[5]` to the dealer, `deck[6:10]` to the
table, the rest is the stock), with no redeal; `first_player` defaults to 0 when a deck is
given. At the other tables `deck[i]` goes to seat `(first_player + i) % seats` for the first
`seats x 3` cards, the next four to the table, and every later round the same way from the
stock; `first_player` is any seat. `{"first_player": p}` alone fixes who leads the first deal of
a random deck. The deal passes to the next seat every deal. Later deals come from the
environment's seeded generator, and the first dealer of a match is drawn from it unless given.
Reseeding never changes the configuration.

### Introspection

`raw_env.match` (a `scopa_env.Match`) and `raw_env.deal` (the current `scopa_env.Deal`) expose
the engine for analysis and search; treat them as read-only. `raw_env.phase` is `"play"` or
`"pick"`, `raw_env.legal_actions()` lists the legal actions, `raw_env.describe_action(a)`
names one and `raw_env.last_play` is the last resolved `Play` (`scopa_env.render.describe_play`
puts it in words). Pickling (or `copy.deepcopy`) keeps the whole game state, including the random
generator.

### Version History

* v0: Initial release (scopa-env 0.1.0). The `table` and `players` arguments add Scopa for 3, 4
  and 6 (their own observation layout, `scopa_env.table_observation`); the two-player
  environment, its observation and its rewards are unchanged. Scopone stays `scopone_v0`.
  `state()` and `state_space` were added later in v0; observations and rewards did not change.
"""

from __future__ import annotations

from typing import Any, Literal

from pettingzoo import AECEnv

from scopa_env import render
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET
from scopa_env.capture_env import (
    CaptureGameEnv,
    IllegalActionError,
    Layout,
    Play,
    classic_wrappers,
)
from scopa_env.cards import COINS_MASK, SETTEBELLO, cards_of
from scopa_env.errors import TableError
from scopa_env.observation import OBS_HIGH, encode
from scopa_env.rules import Rules
from scopa_env.table_observation import layout_for
from scopa_env.tables import SCOPA, SCOPA_TABLES, Table, resolve_table, scopa_table

__all__ = [
    "NUM_ACTIONS",
    "PICK_OFFSET",
    "TABLES",
    "IllegalActionError",
    "Play",
    "env",
    "raw_env",
    "table_of",
]

AGENTS = SCOPA.agents
#: The tables ``scopa_v0`` plays.
TABLES = tuple(SCOPA_TABLES.values())


def table_of(table: Table | str | None = None, players: int | None = None) -> Table:
    """The Scopa table of ``table`` (a name or ``Table``) and/or ``players`` (2, 3, 4 or 6)."""
    if players is not None:
        chosen = scopa_table(players)
        if table is not None and resolve_table(table) != chosen:
            raise TableError(f"players={players} is the table {chosen.name!r}, not {table!r}")
        return chosen
    chosen = resolve_table(table)
    if chosen.name not in TABLES:
        raise TableError(
            f"scopa_v0 plays the tables {list(TABLES)}; {chosen.name!r} is scopone_v0's"
        )
    return chosen


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` in PettingZoo's classic wrappers: an illegal action loses with -1."""
    return classic_wrappers(raw_env(**kwargs))


class raw_env(CaptureGameEnv):  # noqa: N801 - PettingZoo's naming convention
    """Two-player Scopa as a PettingZoo AEC environment; the module docstring documents it."""

    metadata = {**CaptureGameEnv.metadata, "name": "scopa_v0"}
    _encode = staticmethod(encode)
    _OBS_HIGH = OBS_HIGH

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        episode: Literal["match", "deal"] = "match",
        reward: Literal["match", "points"] = "match",
        render_mode: str | None = None,
        show_hands: str = "current",
        *,
        table: Table | str | None = None,
        players: int | None = None,
        **unknown: Any,
    ) -> None:
        # The base refuses ``unknown`` with a message naming the environment's arguments.
        super().__init__(
            rules, episode, reward, render_mode, show_hands, table=table, players=players, **unknown
        )

    def _table_for(self, table: Table | str | None, players: int | None) -> Table:  # type: ignore[override]
        return table_of(table, players)

    def _layout(self) -> Layout:
        if self.table == SCOPA:
            return encode, OBS_HIGH
        layout = layout_for(self.table)
        return layout.encode, layout.high

    def _scene(self) -> render.Scene | render.TableScene:
        """The scene of the position as ``show_hands`` asks."""
        if self.table != SCOPA:
            return self._table_scene(f"Scopa for {self.table.players}")
        deal, match = self.deal, self.match
        agents = self.table.agents
        masks = deal.masks
        scores = match.scores
        over, in_play, deal_number = self._moment()
        to_move = None if over or not self.agents else self._index[self.agent_selection]
        show = self.show_hands
        visible = [
            show == "all" or show == agents[p] or (show == "current" and to_move == p)
            for p in range(2)
        ]
        seats = []
        for p in range(2):
            pile = masks["piles"][p]
            seats.append(
                render.Seat(
                    name=agents[p],
                    role="dealer" if deal.dealer == p else "first player",
                    hand=cards_of(masks["hands"][p] & ~in_play),
                    hand_visible=visible[p],
                    captured=pile.bit_count(),
                    coins=(pile & COINS_MASK).bit_count(),
                    settebello=bool(pile >> SETTEBELLO & 1),
                    scope=deal.scope[p],
                    match_points=scores[p],
                )
            )
        bottom = 1 if show == "player_1" else 0
        header = (
            f"Scopa  deal {deal_number}  match {scores[0]}-{scores[1]} "
            f"(target {match.rules.target})  stock {len(deal.stock)}"
        )
        status = self._status(over, None if to_move is None else agents[to_move])
        return render.Scene(
            header=header,
            top=seats[1 - bottom],
            table=cards_of(masks["table"]),
            bottom=seats[bottom],
            pending=self.pending_card,
            picked=self.picked,
            last_play="last play: " + render.describe_play(self.last_play),
            status=status,
        )
