"""The tokens in a Claude Code transcript: each assistant line's `message.usage` as a `bus.costs.usage.Usage`,
one per answer of the model. Pure; stays on the light imports, the Stop hook reads a whole transcript.

Claude Code writes one answer as several lines (one per content block: thinking, text, each tool use)
that repeat the same `message.id`, `requestId` and usage; only the first of them counts. A line cut
half way (the file read while Claude Code writes it) or that is no JSON is counted as unreadable;
assistant lines that used no token (Claude Code's own `<synthetic>` error answers) are none.
"""

from __future__ import annotations

from bus.costs.usage import Usage
from bus.wire import fastjson
from worker.programs.usage_lines import cut_short, each_line, read_all, stamp_seconds, token_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_COUNTS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_write", "cache_creation_input_tokens"),
    ("cache_read", "cache_read_input_tokens"),
)


class UsageReader:
    """Reads usage from transcript lines fed in order. It remembers every answer it counted, and starts
    from the last one an earlier reader counted, so the repeated lines of one answer count once, also
    when they come in two reads."""

    __slots__ = ("last", "seen", "task", "unreadable")

    def __init__(self, last: str = "", task: str = "") -> None:
        self.last = last  # `message.id/requestId` of the last answer counted
        self.seen = {last} if last else set()
        self.unreadable = 0
        self.task = task  # stamped on each record: the task the agent works on now

    def lines(self, lines: Iterable[bytes | str]) -> list[Usage]:
        return each_line(self.line, lines)

    def line(self, line: bytes | str) -> Usage | None:
        entry = self._entry(line)
        message = entry.get("message") if entry is not None else None
        if entry is None or not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
            return None
        key = answer_key(entry, message)
        record = None if key in self.seen else usage_record(entry, message, self.task)
        if record is not None and key:
            self.last = key
            self.seen.add(key)
        return record

    def _entry(self, line: bytes | str) -> dict[str, object] | None:
        """The line's assistant entry; None for any other line (an unreadable one counted). Lines that
        do not mention a usage are not parsed at all (tool results are most of a transcript's bytes)."""
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "replace")
        if b'"usage"' not in raw:
            if cut_short(raw):
                self.unreadable += 1  # no usage, and no whole JSON value either
            return None
        text = raw.decode("utf-8", "replace")
        try:
            entry = fastjson.loads(text)
        except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
            self.unreadable += 1
            return None
        return entry if isinstance(entry, dict) and entry.get("type") == "assistant" else None


def answer_key(entry: dict[str, object], message: dict[str, object]) -> str:
    """What names one answer across its lines; "" when the line lacks an id (it then counts alone)."""
    message_id, request_id = message.get("id"), entry.get("requestId")
    if isinstance(message_id, str) and isinstance(request_id, str) and message_id and request_id:
        return f"{message_id}/{request_id}"
    return ""


def usage_record(entry: dict[str, object], message: dict[str, object], task: str = "") -> Usage | None:
    """The usage of one assistant line; None when it used no token."""
    usage = message["usage"]
    assert isinstance(usage, dict)
    counts = {ours: token_count(usage.get(theirs)) for ours, theirs in _COUNTS}
    if not any(counts.values()):
        return None
    model = message.get("model")
    at = stamp_seconds(entry.get("timestamp"))
    split = usage.get("cache_creation")
    hour = (
        min(token_count(split.get("ephemeral_1h_input_tokens")), counts["cache_write"])
        if isinstance(split, dict)
        else 0
    )
    name = model if isinstance(model, str) and model else "unknown"
    return Usage(name, at, task=task, hour_writes=hour, **counts)


def read_transcript(path: str) -> tuple[list[Usage], int]:
    """Every answer's usage in the transcript at `path`, and how many of its lines were unreadable
    (a last line still being written among them). A missing file has none."""
    return read_all(UsageReader(), path)
