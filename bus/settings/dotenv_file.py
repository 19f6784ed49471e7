"""The repository's `.env`, parsed exactly as python-dotenv's `dotenv_values` parses it, without its imports.

The one parser of `.env` (the hooks, `ib notify`, the settings class, `ib config`), after
`bus.settings.settings_file` let the file be read. python-dotenv loads `re`, `typing` and `logging`: too slow
for the hooks. This is the same grammar as its regular expressions, written out: `export`, quoted keys, single
and double quotes with their escapes, values over several lines, inline comments, and `${VAR}` /
`${VAR:-default}` expansion. Pure; tests compare it with python-dotenv."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_DOUBLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_SINGLE_ESCAPES = {"\\": "\\", "'": "'"}


class _Bad(Exception):
    """The line does not parse; python-dotenv skips it."""


class _Reader:
    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def skip_blank(self, newlines: bool) -> str:
        """Skip whitespace (with or without line ends); what was skipped."""
        start, text = self.pos, self.text
        while (
            self.pos < len(text) and text[self.pos].isspace() and (newlines or text[self.pos] not in "\r\n")
        ):
            self.pos += 1
        return text[start : self.pos]

    def rest_of_line(self) -> str:
        start, text = self.pos, self.text
        while self.pos < len(text) and text[self.pos] not in "\r\n":
            self.pos += 1
        return text[start : self.pos]


def parse(text: str) -> list[tuple[str, str | None]]:
    """(key, value) of every binding in `text`, in order, before expansion; None for a key without `=`."""
    reader = _Reader(text.removeprefix("\ufeff"))
    found: list[tuple[str, str | None]] = []
    while reader.pos < len(reader.text):
        try:
            binding = _binding(reader)
        except _Bad:
            reader.rest_of_line()
            if reader.peek() in ("\r", "\n"):
                reader.pos += 1
            continue
        if binding is not None:
            found.append(binding)
    return found


def _binding(reader: _Reader) -> tuple[str, str | None] | None:
    reader.skip_blank(newlines=True)
    if reader.pos >= len(reader.text):
        return None
    _export(reader)
    key = _key(reader)
    reader.skip_blank(newlines=False)
    value: str | None = None
    if reader.peek() == "=":
        reader.pos += 1
        spaced = reader.skip_blank(newlines=False)
        value = "" if spaced and reader.peek() == "#" else _value(reader)
    _comment(reader)
    reader.skip_blank(newlines=False)
    end = reader.peek()
    if end == "\r" and reader.text[reader.pos + 1 : reader.pos + 2] == "\n":
        reader.pos += 2
    elif end in ("\r", "\n"):
        reader.pos += 1
    elif end:
        raise _Bad
    return None if key is None else (key, value)


def _export(reader: _Reader) -> None:
    start = reader.pos
    if reader.text.startswith("export", start):
        reader.pos += len("export")
        if not reader.skip_blank(newlines=False):
            reader.pos = start


def _key(reader: _Reader) -> str | None:
    first = reader.peek()
    if first == "#":
        return None
    text, start = reader.text, reader.pos
    if first == "'":
        close = text.find("'", start + 1)
        if close <= start + 1:
            raise _Bad
        reader.pos = close + 1
        return text[start + 1 : close]
    end = start
    while end < len(text) and text[end] not in "=#" and not text[end].isspace():
        end += 1
    if end == start:
        raise _Bad
    reader.pos = end
    return text[start:end]


def _value(reader: _Reader) -> str:
    first = reader.peek()
    if first in ("'", '"'):
        return _quoted(reader, first)
    if first in ("", "\r", "\n"):
        return ""
    return _without_comment(reader.rest_of_line()).rstrip()


def _quoted(reader: _Reader, quote: str) -> str:
    text, i = reader.text, reader.pos + 1
    while i < len(text) and text[i] != quote:
        if text[i] == "\\":
            if i + 1 >= len(text):
                raise _Bad
            i += 1
        i += 1
    if i >= len(text):
        raise _Bad
    raw = text[reader.pos + 1 : i]
    reader.pos = i + 1
    return _unescape(raw, _DOUBLE_ESCAPES if quote == '"' else _SINGLE_ESCAPES)


def _unescape(raw: str, escapes: Mapping[str, str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        pair = raw[i + 1 : i + 2]
        if raw[i] == "\\" and pair in escapes:
            out.append(escapes[pair])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


def _without_comment(value: str) -> str:
    """An unquoted value up to its first whitespace followed by `#`."""
    i = 0
    while i < len(value):
        if not value[i].isspace():
            i += 1
            continue
        run = i
        while i < len(value) and value[i].isspace():
            i += 1
        if i < len(value) and value[i] == "#":
            return value[:run]
    return value


def _comment(reader: _Reader) -> None:
    start = reader.pos
    reader.skip_blank(newlines=False)
    if reader.peek() == "#":
        reader.rest_of_line()
    else:
        reader.pos = start


def expand(bindings: list[tuple[str, str | None]], environ: Mapping[str, str]) -> dict[str, str | None]:
    """`${VAR}` and `${VAR:-default}` replaced, in order: by the file's earlier values, then `environ`."""
    values: dict[str, str | None] = {}
    for key, value in bindings:
        if value is None:
            values[key] = None
            continue
        known: dict[str, str | None] = {**environ, **values}
        values[key] = _expanded(value, known)
    return values


def _expanded(value: str, known: Mapping[str, str | None]) -> str:
    out: list[str] = []
    i = 0
    while (start := value.find("${", i)) >= 0:
        found = _variable(value, start)
        if found is None:
            out.append(value[i : start + 1])
            i = start + 1
            continue
        name, default, end = found
        out.append(value[i:start])
        out.append(known.get(name, default or "") or "")
        i = end
    out.append(value[i:])
    return "".join(out)


def _variable(value: str, start: int) -> tuple[str, str | None, int] | None:
    """(name, default, end) of the `${...}` at `start`, or None when it is not one."""
    i = start + 2
    while i < len(value) and value[i] not in "}:":
        i += 1
    name = value[start + 2 : i]
    if value[i : i + 1] == "}":
        return name, None, i + 1
    if value[i : i + 2] != ":-":
        return None
    close = value.find("}", i + 2)
    if close < 0:
        return None
    return name, value[i + 2 : close], close + 1


def read(text: str, environ: Mapping[str, str]) -> dict[str, str | None]:
    """What `dotenv_values` returns for a file holding `text` (read with universal newlines)."""
    return expand(parse(text), environ)
