"""A stand-in for a Claude Code session's inbox socket (a seam we do not own), for the tests of pushing
that need many messages fast: it speaks the wire Claude Code 2.1.332 speaks (JSON lines, auth then
`user` messages, no answer, EOF) and records what arrives. The real CLI is the proof elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from bus.inbox.session_inbox import record_commands
from bus.wire.keys import Keys
from tests.waiting import retry_until


class RecordingInbox:
    """A unix socket at `path` that records each message's text (and the token it came with)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.token = uuid.uuid4().hex
        self.messages: list[str] = []
        self.tokens: list[str] = []
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(16)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
            self._record(data)

    def _record(self, data: bytes) -> None:
        for raw in data.decode().splitlines():
            line: dict[str, Any] = json.loads(raw)
            with self._lock:
                if line.get("type") == "auth":
                    self.tokens.append(str(line.get("token")))
                elif line.get("type") == "user":
                    self.messages.append(str(line["message"]["content"]))

    def texts(self) -> list[str]:
        with self._lock:
            return list(self.messages)

    def close(self) -> None:
        """Stop answering (the socket file stays until the context ends)."""
        self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


def record_session(
    rds: Any, keys: Keys, session_id: str, socket_path: Path, token: str, root: Path, mode: str = ""
) -> None:
    """Record a session as its hook would (bus.inbox.session_inbox), for tests that need no hook run."""
    pipe = rds.pipeline()
    for command in record_commands(
        keys, session_id, (str(socket_path), token), str(root), os.path.realpath(root), mode
    ):
        pipe.execute_command(*command)
    pipe.execute()


def killed_session(folder: Path) -> Path:
    """A socket whose process was killed with SIGKILL: the file stays (as Claude Code's does), named
    `<pid>.sock` as Claude Code names it."""
    proc = _listening(folder)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    path = folder / f"{proc.pid}.sock"
    assert path.exists()
    return path


@contextlib.contextmanager
def unreaped_session(folder: Path) -> Iterator[Path]:
    """A killed session's socket whose process its parent has not reaped (a zombie, as tmux 3.3a may leave
    a pane's program for good): `kill -0` still finds its pid. Reaped on leaving."""
    proc = _listening(folder)
    proc.send_signal(signal.SIGKILL)
    try:
        stat = Path(f"/proc/{proc.pid}/stat")
        retry_until(lambda: stat.read_text().rpartition(")")[2].split()[0] == "Z", 30, 0.01, "a zombie")
        yield folder / f"{proc.pid}.sock"
    finally:
        proc.wait()


def _listening(folder: Path) -> subprocess.Popen[str]:
    """A process listening on `<folder>/<its pid>.sock`, as a Claude Code session does."""
    code = (
        "import os, socket, sys, time\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1] + f'/{os.getpid()}.sock'); s.listen(1)\n"
        "print('up', flush=True); time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    return proc
