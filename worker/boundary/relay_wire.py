"""The relay's wire and the facts it reads about a connection, pure.

A sandboxed `ib` (a compound line, a pipe, a script the agent wrote) cannot reach the bus: Claude Code's
sandbox hides `.ib/` and closes loopback. Its one way out is Claude Code's own network proxy, which runs
outside the sandbox, in the agent's Claude Code process. The agent's settings allow exactly one
loopback address through it, the worker's relay; the sandboxed `ib` sends its command line there as one
JSON line and gets the result back as one JSON line. Who asks is never read from the request: the relay
reads it from the connection (its peer socket belongs to the agent's Claude Code process), see
`worker.boundary.relay`. Hot: stdlib only.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
from dataclasses import dataclass

MAX_LINE = 4 * 1024 * 1024
"""The longest request or reply line: a message of IB_MAX_MESSAGE_BYTES (1 MiB) in base64, and room."""


class BadLine(ValueError):
    """A line that is not a relay request or reply."""


@dataclass(frozen=True)
class Request:
    argv: tuple[str, ...]
    cwd: str
    stdin: bytes | None = None  # None: the command reads no stdin


@dataclass(frozen=True)
class Reply:
    code: int
    stdout: bytes = b""
    stderr: bytes = b""


def encode_request(request: Request) -> bytes:
    body: dict[str, object] = {"argv": list(request.argv), "cwd": request.cwd}
    if request.stdin is not None:
        body["stdin"] = base64.b64encode(request.stdin).decode("ascii")
    return json.dumps(body).encode() + b"\n"


def decode_request(line: bytes) -> Request:
    body = _object(line)
    argv, cwd, stdin = body.get("argv"), body.get("cwd"), body.get("stdin")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise BadLine("argv must be a list of strings")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise BadLine("cwd must be an absolute path")
    if stdin is not None and not isinstance(stdin, str):
        raise BadLine("stdin must be base64 text")
    return Request(tuple(argv), cwd, None if stdin is None else _unbase64(stdin))


@dataclass(frozen=True)
class Chunk:
    """Output the command printed while it runs, sent at once (`ib look --follow` never ends on its own)."""

    stream: str  # "stdout" or "stderr"
    data: bytes


STREAMS = ("stdout", "stderr")


def encode_chunk(chunk: Chunk) -> bytes:
    return json.dumps({chunk.stream: base64.b64encode(chunk.data).decode("ascii")}).encode() + b"\n"


def decode_piece(line: bytes) -> Chunk | Reply:
    """One line of the relay's answer: output on the way, or the last line, with the exit code."""
    body = _object(line)
    if "code" in body:
        return _reply(body)
    stream, data = next(iter(body.items())) if len(body) == 1 else ("", None)
    if stream not in STREAMS or not isinstance(data, str):
        raise BadLine("a piece of output is stdout or stderr, in base64")
    return Chunk(stream, _unbase64(data))


def encode_reply(reply: Reply) -> bytes:
    body = {
        "code": reply.code,
        "stdout": base64.b64encode(reply.stdout).decode("ascii"),
        "stderr": base64.b64encode(reply.stderr).decode("ascii"),
    }
    return json.dumps(body).encode() + b"\n"


def decode_reply(line: bytes) -> Reply:
    return _reply(_object(line))


def _reply(body: dict[str, object]) -> Reply:
    code, out, err = body.get("code"), body.get("stdout"), body.get("stderr")
    if (
        not isinstance(code, int)
        or isinstance(code, bool)
        or not isinstance(out, str)
        or not isinstance(err, str)
    ):
        raise BadLine("a reply has an integer code and base64 stdout and stderr")
    return Reply(code, _unbase64(out), _unbase64(err))


def _object(line: bytes) -> dict[str, object]:
    try:
        body = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadLine(f"not JSON: {e}") from None
    if not isinstance(body, dict):
        raise BadLine("not a JSON object")
    return body


def _unbase64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise BadLine("not base64") from None


def proc_address(host: str, port: int) -> str:
    """An IPv4 address as /proc/net/tcp writes it: the four bytes in host order, in hex, then the port."""
    (number,) = struct.unpack("=I", socket.inet_aton(host))
    return f"{number:08X}:{port:04X}"


def socket_inode(table: str, local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The inode of the socket in `/proc/net/tcp` text whose local and remote ends are these (the other
    end of a connection the relay accepted: local is the relay's peer, remote the relay)."""
    want = (proc_address(*local), proc_address(*remote))
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 9 and (fields[1], fields[2]) == want and fields[9].isdigit():
            return int(fields[9]) or None  # 0: a socket in TIME_WAIT, owned by no process
    return None


def proxy_authority(proxy_url: str) -> tuple[str, int, str] | None:
    """Host, port and the `Proxy-Authorization` value from Claude Code's `HTTPS_PROXY` inside the sandbox
    (`http://user:secret@127.0.0.1:3128`); None when it is not such a URL."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(proxy_url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != "http" or not parts.hostname or port is None:
        return None
    auth = ""
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        auth = "Basic " + base64.b64encode(pair).decode("ascii")
    return parts.hostname, port, auth


def connect_line(target: str, auth: str) -> bytes:
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if auth:
        head += f"Proxy-Authorization: {auth}\r\n"
    return (head + "\r\n").encode()


def connect_status(head: bytes) -> tuple[int, str]:
    """The status code and reason of a proxy's answer to CONNECT (its head, up to the blank line)."""
    first = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = first.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise BadLine(f"not an HTTP answer: {first[:80]!r}")
    return int(parts[1]), parts[2] if len(parts) > 2 else ""
