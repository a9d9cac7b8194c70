"""Pictures of a Scopa position: plain text (``ansi``) and an RGB image (``rgb_array``).

Both are drawn from one ``Scene``, so they always show the same thing. Images use Pillow's
built-in font and plain shapes: nothing is downloaded or read from disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from scopa_env.cards import COINS_MASK, SETTEBELLO, card_name, cards_of

if TYPE_CHECKING:
    from PIL import ImageDraw, ImageFont

    from scopa_env.scopa_v0 import Play, raw_env

AGENTS = ("player_0", "player_1")


@dataclass(frozen=True)
class Seat:
    """What the picture shows of one player."""

    name: str
    role: str
    hand: tuple[int, ...]
    hand_visible: bool
    captured: int
    coins: int
    settebello: bool
    scope: int
    match_points: int

    @property
    def summary(self) -> str:
        bello = ", 7D" if self.settebello else ""
        return (
            f"{self.name} ({self.role})  match {self.match_points}  "
            f"captured {self.captured} cards, {self.coins} coins{bello}  scope {self.scope}"
        )


@dataclass(frozen=True)
class Scene:
    """Everything drawn, from the top of the picture to the bottom."""

    header: str
    top: Seat
    table: tuple[int, ...]
    bottom: Seat
    pending: int | None
    picked: tuple[int, ...]
    last_play: str
    status: str

    @classmethod
    def from_env(cls, env: raw_env) -> Scene:
        """The scene of a ``scopa_v0.raw_env`` as its ``show_hands`` option asks."""
        deal, match = env.deal, env.match
        masks = deal.masks
        scores = match.scores
        over = bool(env.terminations) and all(env.terminations.values())
        to_move = None if over or not env.agents else _INDEX[env.agent_selection]
        show = env.show_hands
        visible = [
            show == "all" or show == AGENTS[p] or (show == "current" and to_move == p)
            for p in range(2)
        ]
        in_play = 0 if env.pending_card is None else 1 << env.pending_card
        seats = []
        for p in range(2):
            pile = masks["piles"][p]
            seats.append(
                Seat(
                    name=AGENTS[p],
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
        deal_number = match.deals_played + (0 if deal.is_over else 1)
        header = (
            f"Scopa  deal {deal_number}  match {scores[0]}-{scores[1]} "
            f"(target {match.rules.target})  stock {len(deal.stock)}"
        )
        info = env.infos.get(env.agent_selection, {}) if over else {}
        if "winner" in info:
            status = "game over: " + (f"{info['winner']} wins" if info["winner"] else "a tie")
        elif to_move is None:
            status = "game over"
        elif env.pending_card is None:
            status = f"{AGENTS[to_move]} to play a card"
        else:
            status = f"{AGENTS[to_move]} to pick table cards for {card_name(env.pending_card)}"
        return cls(
            header=header,
            top=seats[1 - bottom],
            table=cards_of(masks["table"]),
            bottom=seats[bottom],
            pending=env.pending_card,
            picked=env.picked,
            last_play="last play: " + describe_play(env.last_play),
            status=status,
        )


_INDEX = {agent: i for i, agent in enumerate(AGENTS)}


def describe_play(play: Play | None) -> str:
    """A play in words, e.g. ``"player_1 played 5B and took 5C  SCOPA!"``."""
    if play is None:
        return "-"
    player, card, capture, scopa = play
    if not capture:
        return f"{AGENTS[player]} laid {card_name(card)}"
    taken = " ".join(card_name(c) for c in cards_of(capture))
    return f"{AGENTS[player]} played {card_name(card)} and took {taken}" + (
        "  SCOPA!" if scopa else ""
    )


def _cards_text(cards: tuple[int, ...], visible: bool) -> str:
    if not cards:
        return "-"
    return " ".join(card_name(c) if visible else "??" for c in cards)


def to_ansi(scene: Scene) -> str:
    """The scene as lines of plain text."""
    lines = [
        scene.header,
        scene.top.summary,
        "  hand   " + _cards_text(scene.top.hand, scene.top.hand_visible),
        "table    " + _cards_text(scene.table, True),
        scene.bottom.summary,
        "  hand   " + _cards_text(scene.bottom.hand, scene.bottom.hand_visible),
    ]
    if scene.pending is not None:
        picked = _cards_text(scene.picked, True) if scene.picked else "nothing yet"
        lines.append(f"  playing {card_name(scene.pending)}, picked: {picked}")
    lines += [scene.last_play, scene.status]
    return "\n".join(lines)


# Image ------------------------------------------------------------------------------------

WIDTH, HEIGHT = 720, 420
CARD_W, CARD_H, GAP, MARGIN = 40, 58, 6, 12
FELT = (22, 96, 54)
TEXT = (240, 240, 230)
HIGHLIGHT = (255, 210, 60)
CARD_FACE = (250, 248, 240)
CARD_BACK = (40, 60, 130)
SUIT_COLOURS = ((196, 150, 0), (190, 40, 40), (40, 80, 170), (30, 120, 50))  # D C S B


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def _draw_card(draw: ImageDraw.ImageDraw, x: int, y: int, card: int | None, edge: Any) -> None:
    box = (x, y, x + CARD_W, y + CARD_H)
    if card is None:
        draw.rounded_rectangle(box, radius=5, fill=CARD_BACK, outline=(200, 200, 220))
        draw.rectangle((x + 6, y + 6, x + CARD_W - 6, y + CARD_H - 6), outline=(120, 140, 200))
        return
    draw.rounded_rectangle(box, radius=5, fill=CARD_FACE, outline=edge, width=3 if edge else 1)
    name = card_name(card)
    colour = SUIT_COLOURS[card // 10]
    draw.text((x + CARD_W / 2, y + 20), name[0], fill=colour, font=_font(20), anchor="mm")
    draw.text((x + CARD_W / 2, y + 43), name[1], fill=colour, font=_font(14), anchor="mm")


def _draw_row(
    draw: ImageDraw.ImageDraw,
    y: int,
    cards: tuple[int, ...],
    visible: bool,
    marked: tuple[int, ...] = (),
    rows: int = 1,
) -> None:
    per_row = (WIDTH - 2 * MARGIN) // (CARD_W + GAP)
    for i, card in enumerate(cards[: per_row * rows]):
        x = MARGIN + (i % per_row) * (CARD_W + GAP)
        edge = HIGHLIGHT if card in marked else (80, 80, 80)
        _draw_card(draw, x, y + (i // per_row) * (CARD_H + GAP), card if visible else None, edge)


def to_rgb_array(scene: Scene) -> np.ndarray:
    """The scene as an ``(HEIGHT, WIDTH, 3)`` uint8 image."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(image)
    text = _font(14)
    draw.text((MARGIN, 8), scene.header, fill=TEXT, font=_font(16))
    draw.text((MARGIN, 32), scene.top.summary, fill=TEXT, font=text)
    _draw_row(draw, 52, scene.top.hand, scene.top.hand_visible)
    draw.text((MARGIN, 118), "table", fill=TEXT, font=text)
    _draw_row(draw, 138, scene.table, True, marked=scene.picked, rows=2)
    draw.text((MARGIN, 268), scene.bottom.summary, fill=TEXT, font=text)
    _draw_row(draw, 288, scene.bottom.hand, scene.bottom.hand_visible)
    if scene.pending is not None:
        x = MARGIN + 6 * (CARD_W + GAP)
        draw.text((x, 296), "playing", fill=HIGHLIGHT, font=text, anchor="rm")
        _draw_card(draw, x + GAP, 288, scene.pending, HIGHLIGHT)
    draw.text((MARGIN, 362), scene.last_play, fill=TEXT, font=text)
    draw.text((MARGIN, 386), scene.status, fill=HIGHLIGHT, font=text)
    return np.array(image, dtype=np.uint8)
