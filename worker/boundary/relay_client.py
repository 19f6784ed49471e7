"""`ib` inside the sandbox: the command goes to the worker's relay through Claude Code's proxy, and its
output and exit code come back. The relay's address is in the agent's environment (`IB_RELAY`, put
there by the spawn; not a secret), the proxy's in `HTTPS_PROXY` (Claude Code sets it in the sandbox).
Hot: stdlib only.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import BinaryIO

from worker.boundary.relay_wire import (
    MAX_LINE,
    BadLine,
    Chunk,
    Reply,
    Request,
    connect_line,
    connect_status,
    decode_piece,
    encode_request,
    proxy_authority,
)

RELAY = "IB_RELAY"
CONNECT_TIMEOUT = 10.0
# the sandbox's proxy refused a connection now and then on a loaded machine (seen once in a full run, the
# calls before and after it went through): nothing was sent yet, so it is asked again, this many times
PROXY_TRIES = 4
PROXY_PAUSE = 0.25


class RelayDown(Exception):
    """The relay cannot be reached, or did not answer as a relay does."""


def configured() -> bool:
    return bool(os.environ.get(RELAY))


def reads_stdin(argv: list[str]) -> bool:
    """Whether the command reads its stdin: a `-` for a file or message (`ib notify -`, `--body-file -`)."""
    return any(arg == "-" or arg.endswith("=-") for arg in argv[1:])


def forward(argv: list[str]) -> int:
    """Run `ib argv` through the relay; print what it printed; its exit code (1, with one line, when the
    relay cannot be reached: then nothing was done)."""
    stdin = sys.stdin.buffer.read(MAX_LINE) if reads_stdin(argv) else None
    request = Request(tuple(argv), os.getcwd(), stdin)
    try:
        reply = _exchange(encode_request(request))
    except RelayDown as e:
        print(f"ib {argv[0]}: error: {e}", file=sys.stderr)
        return 1
    _write(Chunk("stdout", reply.stdout))
    _write(Chunk("stderr", reply.stderr))
    return reply.code


def _write(chunk: Chunk) -> None:
    """What the command printed, as it printed it (`ib look --follow` goes on until it is stopped)."""
    out = sys.stdout.buffer if chunk.stream == "stdout" else sys.stderr.buffer
    out.write(chunk.data)
    out.flush()


def _exchange(line: bytes) -> Reply:
    try:
        return _ask(line)
    except RelayDown as e:
        raise RelayDown(
            f"cannot reach the worker's relay from inside the sandbox ({e}); nothing was done. "
            "Is `ib worker` (or `ib up`) running?"
        ) from None
    except RelayGone as e:
        raise RelayDown(
            f"the worker's relay went away before it answered ({e}); the command may have run"
        ) from None


class RelayGone(Exception):
    """The relay took the command and closed the connection without an answer."""


def _ask(line: bytes) -> Reply:
    target = os.environ.get(RELAY, "")
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy") or ""
    found = proxy_authority(proxy)
    if found is None:
        raise RelayDown("no HTTPS_PROXY of Claude Code's sandbox here")
    host, port, auth = found
    try:
        with _dial(host, port) as conn:
            conn.sendall(connect_line(target, auth))
            file = conn.makefile("rb")
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                chunk = file.readline(8192)
                if not chunk:
                    raise RelayDown("the sandbox's proxy closed the connection")
                head += chunk
            code, reason = connect_status(head)
            if code != 200:
                raise RelayDown(f"the sandbox's proxy answered {code} {reason.strip()} for {target}")
            conn.settimeout(None)  # the command may wait (ib ask); the relay answers when it is done
            conn.sendall(line)
            return _answer(file, target)
    except OSError as e:
        raise RelayDown(f"{target}: {e.strerror or e}") from None
    except BadLine as e:
        raise RelayDown(str(e)) from None


def _dial(host: str, port: int) -> socket.socket:
    """A connection to the sandbox's proxy; refused ones are tried again (nothing was sent on them)."""
    for _ in range(PROXY_TRIES - 1):
        try:
            return socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
        except ConnectionRefusedError:
            time.sleep(PROXY_PAUSE)
    try:
        return socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
    except OSError as e:
        raise RelayDown(f"the sandbox's proxy at {host}:{port}: {e.strerror or e}") from None


def _answer(file: BinaryIO, target: str) -> Reply:
    """The relay's answer: output written as it comes, then the last line with the exit code."""
    while True:
        answer = file.readline(MAX_LINE + 1)
        if not answer.endswith(b"\n"):  # the proxy says 200 before it dials: nothing may listen there
            raise RelayGone(target)
        try:
            piece = decode_piece(answer)
        except BadLine as e:
            raise RelayDown(f"{target} is not the worker's relay: {e}") from None
        if isinstance(piece, Reply):
            return piece
        _write(piece)
