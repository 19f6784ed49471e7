"""`ib mcp --http`: the same server over streamable HTTP for clients that want a URL instead of a process:
on loopback only, and every request must carry the bearer token kept in the person's `.ib/mcp-token`
(made once, readable by the person alone; agents may not read `.ib/`)."""

from __future__ import annotations

import errno
import hmac
import logging
import os
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.mcpserver import MCPServer

from bus.errors import ConfigError
from bus.settings.kept_token import kept_token
from bus.settings.repo_paths import ensure_state_dir
from worker.errors import WorkerError

HOST = "127.0.0.1"
DEFAULT_PORT = 8391
PATH = "/mcp"
TOKEN_FILE = "mcp-token"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger(__name__)


class HttpError(WorkerError):
    """`ib mcp --http` cannot serve: its port is taken, or its token file is not one it can use."""


def token_path(root: str) -> str:
    return os.path.join(ensure_state_dir(root), TOKEN_FILE)


def load_token(root: str) -> str:
    """The token in `.ib/mcp-token`, made (0600) the first time, so a client's configuration stays valid
    across restarts; delete the file for a new one."""
    try:
        return kept_token(token_path(root))
    except ConfigError as e:
        raise HttpError(f"{e}: delete it and start ib mcp --http again") from e


def bearer_only(app: App, token: str) -> App:
    """`app` for requests that carry `Authorization: Bearer <token>`; 401 for every other request."""
    wanted = f"Bearer {token}".encode()

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, wanted):
                log.warning("refused a request without the token from %s", scope.get("client"))
                await _unauthorized(send)
                return
        await app(scope, receive, send)

    return checked


async def _unauthorized(send: Send) -> None:
    body = b'{"error": "unauthorized: send Authorization: Bearer <the token in .ib/mcp-token>"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def listening_socket(port: int) -> socket.socket:
    """A socket bound to the port on loopback; one line when the port is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as e:
        sock.close()
        why = "is taken" if e.errno == errno.EADDRINUSE else f"cannot be used ({e.strerror})"
        raise HttpError(f"port {port} on {HOST} {why}: give another with --port") from e
    return sock


def serve_http(server: MCPServer, root: str, port: int, say: Callable[[str], None]) -> None:
    """Serve `server` at http://127.0.0.1:<port>/mcp until interrupted."""
    import uvicorn

    token = load_token(root)
    sock = listening_socket(port)
    app = bearer_only(server.streamable_http_app(streamable_http_path=PATH, host=HOST), token)
    url = f"http://{HOST}:{sock.getsockname()[1]}{PATH}"
    say(f"serving on {url}; send Authorization: Bearer <the token in {token_path(root)}>")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
