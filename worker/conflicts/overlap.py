"""What a predicted conflict means for people and agents: the overlap of one agent's work with another's (or
with its target branch), its fingerprint (so each overlap is told once, and again only when it changes), the
`conflict_risk` event's text and data, and the note the agent reads in its next hook output. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from worker.conflicts.merge_tree import ConflictedFile, Hunk, printable

MAX_FILES = 20
MAX_HUNKS = 3
MAX_LINES = 6
MAX_LINE = 160


@dataclass(frozen=True)
class FileOverlap:
    """One file both sides change in a way git cannot merge; `hunks` for text files."""

    path: str
    kind: str
    hunks: tuple[Hunk, ...] = ()
    sides: tuple[str, ...] = ()
    """The blob ids of both sides (stages 2 and 3), what a binary or a deletion conflict is told apart by."""

    @property
    def shown(self) -> str:
        return printable(self.path)

    def fingerprint(self) -> str:
        """The same for the same overlap seen from either side, different when either side's part changes."""
        digest = hashlib.sha1(self.kind.encode())
        for hunk in self.hunks:
            for side in sorted(("\n".join(hunk.ours), "\n".join(hunk.theirs))):
                digest.update(b"\0" + side.encode("utf-8", "surrogateescape"))
        if not self.hunks:
            digest.update("\0".join(sorted(self.sides)).encode())
        return digest.hexdigest()[:16]

    def where(self) -> str:
        """`around line 12` / `around lines 12, 40` for text, else the kind (`binary`, `modify/delete`)."""
        if not self.hunks:
            return self.kind
        lines = ", ".join(str(h.line) for h in self.hunks[:MAX_HUNKS])
        return f"around line{'s' if len(self.hunks) > 1 else ''} {lines}"


@dataclass(frozen=True)
class Collision:
    """`agent`'s work (the change just made) against `other`: another agent, or its target branch."""

    agent: str
    other: str
    against: str  # "agent" | "branch"
    files: tuple[FileOverlap, ...]

    @property
    def other_label(self) -> str:
        return f"agent {self.other}" if self.against == "agent" else f"branch {self.other}"


def overlaps(
    files: tuple[ConflictedFile, ...], hunks: Mapping[str, tuple[Hunk, ...]]
) -> tuple[FileOverlap, ...]:
    """The conflicted files of one merge as overlaps, with the hunks read for the text ones."""
    out = []
    for found in files:
        sides = tuple(s.oid for s in found.stages if s.stage in (2, 3))
        out.append(FileOverlap(found.path, found.kind, hunks.get(found.path, ()), sides))
    return tuple(out)


def news(
    marks: Mapping[str, str], files: tuple[FileOverlap, ...]
) -> tuple[tuple[FileOverlap, ...], list[str]]:
    """Of the overlaps found now, those not told yet or changed since (by fingerprint, keyed by the shown
    path), and the marked paths that no longer overlap (their marks go, so a new overlap there is told)."""
    fresh = tuple(f for f in files if marks.get(f.shown) != f.fingerprint())
    now = {f.shown for f in files}
    return fresh, [path for path in marks if path not in now]


def message(c: Collision) -> str:
    """The event's one line: who collides with whom, where."""
    head = ", ".join(f"{f.shown} ({f.where()})" for f in c.files[:3])
    more = f" and {len(c.files) - 3} more file(s)" if len(c.files) > 3 else ""
    return f"conflict risk: {c.agent}'s change collides with {c.other_label} in {head}{more}"


def event_data(c: Collision) -> dict[str, Any]:
    """The `conflict_risk` event's data: both sides, the files, each file's hunks (cut to a readable size)."""
    return {
        "agents": [c.agent, c.other] if c.against == "agent" else [c.agent],
        "other_agent": c.other if c.against == "agent" else "",
        "branch": c.other if c.against == "branch" else "",
        "files": [f.shown for f in c.files[:MAX_FILES]],
        "conflicts": [_file_data(f) for f in c.files[:MAX_FILES]],
        "more_files": max(0, len(c.files) - MAX_FILES),
    }


def _file_data(f: FileOverlap) -> dict[str, Any]:
    return {
        "path": f.shown,
        "kind": f.kind,
        "hunks": [
            {"line": h.line, "ours": _cut(h.ours), "theirs": _cut(h.theirs)} for h in f.hunks[:MAX_HUNKS]
        ],
        "more_hunks": max(0, len(f.hunks) - MAX_HUNKS),
    }


def _cut(lines: tuple[str, ...]) -> list[str]:
    kept = [printable(line)[:MAX_LINE] for line in lines[:MAX_LINES]]
    return [*kept, f"… {len(lines) - MAX_LINES} more line(s)"] if len(lines) > MAX_LINES else kept


def note(c: Collision) -> str:
    """What the agent that made the change reads in its next hook output: what collides, with whom, and what
    to do about it."""
    lines = [
        f"[ib] Conflict risk: your changes collide with {c.other_label}'s (they will not merge cleanly):"
    ]
    for f in c.files[:5]:
        lines.append(f"- {f.shown}: {f.where()}")
        if f.hunks:
            first = f.hunks[0]
            lines.append(f"  yours:  {_gist(first.ours)}")
            lines.append(f"  theirs: {_gist(first.theirs)}")
    if len(c.files) > 5:
        lines.append(f"- and {len(c.files) - 5} more file(s)")
    who = c.other if c.against == "agent" else f"the {c.other} branch"
    lines.append(
        f"Unless this change is your task's point, leave that code to {who} and work around it; "
        "the person has been told as well."
    )
    return "\n".join(lines)


def _gist(lines: tuple[str, ...]) -> str:
    shown = " ⏎ ".join(printable(line).strip() for line in lines[:3] if line.strip())
    return (shown[:MAX_LINE] or "(nothing: deleted there)") + (" …" if len(lines) > 3 else "")
