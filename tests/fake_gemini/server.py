"""The scripted Gemini API over real HTTP on loopback, and the test API to script it and read its log.

`FakeGemini` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread. Gemini CLI talks to it
with `GOOGLE_GEMINI_BASE_URL=fake.base_url`. Every request is logged with its kind: a `turn` of the
conversation (a `streamGenerateContent` that offers tools) takes the next scripted turn; `side`
requests (the session summary, the next-speaker check and any other call the CLI makes on its own) get
a short answer of the shape they ask for; `count` (countTokens) gets a count.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from tests.fake_gemini import wire
from tests.fake_gemini.script import ApiError, Reply, Turn, reply
from tests.loopback import LoopbackServer, close, serve

API_KEY = "AIzaSy-ittybus-test-key-00000000000000"
NOTHING_SCRIPTED = "The stand-in has no scripted turn left."
SIDE_ANSWER = "Scripted side answer"
NEXT_SPEAKER = '{"reasoning": "The model answered; the user speaks next.", "next_speaker": "user"}'
_CONTEXT = "<session_context>"  # how Gemini CLI opens the context it sends with the first prompt
HOLD_LIMIT = 300.0  # seconds a held stream waits at most: a forgotten hold never outlives a test run
_METHOD = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>\w+)$")


@dataclass(frozen=True)
class Request:
    """One request as it arrived, and what it was answered with."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    kind: str  # turn, side, count, other
    answer: str
    at: float

    @property
    def is_turn(self) -> bool:
        return self.kind == "turn"

    def last_content(self) -> dict[str, Any]:
        contents = [c for c in self.body.get("contents") or [] if isinstance(c, dict)]
        return contents[-1] if contents else {}

    def user_text(self) -> str | None:
        """What the person typed in this turn: the text parts of the last user content but the CLI's own
        `<session_context>`; None when it only carries function responses."""
        last = self.last_content()
        if last.get("role") != "user":
            return None
        parts = [p for p in last.get("parts") or [] if isinstance(p, dict)]
        texts = [p["text"] for p in parts if "text" in p and not str(p["text"]).startswith(_CONTEXT)]
        return "\n".join(texts) if texts else None

    def function_responses(self) -> list[dict[str, Any]]:
        parts = self.last_content().get("parts") or []
        return [p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p]

    def tool_names(self) -> list[str]:
        """The functions the request offers the model."""
        tools = [t for t in self.body.get("tools") or [] if isinstance(t, dict)]
        return [d.get("name", "") for t in tools for d in t.get("functionDeclarations") or []]


@dataclass
class _State:
    cond: threading.Condition = field(default_factory=threading.Condition)
    turns: deque[Turn] = field(default_factory=deque)
    log: list[Request] = field(default_factory=list)
    holds: list[threading.Event] = field(default_factory=list)
    turn_ends: list[float] = field(default_factory=list)
    default: Turn = field(default_factory=lambda: reply(NOTHING_SCRIPTED))


class FakeGemini:
    """A scripted Gemini API. `script(...)` queues turns; `requests()` / `user_texts()` read the log;
    `wait_for(...)` blocks until the log satisfies a condition."""

    def __init__(self) -> None:
        self._state = _State()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeGemini:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = serve(self._httpd, "fake-gemini")
        return self

    def stop(self) -> None:
        self.release()
        close(self._httpd, self._thread)

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(
                "the fake Gemini API is not started; call start() or use it as a context manager"
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

    def pending(self) -> int:
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
        """Wall-clock times (time.time()) at which each conversation turn's answer was fully sent."""
        with self._state.cond:
            return list(self._state.turn_ends)

    def turns_taken(self) -> list[Request]:
        return [r for r in self.requests() if r.is_turn]

    def user_texts(self) -> list[str]:
        """Every text a person sent, in order, exactly as it reached the API."""
        return [t for r in self.turns_taken() if (t := r.user_text()) is not None]

    def wait_for(self, check: Callable[[list[Request]], bool], timeout: float = 60.0, what: str = "") -> None:
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

    def take(self, kind: str, body: dict[str, Any]) -> Turn:
        if kind != "turn":
            return reply(NEXT_SPEAKER if "next_speaker" in json.dumps(body) else SIDE_ANSWER)
        with self._state.cond:
            return self._state.turns.popleft() if self._state.turns else self._state.default

    def record(self, request: Request) -> None:
        with self._state.cond:
            self._state.log.append(request)
            self._state.cond.notify_all()

    def answered(self, kind: str) -> None:
        if kind == "turn":
            with self._state.cond:
                self._state.turn_ends.append(time.time())


def request_kind(method: str, body: dict[str, Any]) -> str:
    """`turn` for a streamed request of the conversation (it offers tools), `count`, else `side`."""
    if method == "countTokens":
        return "count"
    return "turn" if method == "streamGenerateContent" and body.get("tools") else "side"


class _Server(LoopbackServer):
    fake: FakeGemini


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the log of requests instead."""

    def do_GET(self) -> None:
        self._record({}, "other", "404")
        self._json(404, {"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        found = _METHOD.match(urlsplit(self.path).path)
        if found is None or not isinstance(body, dict):
            self.do_GET()
            return
        method, model = found.group("method"), found.group("model")
        kind = request_kind(method, body)
        if kind == "count":
            self._record(body, kind, "count")
            self._json(200, {"totalTokens": max(1, len(raw) // 4)})
            return
        self._answer(method, model, kind, body)

    def _answer(self, method: str, model: str, kind: str, body: dict[str, Any]) -> None:
        fake = self.server.fake
        turn = fake.take(kind, body)
        if isinstance(turn, ApiError):
            self._record(body, kind, f"error {turn.status}")
            self._json(turn.status, wire.error_json(turn))
        elif method == "streamGenerateContent":
            self._record(body, kind, "stream")
            self._stream(turn, model)
        else:
            self._record(body, kind, "json")
            self._json(200, wire.response_json(turn, model))
        fake.answered(kind)

    def _stream(self, turn: Reply, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        *chunks, last = wire.stream_chunks(turn, model)
        for chunk in chunks:
            self._send(chunk)
            if turn.chunk_delay:
                time.sleep(turn.chunk_delay)  # the stand-in plays a slow model; nothing waits on this
        if turn.hold is not None:
            turn.hold.wait(HOLD_LIMIT)
        self._send(last)

    def _send(self, chunk: dict[str, Any]) -> None:
        self.wfile.write(wire.frame(chunk))
        self.wfile.flush()

    def _record(self, body: dict[str, Any], kind: str, answer: str) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.fake.record(Request(self.command, self.path, headers, body, kind, answer, time.time()))

    def _json(self, status: int, answer: dict[str, Any]) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
