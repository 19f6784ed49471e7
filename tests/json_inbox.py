"""A webhook on loopback that keeps every JSON body POSTed to it: the far end of an apprise `json://`
channel in the escalation tests and the bench."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

from tests.loopback import LoopbackServer, close, serve


@dataclass(frozen=True)
class Received:
    at: float  # time.monotonic() when it arrived
    body: dict[str, Any]


class JsonInbox:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.arriving = 0  # requests come in and held (`hold`)
        self.lock = threading.Lock()
        self.open = threading.Event()
        self.open.set()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.inbox = self
        self._thread: threading.Thread | None = None

    def __enter__(self) -> JsonInbox:
        self._thread = serve(self._server, "json-inbox")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        close(self._server, self._thread)

    @property
    def url(self) -> str:
        """The apprise URL that delivers here."""
        return f"json://127.0.0.1:{self._server.server_address[1]}/"

    def hold(self) -> None:
        """Keep the next requests waiting, unanswered, until `release`: a send under way."""
        self.open.clear()

    def release(self) -> None:
        self.open.set()

    def titles(self) -> list[str]:
        with self.lock:
            return [str(r.body.get("title", "")) for r in self.received]

    def keep(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.received.append(Received(time.monotonic(), body))


class _Server(LoopbackServer):
    inbox: JsonInbox


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads what arrived, not the server's access log."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        inbox = self.server.inbox
        with inbox.lock:
            inbox.arriving += 1
        inbox.open.wait(30)
        self.server.inbox.keep(body if isinstance(body, dict) else {"value": body})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
