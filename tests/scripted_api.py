"""What the scripted model APIs (Anthropic, OpenAI, Gemini) share: the queue of scripted turns, the log of
requests, holds, `wait_for`, and the threaded HTTP server on loopback the real CLIs talk to. Each fake
keeps only what differs: its wire format and how it tells a conversation turn from the CLI's side calls.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any, ClassVar, Generic, Self, TypeVar
from urllib.parse import urlsplit

from tests.loopback import LoopbackServer, close, serve

NOTHING_SCRIPTED = "The stand-in has no scripted turn left."
SIDE_ANSWER = "Scripted side answer"
HOLD_LIMIT = 300.0  # seconds a held stream waits at most: a forgotten hold never outlives a test run


@dataclass(frozen=True)
class LoggedRequest(ABC):
    """One request as it arrived, and what it was answered with. Each API reads its own body."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    kind: str  # turn, side, other, and what else the API tells apart (count, compact)
    answer: str
    at: float

    @property
    def is_turn(self) -> bool:
        return self.kind == "turn"

    @abstractmethod
    def user_text(self) -> str | None:
        """What the person typed, when this request carries it (each API reads its own body)."""


TurnT = TypeVar("TurnT")
RequestT = TypeVar("RequestT", bound=LoggedRequest)
FakeT = TypeVar("FakeT", bound="ScriptedApi[Any, Any]")


def _hold(turn: object) -> threading.Event | None:
    hold = getattr(turn, "hold", None)  # a scripted reply may hold its stream; an error never does
    return hold if isinstance(hold, threading.Event) else None


class ScriptedApi(Generic[TurnT, RequestT]):
    """A scripted model API. `script(...)` queues turns; `requests()` / `user_texts()` read the log;
    `wait_for(...)` blocks until the log satisfies a condition. A subclass names its handler and its
    `take` (which answer a request of each kind gets)."""

    title: ClassVar[str]  # "Messages API": what a mistake names
    handler: ClassVar[type[ScriptedHandler[Any]]]
    root: ClassVar[str] = ""  # the path `base_url` ends with
    wait_timeout: ClassVar[float] = 30.0

    def __init__(self, request_type: type[RequestT], default: TurnT) -> None:
        self._request_type = request_type
        self._cond = threading.Condition()
        self._turns: deque[TurnT] = deque()
        self._log: list[RequestT] = []
        self._holds: list[threading.Event] = []
        self._turn_ends: list[float] = []
        self._default = default
        self._ids = itertools.count(1)
        self._httpd: ScriptedServer[Self] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._httpd = ScriptedServer(("127.0.0.1", 0), self.handler)
        self._httpd.fake = self
        self._thread = serve(self._httpd, "fake " + self.title)
        return self

    def stop(self) -> None:
        self.release()
        close(self._httpd, self._thread)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError(
                f"the fake {self.title} is not started; call start() or use it as a context manager"
            )
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{self.root}"

    # --- the test API ---------------------------------------------------------------------------------

    def script(self, *turns: TurnT) -> None:
        """Queue turns: each conversation request takes the next one."""
        with self._cond:
            self._turns.extend(turns)
            self._holds.extend(hold for t in turns if (hold := _hold(t)) is not None)

    def set_default(self, turn: TurnT) -> TurnT:
        """The answer once the script is used up (default: a text saying nothing is scripted); the one it
        replaces."""
        with self._cond:
            previous, self._default = self._default, turn
        return previous

    def pending(self) -> int:
        """Scripted turns not yet taken."""
        with self._cond:
            return len(self._turns)

    def release(self) -> None:
        """Let every held stream finish."""
        with self._cond:
            holds = list(self._holds)
        for hold in holds:
            hold.set()

    def requests(self) -> list[RequestT]:
        with self._cond:
            return list(self._log)

    def turn_ends(self) -> list[float]:
        """Wall-clock times (time.time()) at which each conversation turn's answer was fully sent: the
        stream's last event, or an error's body. The benches' "moment" a turn's outcome exists."""
        with self._cond:
            return list(self._turn_ends)

    def turns_taken(self) -> list[RequestT]:
        """The conversation requests, oldest first."""
        return [r for r in self.requests() if r.is_turn]

    def user_texts(self) -> list[str]:
        """Every text a person sent, in order, exactly as it reached the API."""
        return [t for r in self.turns_taken() if (t := r.user_text()) is not None]

    def wait_for(
        self, check: Callable[[list[RequestT]], bool], timeout: float | None = None, what: str = ""
    ) -> None:
        """Block until `check(log)` holds; AssertionError at the deadline (`wait_timeout` by default)."""
        limit = self.wait_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            while not check(list(self._log)):
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [f"{r.method} {r.path} {r.kind} {r.answer}" for r in self._log]
                    raise AssertionError(
                        f"timed out after {limit}s waiting for {what or check!r}; log={seen}"
                    )
                self._cond.wait(left)

    # --- the server side ------------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):08d}"

    def next_turn(self) -> TurnT:
        """The next scripted turn, or the default once the script is used up."""
        with self._cond:
            return self._turns.popleft() if self._turns else self._default

    def keep_hold(self, turn: TurnT) -> None:
        """Let `release()` (and `stop()`) end this turn's hold too, for a turn given outside the script."""
        if (hold := _hold(turn)) is not None:
            with self._cond:
                self._holds.append(hold)

    def record(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any], kind: str, answer: str
    ) -> None:
        request = self._request_type(method, path, headers, body, kind, answer, time.time())
        with self._cond:
            self._log.append(request)
            self._cond.notify_all()

    def answered(self, kind: str) -> None:
        if kind == "turn":
            with self._cond:
                self._turn_ends.append(time.time())


class ScriptedServer(LoopbackServer, Generic[FakeT]):
    fake: FakeT


class ScriptedHandler(BaseHTTPRequestHandler, ABC, Generic[FakeT]):
    """The HTTP plumbing of a scripted API: reading a JSON body, logging the request, answering with JSON
    or with a stream of events (which a hold can stop before its last events)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: ScriptedServer[FakeT]
    not_found: ClassVar[dict[str, Any]]  # the API's own 404 body

    @abstractmethod
    def frame(self, event: dict[str, Any]) -> bytes:
        """One event as the API frames it on a stream."""

    @abstractmethod
    def post(self, raw: bytes, body: dict[str, Any] | None) -> None:
        """Answer a POST: `raw` as it came, `body` its JSON object ({} when not JSON, None when no object)."""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the log of requests instead."""

    def do_GET(self) -> None:
        self.record({}, "other", "404")
        self.send_json(404, self.not_found)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        self.post(*self._read_body())

    @property
    def fake(self) -> FakeT:
        return self.server.fake

    @property
    def route(self) -> str:
        """The request's path without its query."""
        return urlsplit(self.path).path

    def _read_body(self) -> tuple[bytes, dict[str, Any] | None]:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        return raw, body if isinstance(body, dict) else None

    def record(self, body: dict[str, Any], kind: str, answer: str) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake.record(self.command, self.path, headers, body, kind, answer)

    def send_json(self, status: int, answer: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in (headers or {"Content-Type": "application/json"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_stream(
        self,
        headers: dict[str, str],
        events: tuple[Iterable[dict[str, Any]], Iterable[dict[str, Any]], Iterable[dict[str, Any]]],
        delay: float,
        hold: threading.Event | None,
    ) -> None:
        """Stream `events` (head, body, tail) and close: `delay` spaces the body's events (a slow model),
        `hold` keeps the tail back until it is set."""
        head, body, tail = events
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self._send(head, 0.0)
        self._send(body, delay)
        if hold is not None:
            hold.wait(HOLD_LIMIT)
        self._send(tail, 0.0)

    def _send(self, events: Iterable[dict[str, Any]], delay: float) -> None:
        for event in events:
            self.wfile.write(self.frame(event))
            self.wfile.flush()
            if delay:
                time.sleep(delay)  # the stand-in plays a slow model; nothing waits on this
