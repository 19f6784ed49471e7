"""The scripted Messages API over real HTTP on loopback, and the test API to script it and read its log.

`FakeAnthropic` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread. Claude Code talks to it
with `ANTHROPIC_BASE_URL=fake.base_url`. Every request is logged with its kind: a `turn` of the
conversation (it offers tools) takes the next scripted turn; a `compact` request (the client asking for a
summary of the conversation) gets the compaction answer; other `side` requests (titles, checks the client
makes on its own) get a short text; `count` (count_tokens) gets a count.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from tests.fake_anthropic import sse
from tests.fake_anthropic.script import ApiError, Reply, Turn, reply
from tests.loopback import LoopbackServer, close, serve

API_KEY = "sk-ant-api03-ittybus-test-key-0000000000000000000000000000-0123456789abcdefghij"
NOTHING_SCRIPTED = "The stand-in has no scripted turn left."
SIDE_ANSWER = "Scripted side answer"
COMPACT_ANSWER = (
    "<analysis>A scripted conversation.</analysis>\n<summary>\n1. Primary Request: a test.\n</summary>"
)
_COMPACT_SIGN = "Respond with TEXT ONLY"  # how Claude Code opens its request for a conversation summary
HOLD_LIMIT = 300.0  # seconds a held stream waits at most: a forgotten hold never outlives a test run
_REMINDER = "<system-reminder>"


@dataclass(frozen=True)
class Request:
    """One request as it arrived, and what it was answered with."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    kind: str  # turn, compact, side, count, other
    answer: str
    at: float

    @property
    def is_turn(self) -> bool:
        return self.kind == "turn"

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


@dataclass
class _State:
    cond: threading.Condition = field(default_factory=threading.Condition)
    turns: deque[Turn] = field(default_factory=deque)
    log: list[Request] = field(default_factory=list)
    holds: list[threading.Event] = field(default_factory=list)
    turn_ends: list[float] = field(default_factory=list)
    default: Turn = field(default_factory=lambda: reply(NOTHING_SCRIPTED))
    compaction: Turn = field(default_factory=lambda: reply(COMPACT_ANSWER))


class FakeAnthropic:
    """A scripted Anthropic Messages API. `script(...)` queues turns; `requests()` / `user_texts()` read
    the log; `wait_for(...)` blocks until the log satisfies a condition."""

    def __init__(self) -> None:
        self._state = _State()
        self._ids = itertools.count(1)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeAnthropic:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = serve(self._httpd, "fake-anthropic")
        return self

    def stop(self) -> None:
        self.release()
        close(self._httpd, self._thread)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(
                "the fake Messages API is not started; call start() or use it as a context manager"
            )
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # --- the test API ---------------------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Queue turns: each conversation request takes the next one."""
        with self._state.cond:
            self._state.turns.extend(turns)
            self._state.holds.extend(t.hold for t in turns if isinstance(t, Reply) and t.hold is not None)

    def set_default(self, turn: Turn) -> None:
        """The answer once the script is used up (default: a text saying nothing is scripted)."""
        with self._state.cond:
            self._state.default = turn

    def set_compaction(self, turn: Turn) -> None:
        """The answer to a compaction request (a `hold` keeps the pane "Compacting" until released)."""
        with self._state.cond:
            self._state.compaction = turn
            if isinstance(turn, Reply) and turn.hold is not None:
                self._state.holds.append(turn.hold)

    def pending(self) -> int:
        """Scripted turns not yet taken."""
        with self._state.cond:
            return len(self._state.turns)

    def release(self) -> None:
        """Let every held stream finish."""
        with self._state.cond:
            holds = list(self._state.holds)
        for hold in holds:
            hold.set()

    def requests(self) -> list[Request]:
        with self._state.cond:
            return list(self._state.log)

    def turn_ends(self) -> list[float]:
        """Wall-clock times (time.time()) at which each conversation turn's answer was fully sent: the
        stream's last event, or an error's body. The benches' "moment" a turn's outcome exists."""
        with self._state.cond:
            return list(self._state.turn_ends)

    def turns_taken(self) -> list[Request]:
        """The conversation requests, oldest first."""
        return [r for r in self.requests() if r.is_turn]

    def user_texts(self) -> list[str]:
        """Every text a person sent, in order, exactly as it reached the API."""
        return [t for r in self.turns_taken() if (t := r.user_text()) is not None]

    def wait_for(self, check: Callable[[list[Request]], bool], timeout: float = 30.0, what: str = "") -> None:
        """Block until `check(log)` holds; AssertionError at the deadline."""
        deadline = time.monotonic() + timeout
        with self._state.cond:
            while not check(list(self._state.log)):
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [f"{r.method} {r.path} {r.kind}" for r in self._state.log]
                    raise AssertionError(
                        f"timed out after {timeout}s waiting for {what or check!r}; log={seen}"
                    )
                self._state.cond.wait(left)

    # --- the server side ------------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):08d}"

    def take(self, kind: str) -> Turn:
        with self._state.cond:
            if kind == "compact":
                return self._state.compaction
            if kind != "turn":
                return reply(SIDE_ANSWER)
            return self._state.turns.popleft() if self._state.turns else self._state.default

    def record(self, request: Request) -> None:
        with self._state.cond:
            self._state.log.append(request)
            self._state.cond.notify_all()

    def answered(self, kind: str) -> None:
        if kind == "turn":
            with self._state.cond:
                self._state.turn_ends.append(time.time())


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


class _Server(LoopbackServer):
    fake: FakeAnthropic


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the log of requests instead."""

    def do_GET(self) -> None:
        self._record({}, "other", "404")
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "Not found"}})

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        path = urlsplit(self.path).path
        if path == "/v1/messages/count_tokens":
            self._record(body, "count", "count")
            self._json(200, {"input_tokens": max(1, len(raw) // 4)})
        elif path == "/v1/messages":
            self._messages(body if isinstance(body, dict) else {})
        else:
            self.do_GET()

    def _messages(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        kind = request_kind(body)
        turn = fake.take(kind)
        model = str(body.get("model") or "claude-test")
        if isinstance(turn, ApiError):
            self._record(body, kind, f"error {turn.status}")
            request_id = fake.next_id("req")
            self._json(turn.status, sse.error_json(turn, request_id), sse.error_headers(turn, request_id))
        else:
            self._record(body, kind, "stream" if body.get("stream") else "json")
            message_id = fake.next_id("msg")
            if body.get("stream"):
                self._stream(turn, message_id, model)
            else:
                self._json(200, sse.message_json(turn, message_id, model))
        fake.answered(kind)

    def _stream(self, turn: Reply, message_id: str, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", self.server.fake.next_id("req"))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self._send(sse.stream_head(message_id, model), 0.0)
        self._send(sse.stream_blocks(turn), turn.chunk_delay)
        if turn.hold is not None:
            turn.hold.wait(HOLD_LIMIT)
        self._send(sse.stream_tail(turn), 0.0)

    def _send(self, events: Iterable[dict[str, Any]], delay: float) -> None:
        for event in events:
            self.wfile.write(sse.frame(event))
            self.wfile.flush()
            if delay:
                time.sleep(delay)  # the stand-in plays a slow model; nothing waits on this

    def _record(self, body: dict[str, Any], kind: str, answer: str) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = Request(self.command, self.path, headers, body, kind, answer, time.time())
        self.server.fake.record(request)

    def _json(self, status: int, answer: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in (headers or {"content-type": "application/json"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
