"""The scripted Responses API over real HTTP on loopback, and the test API to script it and read its log.

`FakeOpenAI` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread; Codex CLI reaches it
through a `model_providers` entry whose `base_url` is `fake.base_url`. Codex sends only
`POST /v1/responses`. A request of the conversation (it offers the `exec_command` tool) takes the next
scripted turn; any other (the hidden thread that names the session) gets a short side answer. Every
request is logged with its kind and what it was answered.
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

from tests.fake_openai import sse
from tests.fake_openai.script import ApiError, Reply, Turn, reply
from tests.loopback import LoopbackServer, close, serve

API_KEY = "sk-proj-ittybus-test-key-0000000000000000000000000000-0123456789abcdef"
NOTHING_SCRIPTED = "The stand-in has no scripted turn left."
SIDE_ANSWER = "Scripted side answer"
HOLD_LIMIT = 300.0  # seconds a held stream waits at most: a forgotten hold never outlives a test run
SHELL_TOOL = "exec_command"
# how the context Codex itself adds to a user message opens (the environment, AGENTS.md, instructions)
CONTEXT = ("<environment_context>", "<user_instructions>", "<permissions", "# AGENTS.md")


@dataclass(frozen=True)
class Request:
    """One request as it arrived, and what it was answered with."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    kind: str  # turn, side, other
    answer: str
    at: float

    @property
    def is_turn(self) -> bool:
        return self.kind == "turn"

    def items(self) -> list[dict[str, Any]]:
        given = self.body.get("input")
        return [i for i in given if isinstance(i, dict)] if isinstance(given, list) else []

    def user_text(self) -> str | None:
        """What the person typed, when this request opens a turn: the text of the last input item when
        it is a user message (None when it carries tool output). Codex's own context (CONTEXT) is left
        out."""
        items = self.items()
        last = items[-1] if items else {}
        if last.get("role") != "user":
            return None
        texts = [
            str(part.get("text", ""))
            for part in last.get("content") or []
            if isinstance(part, dict) and part.get("type") == "input_text"
        ]
        said = [t for t in texts if not t.lstrip().startswith(CONTEXT)]
        return "\n".join(said) if said else None

    def tool_outputs(self) -> list[dict[str, Any]]:
        """The outputs of tool calls this request sends back (function and custom tool calls)."""
        kinds = ("function_call_output", "custom_tool_call_output")
        return [i for i in self.items() if i.get("type") in kinds]


@dataclass
class _State:
    cond: threading.Condition = field(default_factory=threading.Condition)
    turns: deque[Turn] = field(default_factory=deque)
    log: list[Request] = field(default_factory=list)
    holds: list[threading.Event] = field(default_factory=list)
    turn_ends: list[float] = field(default_factory=list)
    default: Turn = field(default_factory=lambda: reply(NOTHING_SCRIPTED))


class FakeOpenAI:
    """A scripted Responses API. `script(...)` queues turns; `requests()` / `user_texts()` read the log;
    `wait_for(...)` blocks until the log satisfies a condition."""

    def __init__(self) -> None:
        self._state = _State()
        self._ids = itertools.count(1)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeOpenAI:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = serve(self._httpd, "fake-openai")
        return self

    def stop(self) -> None:
        self.release()
        close(self._httpd, self._thread)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """What a `model_providers` entry's `base_url` names (the API's /v1 root)."""
        if self._httpd is None:
            raise RuntimeError(
                "the fake Responses API is not started; call start() or use it as a context manager"
            )
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

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
        """Wall-clock times (time.time()) at which each conversation request's answer was fully sent."""
        with self._state.cond:
            return list(self._state.turn_ends)

    def turns_taken(self) -> list[Request]:
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
                    seen = [f"{r.method} {r.path} {r.kind} {r.answer}" for r in self._state.log]
                    raise AssertionError(
                        f"timed out after {timeout}s waiting for {what or check!r}; log={seen}"
                    )
                self._state.cond.wait(left)

    # --- the server side ------------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):08d}"

    def take(self, kind: str) -> Turn:
        with self._state.cond:
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
    """`turn` for a request of the conversation (it offers the shell tool), else `side`."""
    tools = body.get("tools")
    names = {t.get("name") for t in tools if isinstance(t, dict)} if isinstance(tools, list) else set()
    return "turn" if SHELL_TOOL in names else "side"


class _Server(LoopbackServer):
    fake: FakeOpenAI


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the log of requests instead."""

    def do_GET(self) -> None:
        self._record({}, "other", "404")
        self._json(404, {"error": {"type": "invalid_request_error", "message": "Not found", "code": None}})

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if urlsplit(self.path).path == "/v1/responses" and isinstance(body, dict):
            self._responses(body)
        else:
            self.do_GET()

    def _responses(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        kind = request_kind(body)
        turn = fake.take(kind)
        model = str(body.get("model") or "gpt-test")
        request_id = fake.next_id("req")
        if isinstance(turn, ApiError):
            self._record(body, kind, f"error {turn.status}")
            self._json(turn.status, sse.error_json(turn), sse.error_headers(turn, request_id))
        else:
            self._record(body, kind, "stream")
            self._stream(turn, fake.next_id("resp"), model, request_id)
        fake.answered(kind)

    def _stream(self, turn: Reply, response_id: str, model: str, request_id: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("x-request-id", request_id)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        item_ids = [self.server.fake.next_id("item") for _ in turn.items]
        self._send(sse.stream_head(response_id, model), 0.0)
        self._send(sse.stream_items(turn, item_ids), turn.chunk_delay)
        if turn.hold is not None:
            turn.hold.wait(HOLD_LIMIT)
        self._send(sse.stream_tail(turn, response_id, model), 0.0)

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
