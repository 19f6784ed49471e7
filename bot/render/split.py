"""Fitting text into Telegram messages: splitting long HTML on line boundaries, and streaming output.

Pure. Lengths are counted the way Telegram counts them, in UTF-16 code units, on the HTML as sent
(which is never shorter than what Telegram shows after parsing the markup).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MESSAGE_LIMIT = 4096
OUTPUT_SOFT_LIMIT = 3800
_MIN_LIMIT = 8

_ATOM = re.compile(r"<[^<>]*>|&#?[A-Za-z0-9]+;|.", re.DOTALL)
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")
_FENCE = "```"


def telegram_length(text: str) -> int:
    """Length as Telegram measures it: UTF-16 code units (an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class _Wrap:
    """Markup open at some point: a tag such as <pre> or <b>, or a markdown fence."""

    name: str
    opener: str
    closer: str


_Stack = tuple[_Wrap, ...]


def _openers(stack: _Stack) -> str:
    return "".join(w.opener for w in stack)


def _closers(stack: _Stack) -> str:
    return "".join(w.closer for w in reversed(stack))


def _apply_atom(stack: _Stack, atom: str) -> _Stack:
    if not atom.startswith("<") or len(atom) < 3:
        return stack
    m = _TAG_NAME.match(atom)
    if m is None:
        return stack
    name = m.group(1).lower()
    if not atom.startswith("</"):
        return (*stack, _Wrap(name, atom, f"</{name}>"))
    for i in range(len(stack) - 1, -1, -1):
        if stack[i].name == name:
            return stack[:i] + stack[i + 1 :]
    return stack


def _apply_fence(stack: _Stack, line: str) -> _Stack:
    stripped = line.strip()
    if not stripped.startswith(_FENCE):
        return stack
    for i in range(len(stack) - 1, -1, -1):
        if stack[i].name == _FENCE:
            return stack[:i] + stack[i + 1 :]
    language = stripped[len(_FENCE) :].strip()
    return (*stack, _Wrap(_FENCE, f"{_FENCE}{language}\n", f"\n{_FENCE}"))


@dataclass(frozen=True)
class _Line:
    text: str
    before: _Stack
    after: _Stack


def _lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    stack: _Stack = ()
    for raw in text.split("\n"):
        after = stack
        for atom in _ATOM.findall(raw):
            after = _apply_atom(after, atom)
        after = _apply_fence(after, raw)
        out.append(_Line(raw, stack, after))
        stack = after
    return out


def _units(lines: list[_Line]) -> list[list[_Line]]:
    """Runs of lines that belong together: a boundary is a line end where no markup is open."""
    units: list[list[_Line]] = []
    current: list[_Line] = []
    for line in lines:
        current.append(line)
        if not line.after:
            units.append(current)
            current = []
    if current:
        units.append(current)
    return units


def _break_point(chunk: list[tuple[str, _Stack]]) -> int:
    """Where to cut an over-long line: after the last space in its second half, else at the end."""
    for i in range(len(chunk) - 1, len(chunk) // 2, -1):
        if chunk[i][0] == " ":
            return i + 1
    return len(chunk)


class _Packer:
    """Fills parts greedily; markup open at a cut is closed there and reopened in the next part."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.opened: _Stack = ()
        self.lines: list[str] = []
        self.stack: _Stack = ()

    def _fits(self, extra: list[str], end: _Stack) -> bool:
        body = _openers(self.opened) + "\n".join(self.lines + extra) + _closers(end)
        return telegram_length(body) <= self.limit

    def _flush(self, *, final: bool = False) -> None:
        lines = list(self.lines)
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            tail = "" if final else _closers(self.stack)
            self.parts.append(_openers(self.opened) + "\n".join(lines) + tail)
        self.opened = self.stack
        self.lines = []

    def add_unit(self, unit: list[_Line]) -> None:
        texts = [line.text for line in unit]
        if not self._fits(texts, unit[-1].after):
            if self.lines:
                self._flush()
            if not self._fits(texts, unit[-1].after):
                for line in unit:
                    self._add_line(line)
                return
        self.lines.extend(texts)
        self.stack = unit[-1].after

    def _add_line(self, line: _Line) -> None:
        if not self._fits([line.text], line.after):
            if self.lines:
                self._flush()
            if not self._fits([line.text], line.after):
                self._hard_split(line)
                return
        self.lines.append(line.text)
        self.stack = line.after

    def _hard_split(self, line: _Line) -> None:
        pending = _ATOM.findall(line.text)
        chunk: list[tuple[str, _Stack]] = []
        i = 0
        while i < len(pending):
            atom = pending[i]
            end = _apply_atom(chunk[-1][1] if chunk else self.opened, atom)
            body = _openers(self.opened) + "".join(a for a, _ in chunk) + atom + _closers(end)
            if telegram_length(body) <= self.limit:
                chunk.append((atom, end))
                i += 1
                continue
            if not chunk:
                raise ValueError(f"limit {self.limit} is too small for the markup open around {atom!r}")
            cut = _break_point(chunk)
            head, tail = chunk[:cut], chunk[cut:]
            self.parts.append(_openers(self.opened) + "".join(a for a, _ in head) + _closers(head[-1][1]))
            self.opened = head[-1][1]
            pending[i:i] = [a for a, _ in tail]
            chunk = []
        self.lines = ["".join(a for a, _ in chunk)]
        self.stack = line.after

    def finish(self) -> list[str]:
        self._flush(final=True)
        return self.parts


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Telegram HTML cut into messages of at most `limit` UTF-16 units each, on line boundaries.

    Lines stay together while markup (a <pre> block, a ``` fence, any tag) is open across them; a block
    larger than one message is closed at the end of a part and reopened, same language, in the next.
    A single line longer than the limit is cut, at a space when one is near. Blank lines at the edges of
    a part are dropped (Telegram would trim them). Raises ValueError for a limit below 8, or one too
    small for the markup open at a cut.
    """
    if limit < _MIN_LIMIT:
        raise ValueError(f"limit {limit} is too small; use at least {_MIN_LIMIT}")
    if telegram_length(text) <= limit:
        return [text] if text.strip() else []
    packer = _Packer(limit)
    for unit in _units(_lines(text)):
        packer.add_unit(unit)
    return packer.finish()


@dataclass(frozen=True)
class OutputStep:
    """One thing to do in a topic: replace the text of the streaming message, or send a new one."""

    edit: bool
    text: str


@dataclass(frozen=True)
class OutputBuffer:
    """The streaming-output message of one topic, by its current text ("" before the first item).

    Items are appended to that message, edited in place, until it would pass the soft limit; then a
    new message starts. The shell keeps the message id next to the buffer.
    """

    text: str = ""
    soft_limit: int = OUTPUT_SOFT_LIMIT

    def add(self, item: str) -> tuple[OutputBuffer, list[OutputStep]]:
        """The buffer after `item`, and the steps that show it (none for a blank item)."""
        if not item.strip():
            return self, []
        if self.text:
            combined = f"{self.text}\n{item}"
            if telegram_length(combined) <= self.soft_limit:
                return OutputBuffer(combined, self.soft_limit), [OutputStep(edit=True, text=combined)]
        parts = split_message(item, self.soft_limit)
        steps = [OutputStep(edit=False, text=part) for part in parts]
        return OutputBuffer(parts[-1], self.soft_limit), steps
