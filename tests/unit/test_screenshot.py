"""Pane screenshots: ANSI screens become cells of the right colours and widths, then a PNG of the grid."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from worker.tmux.parse import parse_screen
from worker.tmux.screenshot import PADDING, cells, fonts, render_png

GREEN_ON_RED = "\x1b[32;41m"


def test_colours_attributes_and_reverse() -> None:
    row = cells(f"{GREEN_ON_RED}ab\x1b[0m c \x1b[1;7mR\x1b[0m \x1b[38;2;1;2;3mT\x1b[0m", 10, 1)[0]
    assert [c.text for c in row] == ["a", "b", " ", "c", " ", "R", " ", "T", " ", " "]
    default_fg, default_bg = row[2].fg, row[2].bg
    assert row[0].fg != default_fg and row[0].bg != default_bg and row[0].fg != row[0].bg
    assert (row[5].fg, row[5].bg, row[5].bold) == (default_bg, default_fg, True)  # reverse swaps
    assert row[7].fg == (1, 2, 3)


@pytest.mark.parametrize(
    ("line", "texts"),
    [
        ("漢字x", ["漢", "", "字", "", "x", " "]),
        ("🤖ok", ["🤖", "", "o", "k", " ", " "]),
        ("e\u0301x", ["e\u0301", "x", " ", " ", " ", " "]),  # a combining accent stays on its letter
        ("abcde漢", ["a", "b", "c", "d", "e", " "]),  # a wide character that does not fit the last column
        ("abcdefghij", ["a", "b", "c", "d", "e", "f"]),  # cut at the pane's width
        ("\t⎿ x", [" ", "└", " ", "x", " ", " "]),  # Claude Code's ⎿ is drawn as the font's └
    ],
    ids=["cjk", "emoji", "combining", "wide-at-edge", "too-long", "substitute"],
)
def test_every_row_has_the_panes_width_in_cells(line: str, texts: list[str]) -> None:
    assert [c.text for c in cells(line, 6, 1)[0]] == texts


def test_missing_rows_are_blank_and_extra_rows_cut() -> None:
    grid = cells("one\ntwo\nthree\nfour", 5, 3)
    assert ["".join(c.text for c in row).rstrip() for row in grid] == ["one", "two", "three"]
    assert len(cells("", 4, 2)) == 2


def test_png_has_the_grid_size() -> None:
    f = fonts()
    image = Image.open(io.BytesIO(render_png(f"{GREEN_ON_RED}hello\x1b[0m 🤖 漢字\n", 80, 24)))
    assert image.format == "PNG"
    rgb = image.convert("RGB")
    assert rgb.size == (80 * f.cell_width + 2 * PADDING, 24 * f.cell_height + 2 * PADDING)
    left, top = PADDING + 1, PADDING + 1  # inside the first cell: its red background
    red = rgb.getpixel((left, top))
    assert isinstance(red, tuple) and red[0] > 150 and red[1] < 100


def test_garbage_escape_sequences_do_not_crash() -> None:
    assert render_png("\x1b[999;;mX\x1b[38;5;300mY\x1b]0;title\x07\x1b[?25lZ\x00\x7f", 8, 2).startswith(
        b"\x89PNG"
    )


@pytest.mark.parametrize(
    ("output", "expected"),
    [("80 24\n\x1b[1mhi\x1b[0m\n", (80, 24, "\x1b[1mhi\x1b[0m\n")), ("200 50\n", (200, 50, ""))],
)
def test_parse_screen(output: str, expected: tuple[int, int, str]) -> None:
    assert parse_screen(output) == expected


def _drawn(text: str) -> bytes:
    """The pixels of a one-cell screen holding `text`."""
    return Image.open(io.BytesIO(render_png(text, 2, 1))).convert("L").tobytes()


@pytest.mark.parametrize("emoji", ["🔐", "⏳", "✅"])
def test_a_glyph_the_monospace_font_lacks_is_drawn_from_the_fallback_font(emoji: str) -> None:
    """The bot's emoji are not a box: a character no font has is, and the emoji are drawn otherwise. (The
    test command installs fonts-symbola; with DejaVu alone the two would be the same box.)"""
    missing = _drawn("\U000f0001")
    assert _drawn(emoji) != missing
    assert _drawn(emoji) != _drawn(" ")
