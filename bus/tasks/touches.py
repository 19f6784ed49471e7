"""The files a task says it will change (`touches`), and when two tasks' files overlap. Pure.

A touch is a path relative to the repository's root: a file, or a directory that covers everything under
it. Globs are refused (two globs cannot be compared honestly without the file list); name the directory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from bus.errors import InvalidInput
from bus.settings.setting_checks import OVERLAP_MODES
from bus.settings.setting_checks import overlap_mode as check_overlap_mode

MAX_TOUCHES = 200
MAX_TOUCH_CHARS = 1024
_GLOB_CHARS = frozenset("*?[")
__all__ = ["OVERLAP_MODES", "Hold", "Running", "check_overlap_mode", "check_touches", "claim_order", "holds"]


def check_touch(raw: str) -> str:
    """One path, normalised (`./a//b/` → `a/b`); InvalidInput names the path and the fix."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise InvalidInput("an empty --touches path: name a file or directory of the repository")
    if len(text) > MAX_TOUCH_CHARS or any(ord(c) < 32 for c in text):
        raise InvalidInput(
            f"bad --touches path {text[:40]!r}: one line of at most {MAX_TOUCH_CHARS} characters"
        )
    if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
        raise InvalidInput(
            f"bad --touches path {text!r}: absolute; give it relative to the repository's root"
        )
    if _GLOB_CHARS & set(text):
        raise InvalidInput(
            f"bad --touches path {text!r}: globs are not supported; name the directory instead"
        )
    parts = [p for p in PurePosixPath(text.replace("\\", "/")).parts if p != "."]
    if ".." in parts:
        raise InvalidInput(f"bad --touches path {text!r}: it leaves the repository; drop the '..'")
    if not parts:
        raise InvalidInput(f"bad --touches path {text!r}: that is the whole repository; name what changes")
    return "/".join(parts)


def check_touches(paths: Iterable[str]) -> tuple[str, ...]:
    """The paths, each checked, without repeats, in the order given (none: the task declares nothing)."""
    touches = tuple(dict.fromkeys(check_touch(p) for p in paths))
    if len(touches) > MAX_TOUCHES:
        raise InvalidInput(f"{len(touches)} --touches paths; the limit is {MAX_TOUCHES}: name directories")
    return touches


def covers(a: str, b: str) -> bool:
    """Whether path `a` and path `b` name the same file, or one is a directory holding the other."""
    return a == b or b.startswith(a + "/") or a.startswith(b + "/")


def shared(mine: Sequence[str], theirs: Sequence[str]) -> tuple[str, ...]:
    """My paths that overlap one of theirs (a path outside every one of theirs is not shared)."""
    return tuple(p for p in mine if any(covers(p, q) for q in theirs))


@dataclass(frozen=True)
class Running:
    """A task in flight for overlaps: claimed, or done with its merge still open. `files` are the ones it
    declared and, when known, the ones its agent actually changed."""

    task: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class Hold:
    """Why a ready task waits: it overlaps `running` on `files`."""

    task: str
    running: str
    files: tuple[str, ...]

    def status(self) -> str:
        return f"held: overlaps {self.running}"


def holds(ready: Sequence[tuple[str, Sequence[str]]], running: Sequence[Running]) -> dict[str, Hold]:
    """For each ready (task id, touches) that overlaps a running task, the first such task and the files."""
    found: dict[str, Hold] = {}
    for task, touches in ready:
        for other in running:
            common = shared(touches, other.files) if other.task != task else ()
            if common:
                found[task] = Hold(task, other.task, common)
                break
    return found


def claim_order(ready: Sequence[str], held: Mapping[str, Hold], mode: str) -> list[str]:
    """The ready ids (in queue order) a claim may take: with `hold`, those not held; else all of them."""
    return [t for t in ready if t not in held] if mode == "hold" else list(ready)
