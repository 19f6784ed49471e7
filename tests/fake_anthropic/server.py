"""The scripted Messages API over real HTTP on loopback, and the test API to script it and read its log.

`FakeAnthropic` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread. Claude Code talks to it
with `ANTHROPIC_BASE_URL=fake.base_url`. Every request is logged with its kind: a `turn` of the
conversation (it offers tools) takes the next scripted turn; a `compact` request (the client asking for a
summary of the conversation) gets the compaction answer; other `side` requests (titles, checks the client
makes on its own) get a short text; `count` (count_tokens) gets a count.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.fake_anthropic import sse
from tests.fake_anthropic.script import ApiError, Deferred, Reply, Turn, reply
from tests.scripted_api import (
    NOTHING_SCRIPTED,
    SIDE_ANSWER,
    LoggedRequest,
    ScriptedApi,
    ScriptedHandler,
)

__all__ = [
    "API_KEY",
    "COMPACT_ANSWER",
    "NOTHING_SCRIPTED",
    "SIDE_ANSWER",
    "FakeAnthropic",
    "Request",
]

API_KEY = "sk-ant-api03-ittybus-test-key-0000000000000000000000000000-0123456789abcdefghij"
COMPACT_ANSWER = (
    "<analysis>A scripted conversation.</analysis>\n<summary>\n1. Primary Request: a test.\n</summary>"
)
_COMPACT_SIGN = "Respond with TEXT ONLY"  # how Claude Code opens its request for a conversation summary
_REMINDER = "<system-reminder>"


class Request(LoggedRequest):
    """One Messages API request (kind: turn, compact, side, count, other) and what it was answered with."""

    def last_message(self) -> dict[str, Any]:
        messages = [m for m in self.body.get("messages") or [] if isinstance(m, dict)]
        users = [m for m in messages if m.get("role") == "user"]
        return users[-1] if users else {}

    def user_text(self) -> str | None:
        """What the person typed in this turn: the last user message's text blocks that are not the
        client's own `<system-reminder>` context; None when that message only carries tool results."""
        content = self.last_message().get("content")
        if isinstance(content, str):
            return content
        texts = [
            b.get("text", "")
            for b in content or []
            if isinstance(b, dict) and b.get("type") == "text" and not b.get("text", "").startswith(_REMINDER)
        ]
        return "\n".join(texts) if texts else None

    def tool_results(self) -> list[dict[str, Any]]:
        content = self.last_message().get("content")
        return [b for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"]


def request_kind(body: dict[str, Any]) -> str:
    """`turn` for a request of the conversation, `compact` for a summary request, else `side`."""
    if not body.get("tools"):
        return "side"
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    content = last.get("content")
    blocks = (
        [content]
        if isinstance(content, str)
        else [b.get("text", "") for b in content or [] if isinstance(b, dict)]
    )
    return "compact" if any(_COMPACT_SIGN in str(text) for text in blocks) else "turn"


class _Handler(ScriptedHandler["FakeAnthropic"]):
    not_found: ClassVar[dict[str, Any]] = {
        "type": "error",
        "error": {"type": "not_found_error", "message": "Not found"},
    }

    def frame(self, event: dict[str, Any]) -> bytes:
        return sse.frame(event)

    def post(self, raw: bytes, body: dict[str, Any] | None) -> None:
        if self.route == "/v1/messages/count_tokens":
            self.record(body or {}, "count", "count")
            self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        elif self.route == "/v1/messages":
            self._messages(body or {})
        else:
            self.do_GET()

    def _messages(self, body: dict[str, Any]) -> None:
        kind = request_kind(body)
        turn = self.fake.take(kind)
        if isinstance(turn, Deferred):
            turn = turn.make([m for m in body.get("messages") or [] if isinstance(m, dict)])
        model = str(body.get("model") or "claude-test")
        if isinstance(turn, ApiError):
            self.record(body, kind, f"error {turn.status}")
            request_id = self.fake.next_id("req")
            self.send_json(turn.status, sse.error_json(turn, request_id), sse.error_headers(turn, request_id))
        else:
            self.record(body, kind, "stream" if body.get("stream") else "json")
            message_id = self.fake.next_id("msg")
            if body.get("stream"):
                self._stream(turn, message_id, model)
            else:
                self.send_json(200, sse.message_json(turn, message_id, model))
        self.fake.answered(kind)

    def _stream(self, turn: Reply, message_id: str, model: str) -> None:
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "request-id": self.fake.next_id("req")}
        events = (sse.stream_head(message_id, model), sse.stream_blocks(turn), sse.stream_tail(turn))
        self.send_stream(headers, events, turn.chunk_delay, turn.hold)


class FakeAnthropic(ScriptedApi[Turn, Request]):
    """A scripted Anthropic Messages API (see `ScriptedApi`), with its answer to compaction requests."""

    title = "Messages API"
    handler = _Handler

    def __init__(self) -> None:
        super().__init__(Request, reply(NOTHING_SCRIPTED))
        self._compaction: Turn = reply(COMPACT_ANSWER)

    def set_compaction(self, turn: Turn) -> None:
        """The answer to a compaction request (a `hold` keeps the pane "Compacting" until released)."""
        with self._cond:
            self._compaction = turn
        self.keep_hold(turn)

    def results_by_call(self) -> dict[str, tuple[bool, str]]:
        """Every tool result Claude Code sent back, by its tool_use id: (is_error, the text)."""
        found: dict[str, tuple[bool, str]] = {}
        for request in self.requests():
            for result in request.tool_results():
                content = result.get("content")
                if isinstance(content, list):
                    content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
                found[str(result.get("tool_use_id"))] = (bool(result.get("is_error")), str(content))
        return found

    def take(self, kind: str) -> Turn:
        if kind == "compact":
            with self._cond:
                return self._compaction
        return self.next_turn() if kind == "turn" else reply(SIDE_ANSWER)
