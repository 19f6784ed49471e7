"""`ib` inside the sandbox: the command goes to the worker's relay, and its output and exit code come back.
The relay's address is in the agent's environment (`IB_RELAY`, put there by the spawn; not a secret).
From Claude Code's sandbox (no network of its own) it goes through Claude Code's proxy, whose address is
in `HTTPS_PROXY`; from ittybus's bubblewrap box (Gemini CLI's and Codex CLI's, on the machine's network)
it dials the relay itself. A hook (`ib hook ...`) sends its payload, read on stdin, along, and never fails
the agent's session: with no relay to answer it says so in one line and exits 0, at once. Hot: stdlib
only.
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
SANDBOX_MARK = "SANDBOX_RUNTIME"  # Claude Code's sandbox (worker.boundary.reach): its proxy is the way out
CONNECT_TIMEOUT = 10.0
HOOK_TIMEOUT = 8.0
"""Seconds a relayed hook waits for the relay's answer (a hook prints nothing on the way): under the 10 s
Gemini CLI gives a hook (worker.programs.gemini.program.HOOK_TIMEOUT_MS), so a hung relay costs an event,
not the hook."""
# the sandbox's proxy refused a connection now and then on a loaded machine (seen once in a full run, the
# calls before and after it went through): nothing was sent yet, so it is asked again, this many times
PROXY_TRIES = 4
PROXY_PAUSE = 0.25


class RelayDown(Exception):
    """The relay cannot be reached, or did not answer as a relay does; `maybe_ran`: it took the command
    and went away before answering."""

    def __init__(self, message: str, maybe_ran: bool = False) -> None:
        super().__init__(message)
        self.maybe_ran = maybe_ran


def _queue(line: bytes) -> str:
    """A hook the relay did not take, left in the agent's queue for the worker (worker.boundary.
    relay_queue); what to say of it, or "" when there is no queue or it cannot be written."""
    from bus.settings.relay_port import RELAY_QUEUE

    folder = os.environ.get(RELAY_QUEUE, "")
    if not folder:
        return ""
    from worker.boundary import relay_queue  # here only: every relayed `ib` imports this module

    try:
        relay_queue.put(folder, line)
    except OSError as e:
        print(f"ib hook: the agent's queue cannot take the hook: {e.strerror or e}", file=sys.stderr)
        return ""
    return "the worker's relay is not running; the hook waits in the agent's queue for the worker"


def configured() -> bool:
    return bool(os.environ.get(RELAY))


def is_hook(argv: list[str]) -> bool:
    return bool(argv) and argv[0] == "hook"


ARGV_HOOKS = frozenset({"codex-notify"})
"""Hooks whose payload is their last argument, not their stdin (Codex's notify program): their stdin is
not read (it may be the program's terminal, which never ends)."""


def reads_stdin(argv: list[str]) -> bool:
    """Whether the command reads its stdin: a hook's payload (but for the hooks in ARGV_HOOKS), or a `-` for
    a file or message (`ib notify -`, `--body-file -`)."""
    if is_hook(argv):
        return len(argv) < 2 or argv[1] not in ARGV_HOOKS
    return any(arg == "-" or arg.endswith("=-") for arg in argv[1:])


def forward(argv: list[str]) -> int:
    """Run `ib argv` through the relay; print what it printed; its exit code (1, with one line, when the
    relay cannot be reached: then nothing was done). A hook exits 0 whatever happened: it never fails the
    agent's session."""
    stdin = sys.stdin.buffer.read(MAX_LINE) if reads_stdin(argv) else None
    request = Request(tuple(argv), os.getcwd(), stdin)
    line = encode_request(request)
    try:
        reply = _exchange(line, HOOK_TIMEOUT if is_hook(argv) else None)
    except RelayDown as e:
        if is_hook(argv) and not e.maybe_ran and (queued := _queue(line)):
            print(f"ib {' '.join(argv[:2])}: {queued}", file=sys.stderr)
            return 0
        print(f"ib {' '.join(argv[:2]) if is_hook(argv) else argv[0]}: error: {e}", file=sys.stderr)
        return 0 if is_hook(argv) else 1
    _write(Chunk("stdout", reply.stdout))
    _write(Chunk("stderr", reply.stderr))
    return 0 if is_hook(argv) else reply.code  # a hook the relay refused says why on stderr, and goes on


def _write(chunk: Chunk) -> None:
    """What the command printed, as it printed it (`ib look --follow` goes on until it is stopped)."""
    out = sys.stdout.buffer if chunk.stream == "stdout" else sys.stderr.buffer
    out.write(chunk.data)
    out.flush()


def _exchange(line: bytes, timeout: float | None) -> Reply:
    try:
        return _ask(line, timeout)
    except RelayDown as e:
        raise RelayDown(
            f"cannot reach the worker's relay from inside the sandbox ({e}); nothing was done. "
            "Is `ib worker` (or `ib up`) running?"
        ) from None
    except RelayGone as e:
        raise RelayDown(
            f"the worker's relay went away before it answered ({e}); the command may have run", maybe_ran=True
        ) from None


class RelayGone(Exception):
    """The relay took the command and closed the connection without an answer."""


def _ask(line: bytes, timeout: float | None) -> Reply:
    """Send the request line, read the answer; `timeout`: seconds to wait for each piece of it (None: the
    command may wait as long as it likes, `ib ask` does)."""
    target = os.environ.get(RELAY, "")
    try:
        conn, file = _through_proxy(target) if os.environ.get(SANDBOX_MARK) == "1" else _direct(target)
        with conn:
            conn.settimeout(timeout)
            conn.sendall(line)
            return _answer(file, target)
    except TimeoutError:
        raise RelayGone(f"{target} gave no answer in time") from None
    except OSError as e:
        raise RelayDown(f"{target}: {e.strerror or e}") from None
    except BadLine as e:
        raise RelayDown(str(e)) from None


def _direct(target: str) -> tuple[socket.socket, BinaryIO]:
    """A connection to the relay itself: the box is on the machine's network, and the relay is on loopback.
    Nothing listening there is said at once (connection refused)."""
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise RelayDown(f"IB_RELAY is not host:port ({target!r})")
    try:
        conn = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT)
    except OSError as e:
        raise RelayDown(f"{target}: {e.strerror or e}") from None
    return conn, conn.makefile("rb")


def _through_proxy(target: str) -> tuple[socket.socket, BinaryIO]:
    """A tunnel to the relay through Claude Code's proxy (its sandbox has no network of its own), and the
    reader that read the proxy's answer (it may hold the relay's first bytes already)."""
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy") or ""
    found = proxy_authority(proxy)
    if found is None:
        raise RelayDown("no HTTPS_PROXY of Claude Code's sandbox here")
    host, port, auth = found
    conn = _dial(host, port)
    try:
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
    except BaseException:
        conn.close()
        raise
    return conn, file


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
