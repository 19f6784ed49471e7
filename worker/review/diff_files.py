"""`git diff` output as files and hunks with old and new line numbers. Pure: text in, records out.

Git quotes a path that holds control characters or non-ASCII bytes ("a/tab\\there"); those are unquoted
here, and `printable` shows what a person can read of such a name.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal[" ", "+", "-"]
Status = Literal["modified", "added", "deleted", "renamed"]
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class DiffLine:
    kind: Kind
    old: int | None  # the line's number before the change; None for an added line
    new: int | None  # after the change; None for a removed line
    text: str


@dataclass(frozen=True)
class Hunk:
    header: str  # what follows the second @@: the enclosing function, when git found one
    lines: tuple[DiffLine, ...]


@dataclass
class FileDiff:
    path: str
    old_path: str
    status: Status = "modified"
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind == "+")

    @property
    def removed(self) -> int:
        return sum(1 for h in self.hunks for line in h.lines if line.kind == "-")

    @property
    def digest(self) -> str:
        """A fingerprint of this file's change: a picture of it is out of date when this differs."""
        return hashlib.sha256("\n".join(self.raw).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def unquote(name: str) -> str:
    """A path as git prints it, without its quotes and C escapes (octal bytes are UTF-8)."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    out, body, i = bytearray(), name[1:-1], 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out += _ESCAPES.get(nxt, "\\" + nxt).encode()
            i += 2
            continue
        out += char.encode()
        i += 1
    return out.decode("utf-8", "replace")


def printable(path: str) -> str:
    """`path` with control characters shown as escapes (\\t, \\x07), so a name cannot break a line."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in path)


def _side(spec: str) -> str:
    name = unquote(spec.strip())
    return name[2:] if name[:2] in ("a/", "b/") else name


def _git_header(line: str) -> tuple[str, str]:
    """Both paths of `diff --git a/X b/Y`; a fallback only, as the ---/+++ and rename lines are exact."""
    rest = line[len("diff --git ") :]
    if rest.startswith('"'):
        end = rest.index('"', 1) if '"' in rest[1:] else len(rest) - 1
        while rest[end - 1] == "\\":
            end = rest.index('"', end + 1)
        return _side(rest[: end + 1]), _side(rest[end + 1 :])
    half = len(rest) // 2  # unquoted: "a/P b/P" with the same P when the file was not renamed
    return _side(rest[:half]), _side(rest[half + 1 :])


def parse_diff(text: str) -> list[FileDiff]:
    """Every file of a `git diff` (unified, with `diff --git` headers), in order."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            old, new = _git_header(line)
            current = FileDiff(path=new, old_path=old)
            files.append(current)
            current.raw.append(line)
            i += 1
            continue
        if current is None:
            i += 1
            continue
        match = HUNK.match(line)
        if match:
            start = i
            hunk, i = _hunk(lines, i, match)
            current.hunks.append(hunk)
            current.raw += lines[start:i]
            continue
        current.raw.append(line)
        _header_line(current, line)
        i += 1
    return files


def _header_line(current: FileDiff, line: str) -> None:
    if line.startswith("new file mode"):
        current.status = "added"
    elif line.startswith("deleted file mode"):
        current.status = "deleted"
    elif line.startswith("rename from "):
        current.status, current.old_path = "renamed", unquote(line[len("rename from ") :])
    elif line.startswith("rename to "):
        current.path = unquote(line[len("rename to ") :])
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        current.binary = True
    elif line.startswith("--- ") and line[4:] != "/dev/null":
        current.old_path = _side(line[4:])
    elif line.startswith("+++ ") and line[4:] != "/dev/null":
        current.path = _side(line[4:])


def _hunk(lines: list[str], start: int, match: re.Match[str]) -> tuple[Hunk, int]:
    old, new = int(match.group(1)), int(match.group(3))
    left = int(match.group(2)) if match.group(2) is not None else 1
    right = int(match.group(4)) if match.group(4) is not None else 1
    body: list[DiffLine] = []
    i = start + 1
    while i < len(lines) and (left > 0 or right > 0 or lines[i].startswith("\\")):
        line = lines[i]
        i += 1
        if line.startswith("\\"):  # "\ No newline at end of file"
            body.append(DiffLine(" ", None, None, line))
            continue
        kind, text = (line[0] if line else " "), line[1:]
        if kind == "+":
            body.append(DiffLine("+", None, new, text))
            new, right = new + 1, right - 1
        elif kind == "-":
            body.append(DiffLine("-", old, None, text))
            old, left = old + 1, left - 1
        else:
            body.append(DiffLine(" ", old, new, text))
            old, new, left, right = old + 1, new + 1, left - 1, right - 1
    return Hunk(match.group(5).strip(), tuple(body)), i
