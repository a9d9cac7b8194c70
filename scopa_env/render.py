"""Pictures of a Scopa position: plain text (``ansi``) and an RGB image (``rgb_array``).

Both are drawn from one scene, so they always show the same thing: a ``Scene`` for two players
(one seat above the table, one below), a ``TableScene`` for every table of more seats (Scopa for
3, 4 or 6, Scopone): each side's pile, the table, then every seat's hand in seat order. The
environment builds the scene of its position (what its ``show_hands`` option lets the picture
show); this module only draws it. Images use Pillow's
built-in font and plain shapes: nothing is downloaded or read from disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from scopa_env.cards import card_name, cards_of
from scopa_env.tables import agent_name

if TYPE_CHECKING:
    from PIL import Image, ImageDraw, ImageFont


def pile_summary(captured: int, coins: int, settebello: bool, scope: int) -> str:
    """What a capture pile holds that scores, e.g. ``"captured 12 cards, 4 coins, 7D  scope 1"``."""
    bello = ", 7D" if settebello else ""
    return f"captured {captured} cards, {coins} coins{bello}  scope {scope}"


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
        piles = pile_summary(self.captured, self.coins, self.settebello, self.scope)
        return f"{self.name} ({self.role})  match {self.match_points}  {piles}"


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


def describe_play(play: tuple[int, int, int, bool] | None) -> str:
    """A play in words, e.g. ``"player_1 played 5B and took 5C  SCOPA!"``."""
    if play is None:
        return "-"
    player, card, capture, scopa = play
    if not capture:
        return f"{agent_name(player)} laid {card_name(card)}"
    taken = " ".join(card_name(c) for c in cards_of(capture))
    return f"{agent_name(player)} played {card_name(card)} and took {taken}" + (
        "  SCOPA!" if scopa else ""
    )


@dataclass(frozen=True)
class TableScene:
    """Everything drawn for a table of more than two seats: a line per side, the table, a row
    per seat."""

    header: str
    teams: tuple[str, ...]  # one line per side
    table: tuple[int, ...]
    seats: tuple[tuple[str, tuple[int, ...], bool], ...]  # (label, hand, face up) by seat
    to_move: int | None
    pending: int | None
    picked: tuple[int, ...]
    last_play: str
    status: str


#: The name ``scopone_v0`` first drew its scenes with.
ScoponeScene = TableScene


def _cards_text(cards: tuple[int, ...], visible: bool) -> str:
    if not cards:
        return "-"
    return " ".join(card_name(c) if visible else "??" for c in cards)


def _ansi_end(scene: Scene | TableScene, lines: list[str]) -> str:
    """The lines of a scene, then the capture being chosen, the last play and the status."""
    if scene.pending is not None:
        picked = _cards_text(scene.picked, True) if scene.picked else "nothing yet"
        lines.append(f"  playing {card_name(scene.pending)}, picked: {picked}")
    lines += [scene.last_play, scene.status]
    return "\n".join(lines)


def to_ansi(scene: Scene | TableScene) -> str:
    """The scene as lines of plain text."""
    if isinstance(scene, TableScene):
        return _table_ansi(scene)
    lines = [
        scene.header,
        scene.top.summary,
        "  hand   " + _cards_text(scene.top.hand, scene.top.hand_visible),
        "table    " + _cards_text(scene.table, True),
        scene.bottom.summary,
        "  hand   " + _cards_text(scene.bottom.hand, scene.bottom.hand_visible),
    ]
    return _ansi_end(scene, lines)


def _table_ansi(scene: TableScene) -> str:
    lines = [scene.header, *scene.teams, "table    " + _cards_text(scene.table, True)]
    width = max(len(label) for label, _, _ in scene.seats)
    for label, hand, visible in scene.seats:
        lines.append(f"{label:<{width}}  hand   {_cards_text(hand, visible)}")
    return _ansi_end(scene, lines)


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


def _canvas(height: int, header: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """A felt-green picture with the header line drawn."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (WIDTH, height), FELT)
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, 8), header, fill=TEXT, font=_font(16))
    return image, draw


def to_rgb_array(scene: Scene | TableScene) -> np.ndarray:
    """The scene as an ``(HEIGHT, WIDTH, 3)`` uint8 image; a ``TableScene`` is
    ``table_height(sides, seats)`` high (``SCOPONE_HEIGHT`` for Scopone)."""
    if isinstance(scene, TableScene):
        return _table_rgb_array(scene)
    image, draw = _canvas(HEIGHT, scene.header)
    text = _font(14)
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


SEAT_ROW = 84
SIDE_LINE = 20


def table_height(sides: int, seats: int) -> int:
    """The height of a ``TableScene`` picture: the header, a line per side, the table, a row
    per seat and the last two lines."""
    return 32 + SIDE_LINE * sides + 154 + SEAT_ROW * seats + 98


SCOPONE_HEIGHT = table_height(2, 4)


def _table_rgb_array(scene: TableScene) -> np.ndarray:
    image, draw = _canvas(table_height(len(scene.teams), len(scene.seats)), scene.header)
    text = _font(14)
    y = 32
    for line in scene.teams:
        draw.text((MARGIN, y), line, fill=TEXT, font=text)
        y += SIDE_LINE
    draw.text((MARGIN, y + 4), "table", fill=TEXT, font=text)
    _draw_row(draw, y + 24, scene.table, True, marked=scene.picked, rows=2)
    y += 154
    for seat, (label, hand, visible) in enumerate(scene.seats):
        colour = HIGHLIGHT if seat == scene.to_move else TEXT
        draw.text((MARGIN, y), label, fill=colour, font=text)
        _draw_row(draw, y + 18, hand, visible)
        if seat == scene.to_move and scene.pending is not None:
            x = WIDTH - MARGIN - CARD_W
            draw.text((x - GAP, y + 26), "playing", fill=HIGHLIGHT, font=text, anchor="rm")
            _draw_card(draw, x, y + 18, scene.pending, HIGHLIGHT)
        y += SEAT_ROW
    draw.text((MARGIN, y + 4), scene.last_play, fill=TEXT, font=text)
    draw.text((MARGIN, y + 28), scene.status, fill=HIGHLIGHT, font=text)
    return np.array(image, dtype=np.uint8)
