"""The tokens in Gemini CLI's chat log (see worker.programs.gemini.chat): each answer of the model is a
`gemini` message with its `tokens` (`input` includes the `cached` part, `thoughts` and `tool` are apart)
and `model`, written again whole when its tool calls ran; counted once by its id, as `bus.costs.usage.Usage`.
Pure; light enough for the Stop hook (no json or re).
"""

from __future__ import annotations

from bus.costs.usage import Usage
from worker.programs.jsonl import entries
from worker.programs.usage_lines import cut_short, each_line, read_all, stamp_seconds, token_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class UsageReader:
    """Reads each answer's usage from chat lines fed in order (`UsageReading`), each message id once;
    `last` is the id of the last one counted (its rewrite, on the next line, may come in the next read)."""

    __slots__ = ("last", "seen", "task", "unreadable")

    def __init__(self, last: str = "", task: str = "") -> None:
        self.last = last
        self.seen = {last} if last else set()
        self.task = task
        self.unreadable = 0

    def lines(self, lines: Iterable[bytes | str]) -> list[Usage]:
        return each_line(self.line, lines)

    def line(self, line: bytes | str) -> Usage | None:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "replace")
        if b'"tokens"' not in raw:
            if cut_short(raw):
                self.unreadable += 1
            return None
        found, _ = entries(raw.rstrip(b"\n") + b"\n")
        if not found:
            self.unreadable += 1
            return None
        entry = found[0]
        key = entry.get("id")
        if entry.get("type") != "gemini" or not isinstance(key, str) or key in self.seen:
            return None
        tokens = entry.get("tokens")
        model = entry.get("model")
        name = model if isinstance(model, str) and model else "unknown"
        record = usage_record(tokens, name, stamp_seconds(entry.get("timestamp")), self.task)
        if record is not None:
            self.seen.add(key)
            self.last = key
        return record


def usage_record(tokens: object, model: str, at: float, task: str = "") -> Usage | None:
    """One answer's `tokens` in ittybus's counts: the prompt without its cached part (read from the cache,
    the tool-use prompt added), the answer with its thoughts; None when it used no token."""
    if not isinstance(tokens, dict):
        return None
    cached = token_count(tokens.get("cached"))
    fresh = max(0, token_count(tokens.get("input")) - cached) + token_count(tokens.get("tool"))
    output = token_count(tokens.get("output")) + token_count(tokens.get("thoughts"))
    if not (fresh or cached or output):
        return None
    return Usage(model, at, input=fresh, output=output, cache_read=cached, task=task)


def read_chat(path: str) -> tuple[list[Usage], int]:
    """Every answer's usage in the chat log at `path`, and how many of its lines were unreadable. A
    missing file has none."""
    return read_all(UsageReader(), path)
