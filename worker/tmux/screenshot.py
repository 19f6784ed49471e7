"""A terminal screen as a PNG: `tmux capture-pane -e` text (ANSI colours, attributes) painted cell by cell.

rich reads the escape sequences (colours 16 / 256 / true colour, bold, dim, italic, underline, reverse) and
says how many cells a character takes; Pillow paints each cell on a fixed grid with a monospace font, so a
wide character (CJK, emoji) takes two cells and never shifts a line. A glyph the monospace font lacks (the
emoji the bot and the agents print: 🔐 ⏳ ✅) is drawn from Symbola when it is installed (Debian's
fonts-symbola), else it is a box.
Pure: text in, PNG bytes out (no tmux, no Redis).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont
from rich.ansi import AnsiDecoder
from rich.cells import cell_len
from rich.color import Color
from rich.console import Console
from rich.style import Style
from rich.terminal_theme import MONOKAI, TerminalTheme

FONT_SIZE = 14
PADDING = 8
PALETTE = 128
MAX_CELLS = 500 * 200  # a pane larger than this is cut to it: a PNG must stay a message, not a poster
FONT_DIRS = (
    "/usr/share/fonts/truetype/dejavu",  # Debian / Ubuntu: fonts-dejavu-core
    "/usr/share/fonts/truetype/ancient-scripts",  # Debian / Ubuntu: fonts-symbola
    "/usr/share/fonts/dejavu",
    "/usr/share/fonts/TTF",
    "/Library/Fonts",
)
REGULAR, BOLD = "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"
FALLBACK = "Symbola_hint.ttf"  # monochrome outlines: painted through the same mask as every glyph
NOT_A_GLYPH = "\U000f0000"  # a private-use character no font here has: what a missing glyph looks like
# Glyphs Claude Code draws that DejaVu Sans Mono lacks, drawn as the nearest one it has.
SUBSTITUTES = {"⎿": "└", "⏺": "●", "⏵": "▸", "⏸": "‖"}
RGB = tuple[int, int, int]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@dataclass(frozen=True)
class Fonts:
    regular: Font
    bold: Font
    fallback: Font | None  # for the glyphs `regular` lacks
    cell_width: int
    cell_height: int
    baseline: int


@cache
def fonts(size: int = FONT_SIZE, font_file: str | None = None) -> Fonts:
    """DejaVu Sans Mono (or `font_file`); without it Pillow's own font, still on the same grid."""
    regular_path = Path(font_file) if font_file else _find(REGULAR)
    bold_path = _find(BOLD) if not font_file else None
    if regular_path is None:
        regular: Font = ImageFont.load_default(size)
    else:
        regular = ImageFont.truetype(str(regular_path), size)
    bold = ImageFont.truetype(str(bold_path), size) if bold_path is not None else regular
    fallback_path = _find(FALLBACK) if not font_file else None
    fallback = ImageFont.truetype(str(fallback_path), size) if fallback_path is not None else None
    ascent, descent = regular.getmetrics() if isinstance(regular, ImageFont.FreeTypeFont) else (size, 2)
    width = max(1, round(regular.getlength("M")))
    return Fonts(regular, bold, fallback, width, ascent + descent + 1, ascent)


def _find(name: str) -> Path | None:
    for folder in FONT_DIRS:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


@dataclass(frozen=True)
class Cell:
    text: str  # one character plus any combining marks; "" for the right half of a wide character
    fg: RGB
    bg: RGB
    bold: bool
    underline: bool


def cells(ansi: str, width: int, height: int, theme: TerminalTheme = MONOKAI) -> list[list[Cell]]:
    """The screen as rows of cells, `width` × `height`: text beyond is cut, missing cells are blank."""
    blank = Cell(" ", _rgb(None, theme, True), _rgb(None, theme, False), False, False)
    console = Console(width=max(width, 1), file=io.StringIO(), color_system="truecolor", legacy_windows=False)
    rows: list[list[Cell]] = []
    for line in list(AnsiDecoder().decode(ansi))[:height]:
        row: list[Cell] = []
        for segment in line.render(console, end=""):
            for char in segment.text:
                _put(row, char, segment.style, theme, width)
        rows.append(row[:width] + [blank] * (width - len(row)))
    rows += [[blank] * width for _ in range(height - len(rows))]
    return rows


def _put(row: list[Cell], char: str, style: Style | None, theme: TerminalTheme, width: int) -> None:
    if char in "\t\r\n":
        char = " "
    size = cell_len(char)
    if size == 0:  # a combining mark, zero-width joiner or variation selector: joins the previous cell
        if row and row[-1].text:
            last = row[-1]
            row[-1] = Cell(last.text + char, last.fg, last.bg, last.bold, last.underline)
        return
    char = SUBSTITUTES.get(char, char)
    fg, bg, bold, underline = _colours(style, theme)
    if size == 2 and len(row) + 2 > width:
        char, size = " ", 1  # a wide character that does not fit the last column
    row.append(Cell(char, fg, bg, bold, underline))
    if size == 2:
        row.append(Cell("", fg, bg, bold, underline))


def _colours(style: Style | None, theme: TerminalTheme) -> tuple[RGB, RGB, bool, bool]:
    if style is None:
        return _rgb(None, theme, True), _rgb(None, theme, False), False, False
    fg, bg = _rgb(style.color, theme, True), _rgb(style.bgcolor, theme, False)
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = _blend(fg, bg)
    return fg, bg, bool(style.bold), bool(style.underline)


def _rgb(color: Color | None, theme: TerminalTheme, foreground: bool) -> RGB:
    if color is None or color.is_default:
        triplet = theme.foreground_color if foreground else theme.background_color
    else:
        triplet = color.get_truecolor(theme, foreground)
    return (triplet.red, triplet.green, triplet.blue)


def _blend(a: RGB, b: RGB) -> RGB:
    return (a[0] + b[0]) // 2, (a[1] + b[1]) // 2, (a[2] + b[2]) // 2


def render_png(ansi: str, width: int, height: int, font_file: str | None = None) -> bytes:
    """The screen `ansi` (as `tmux capture-pane -e -p` prints it) of a `width` × `height` pane, as a PNG."""
    width, height = max(1, width), max(1, height)
    if width * height > MAX_CELLS:
        height = max(1, MAX_CELLS // width)
    f = fonts(FONT_SIZE, font_file)
    grid = cells(ansi, width, height)
    size = (width * f.cell_width + 2 * PADDING, height * f.cell_height + 2 * PADDING)
    image = Image.new("RGB", size, _rgb(None, MONOKAI, False))
    draw = ImageDraw.Draw(image)
    for y, row in enumerate(grid):
        top = PADDING + y * f.cell_height
        _paint_row(image, draw, row, top, f)
    out = io.BytesIO()
    # A screen has few colours besides the anti-aliasing: a 128-colour palette looks the same and makes the
    # PNG about four times smaller and quicker to write than RGB.
    image.quantize(PALETTE, method=Image.Quantize.FASTOCTREE).save(out, format="PNG")
    return out.getvalue()


@lru_cache(maxsize=4096)
def _glyph(f: Fonts, text: str, bold: bool) -> Image.Image:
    """The coverage mask of one cell's text, two cells wide (a wide glyph's room), drawn once per glyph:
    from the fallback font when the monospace one draws it as it draws a character it lacks."""
    mask = _mask(f, text, f.bold if bold else f.regular)
    if f.fallback is not None and text[0] != NOT_A_GLYPH and _same(mask, _missing(f, bold)):
        return _mask(f, text, f.fallback)
    return mask


@lru_cache(maxsize=2)
def _missing(f: Fonts, bold: bool) -> Image.Image:
    return _mask(f, NOT_A_GLYPH, f.bold if bold else f.regular)


def _mask(f: Fonts, text: str, font: Font) -> Image.Image:
    mask = Image.new("L", (f.cell_width * 2, f.cell_height), 0)
    ImageDraw.Draw(mask).text((0, f.baseline), text, font=font, fill=255, anchor="ls")
    return mask


def _same(a: Image.Image, b: Image.Image) -> bool:
    return a.tobytes() == b.tobytes()


def _paint_row(image: Image.Image, draw: ImageDraw.ImageDraw, row: list[Cell], top: int, f: Fonts) -> None:
    background = _rgb(None, MONOKAI, False)
    for x, cell in enumerate(row):
        left = PADDING + x * f.cell_width
        span = 2 if x + 1 < len(row) and row[x + 1].text == "" and cell.text else 1
        if cell.bg != background:
            draw.rectangle([left, top, left + f.cell_width * span - 1, top + f.cell_height - 1], fill=cell.bg)
        if cell.text.strip():
            image.paste(cell.fg, (left, top), _glyph(f, cell.text, cell.bold))
        if cell.underline and cell.text:
            line_y = top + f.cell_height - 2
            draw.line([left, line_y, left + f.cell_width * span - 1, line_y], fill=cell.fg)
