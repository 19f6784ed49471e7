"""One file's change as a picture a phone can read: Pygments highlights the code, each line gets its old and
new number, long lines wrap at a narrow width, and the screenshot painter (worker.tmux.screenshot) turns
the rows into a PNG. Pure: hunks in, PNG bytes out.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.color import ColorSystem
from rich.style import Style
from rich.syntax import PygmentsSyntaxTheme

from worker.review.diff_files import DiffLine, FileDiff, Hunk
from worker.tmux.screenshot import render_png

WIDTH = 60  # columns: what a phone shows at a readable size
MAX_LINES = 400  # diff lines in one file's picture; the rest is counted, not drawn
TAB = 4
THEME = PygmentsSyntaxTheme("monokai")
ADDED, REMOVED = Style(bgcolor="#1f3d23"), Style(bgcolor="#4a1f24")
GUTTER, HEADER = Style(color="#75715e"), Style(color="#66d9ef", italic=True)
Segment = tuple[str, Style]


@dataclass(frozen=True)
class Picture:
    png: bytes
    first: int  # the first and last line number shown (new side; old side for a deleted file)
    last: int
    omitted: int  # diff lines past MAX_LINES, not drawn


def wrap(segments: list[Segment], width: int) -> list[list[Segment]]:
    """`segments` cut into rows of at most `width` cells; a wide character never straddles two rows."""
    rows: list[list[Segment]] = [[]]
    used = 0
    for text, style in segments:
        for char in text:
            size = cell_len(char)
            if used + size > width and used > 0:
                rows.append([])
                used = 0
            row = rows[-1]
            if row and row[-1][1] is style:
                row[-1] = (row[-1][0] + char, style)
            else:
                row.append((char, style))
            used += size
    return rows


def lexer_for(path: str) -> Lexer:
    """The lexer for `path`'s kind of file; plain text when Pygments knows none."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix
    return _lexer("x" + suffix if suffix else name)


@lru_cache(maxsize=256)
def _lexer(name: str) -> Lexer:
    """Looked up once per kind of file: finding a lexer by name scans every lexer Pygments has."""
    found: Lexer
    try:
        found = get_lexer_for_filename(name, stripnl=False, ensurenl=True)
    except ClassNotFound:
        found = TextLexer(stripnl=False, ensurenl=True)
    return found


def highlighted(hunk: Hunk, lexer: Lexer) -> list[list[Segment]]:
    """Each line of `hunk` as styled segments; the hunk is lexed whole so strings and comments that span
    lines keep their colour."""
    source = "\n".join(_printable(line.text) for line in hunk.lines) + "\n"
    lines: list[list[Segment]] = [[]]
    for ttype, value in lexer.get_tokens(source):
        style = _style(ttype)
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if piece:
                lines[-1].append((piece, style))
    return lines[: len(hunk.lines)] + [[] for _ in range(len(hunk.lines) - len(lines))]


def _style(ttype: _TokenType) -> Style:
    style = THEME.get_style_for_token(ttype)
    return Style(color=style.color, bold=style.bold, italic=style.italic)


def _printable(text: str) -> str:
    text = text.expandtabs(TAB)
    return "".join(char if char.isprintable() else "\ufffd" for char in text)


def number_width(diff: FileDiff) -> int:
    biggest = max((n for h in diff.hunks for line in h.lines for n in (line.old, line.new) if n), default=1)
    return max(3, len(str(biggest)))


def file_rows(
    diff: FileDiff, width: int = WIDTH, max_lines: int = MAX_LINES
) -> tuple[list[list[Segment]], Picture]:
    """The rows of `diff`'s picture and its shown line range (the PNG left empty)."""
    lexer, digits = lexer_for(diff.path), number_width(diff)
    code_width = max(8, width - 2 * digits - 4)
    rows: list[list[Segment]] = []
    drawn, shown = 0, []
    total = sum(len(h.lines) for h in diff.hunks)
    for hunk in diff.hunks:
        if drawn >= max_lines:
            break
        rows.append([(_hunk_title(hunk, width), HEADER)])
        for line, segments in zip(hunk.lines, highlighted(hunk, lexer), strict=True):
            if drawn >= max_lines:
                break
            drawn += 1
            rows += _line_rows(line, segments, digits, code_width)
            number = line.old if diff.status == "deleted" else line.new
            shown += [number] if number else []
    if total > drawn:
        rows.append([(f"… {total - drawn} more lines", HEADER)])
    return rows, Picture(b"", min(shown, default=0), max(shown, default=0), total - drawn)


def _hunk_title(hunk: Hunk, width: int) -> str:
    first = next((line for line in hunk.lines if line.old or line.new), None)
    at = f"@@ -{first.old or '-'} +{first.new or '-'} @@" if first else "@@"
    return f"{at} {_printable(hunk.header)}"[:width]


def _line_rows(line: DiffLine, segments: list[Segment], digits: int, code_width: int) -> list[list[Segment]]:
    background = ADDED if line.kind == "+" else REMOVED if line.kind == "-" else Style()
    old = str(line.old) if line.old else ""
    new = str(line.new) if line.new else ""
    gutter = f"{old:>{digits}} {new:>{digits}} {line.kind} "
    blank = " " * len(gutter)
    pieces = [(text, background + style) for text, style in segments] or [("", background)]
    out = []
    for i, row in enumerate(wrap(pieces, code_width)):
        used = sum(cell_len(text) for text, _ in row)
        padding = (" " * (code_width - used), background)
        out.append([(gutter if i == 0 else blank, background + GUTTER), *row, padding])
    return out


def ansi(rows: list[list[Segment]]) -> str:
    """The rows as terminal text (true colour escapes), for the screenshot painter."""
    return "\n".join(
        "".join(style.render(text, color_system=ColorSystem.TRUECOLOR) for text, style in row) for row in rows
    )


def render_file(diff: FileDiff, width: int = WIDTH, max_lines: int = MAX_LINES) -> Picture:
    """`diff` (a text file with hunks) as a PNG `width` columns wide."""
    rows, shown = file_rows(diff, width, max_lines)
    png = render_png(ansi(rows), width, len(rows))
    return Picture(png, shown.first, shown.last, shown.omitted)
