"""What every agent program's token reader shares (Claude Code's transcript, Codex's rollout, Gemini CLI's
chat log): reading usage line by line, telling a cut line, token counts and time stamps as the logs write
them. Pure and light: the Stop hook reads usage on every turn's end."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # no `typing` at run time: the Stop hook imports this
    from collections.abc import Callable, Iterable
    from typing import Protocol

    from bus.costs.usage import Usage

    class LineReader(Protocol):
        unreadable: int

        def lines(self, lines: Iterable[bytes | str]) -> list[Usage]: ...


def each_line(read: Callable[[bytes | str], Usage | None], lines: Iterable[bytes | str]) -> list[Usage]:
    """What `read` finds on each of `lines`, in order; lines with nothing are left out."""
    found = []
    for line in lines:
        record = read(line)
        if record is not None:
            found.append(record)
    return found


def read_all(reader: LineReader, path: str) -> tuple[list[Usage], int]:
    """Every answer's usage `reader` finds in the log at `path`, and how many of its lines were unreadable
    (a last line still being written among them). A missing file has none."""
    try:
        with open(path, "rb") as f:
            records = reader.lines(f)
    except OSError:
        return [], 0
    return records, reader.unreadable


def cut_short(raw: bytes) -> bool:
    """A line that does not end as a JSON document does: cut (the log was read while being written)."""
    return bool(raw.strip()) and not raw.rstrip().endswith((b"}", b"]"))


def token_count(value: object) -> int:
    """A token count as the logs write it; 0 for anything that is not a positive whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def stamp_seconds(stamp: object) -> float:
    """`2026-11-26T22:04:26.123Z` as Unix seconds; 0 when it cannot be read."""
    if not isinstance(stamp, str):
        return 0.0
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
