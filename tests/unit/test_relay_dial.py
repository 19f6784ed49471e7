"""`ib` inside the sandbox dials Claude Code's proxy again when it refuses the connection (nothing was
sent yet); a proxy that never listens is one clear line naming it (worker.boundary.relay_client)."""

from __future__ import annotations

import socket
import threading

import pytest

from worker.boundary import relay_client
from worker.boundary.relay_client import RelayDown


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_proxy_that_starts_listening_a_moment_later_is_reached() -> None:
    port = _closed_port()
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def listen_late() -> None:
        server.bind(("127.0.0.1", port))
        server.listen()

    timer = threading.Timer(relay_client.PROXY_PAUSE * 1.5, listen_late)
    timer.start()
    try:
        with relay_client._dial("127.0.0.1", port) as conn:
            assert conn.getpeername()[1] == port
    finally:
        timer.cancel()
        server.close()


def test_a_proxy_that_never_listens_is_one_line_naming_it() -> None:
    port = _closed_port()
    with pytest.raises(RelayDown, match=rf"^the sandbox's proxy at 127\.0\.0\.1:{port}: Connection refused$"):
        relay_client._dial("127.0.0.1", port)
