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

from typing import Any

from pettingzoo import AECEnv

from scopa_env import render
from scopa_env.actions import NUM_ACTIONS, PICK_OFFSET
from scopa_env.capture_env import CaptureGameEnv, IllegalActionError, Play, classic_wrappers
from scopa_env.cards import COINS_MASK, SETTEBELLO, cards_of
from scopa_env.observation import OBS_HIGH, OBS_SLICES, encode
from scopa_env.tables import SCOPA, Table

__all__ = ["NUM_ACTIONS", "PICK_OFFSET", "IllegalActionError", "Play", "env", "raw_env"]

AGENTS = SCOPA.agents


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` in PettingZoo's classic wrappers: an illegal action loses with -1."""
    return classic_wrappers(raw_env(**kwargs))


class raw_env(CaptureGameEnv):  # noqa: N801 - PettingZoo's naming convention
    """Two-player Scopa as a PettingZoo AEC environment; the module docstring documents it."""

    metadata = {**CaptureGameEnv.metadata, "name": "scopa_v0"}
    _encode = staticmethod(encode)
    _OBS_HIGH = OBS_HIGH
    _HAND = OBS_SLICES["hand"]

    def _table_for(self) -> Table:
        return SCOPA

    def _scene(self) -> render.Scene:
        """The scene of the position as ``show_hands`` asks."""
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
