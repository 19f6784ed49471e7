"""The tokens in Codex CLI's session log (its "rollout", see worker.programs.codex.rollout): one
`token_usage_record` per answer of the model, with its `response_id` and `usage` (`input_tokens` include
the cached ones, `output_tokens` the reasoning), as `bus.costs.usage.Usage`; each turn's `turn_context` names
the model. Pure; light enough for the Stop hook (no json or re). The hidden thread that names the
session writes no log, so its tokens are not counted.
"""

from __future__ import annotations

from bus.costs.usage import Usage
from bus.wire import fastjson
from worker.programs.usage_lines import cut_short, each_line, read_all, stamp_seconds, token_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


_SEP = " "  # `last` is "<response id> <model>": the model of the turn the next piece of the log goes on in


class UsageReader:
    """Reads each answer's usage from rollout lines fed in order (`UsageReading`). `last` names the last
    answer counted and the model of its turn, so a reader that starts after it (the next piece of the
    log, which may begin after the turn's `turn_context`) knows both."""

    __slots__ = ("last", "model", "seen", "task", "unreadable")

    def __init__(self, last: str = "", task: str = "") -> None:
        self.last = last
        answer, _, self.model = last.partition(_SEP)
        self.seen = {answer} if answer else set()
        self.task = task
        self.unreadable = 0

    def lines(self, lines: Iterable[bytes | str]) -> list[Usage]:
        return each_line(self.line, lines)

    def line(self, line: bytes | str) -> Usage | None:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "replace")
        if b'"token_usage_record"' not in raw and b'"turn_context"' not in raw:
            if cut_short(raw):
                self.unreadable += 1
            return None
        try:
            entry = fastjson.loads(raw.decode("utf-8", "replace"))
        except (ValueError, SystemError):
            self.unreadable += 1
            return None
        payload = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(payload, dict):
            return None
        if entry.get("type") == "turn_context":
            model = payload.get("model")
            self.model = model if isinstance(model, str) and _SEP not in model else self.model
            if self.model:  # kept for the next piece of the log, which may hold the turn's answers
                self.last = f"{self.last.partition(_SEP)[0]}{_SEP}{self.model}"
            return None
        return self._record(entry, payload) if entry.get("type") == "token_usage_record" else None

    def _record(self, entry: dict[str, object], payload: dict[str, object]) -> Usage | None:
        answer, usage = payload.get("response_id"), payload.get("usage")
        key = answer if isinstance(answer, str) else ""
        if not isinstance(usage, dict) or (key and key in self.seen):
            return None
        record = usage_record(
            usage, self.model or "unknown", stamp_seconds(entry.get("timestamp")), self.task
        )
        if record is not None and key:
            self.seen.add(key)
            self.last = f"{key}{_SEP}{self.model}" if self.model else key
        return record


def usage_record(usage: Mapping[str, object], model: str, at: float, task: str = "") -> Usage | None:
    """One answer's `usage` in ittybus's counts: the input without its cached part (read from the cache)
    and its cache writes; None when it used no token."""
    cached, written = (
        token_count(usage.get("cached_input_tokens")),
        token_count(usage.get("cache_write_input_tokens")),
    )
    fresh = max(0, token_count(usage.get("input_tokens")) - cached - written)
    output = token_count(usage.get("output_tokens"))
    if not (fresh or cached or written or output):
        return None
    return Usage(model, at, input=fresh, output=output, cache_write=written, cache_read=cached, task=task)


def read_rollout(path: str) -> tuple[list[Usage], int]:
    """Every answer's usage in the rollout at `path`, and how many of its lines were unreadable. A missing
    file has none."""
    return read_all(UsageReader(), path)
