"""The HTTP side both fakes at our seams share (the Telegram Bot API, the Anthropic Messages API): a
threading server on a free loopback port, served from a daemon thread until it is closed."""

from __future__ import annotations

import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a cancelled long poll, a CLI killed mid-stream) is no error; anything
        else is printed."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(server: LoopbackServer, name: str) -> threading.Thread:
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
    )
    thread.start()
    return thread


def close(server: LoopbackServer | None, thread: threading.Thread | None) -> None:
    if server is not None:
        server.shutdown()
        server.server_close()
    if thread is not None:
        thread.join(timeout=5)
