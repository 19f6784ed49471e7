"""Writing one message into a Claude Code session's inbox socket (JSON lines: auth, then the message).

The session never answers; the sender sees EOF. A socket that is gone (the session exited), refuses
(killed: the file stays, its process gone or a zombie), is not a socket, or belongs to another user is
*stale*: the caller drops the session. Anything else (a timeout, a busy machine) is worth another try later.
"""

from __future__ import annotations

import json
import os
import socket
import stat

CONNECT_TIMEOUT = 2.0
LINE_LIMIT = 1_048_576  # characters of one line Claude Code 2.1.332 reads; a longer one resets the connection


class StaleSession(Exception):
    """The session cannot be reached any more; the message says why in a few words."""


def problem(path: str) -> str | None:
    """Why `path` cannot be a live session's socket, without connecting; None when it may be."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "its socket is gone (the session exited)"
    except OSError as e:
        return f"its socket cannot be read ({e.strerror or e})"
    if not stat.S_ISSOCK(info.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(info.st_mode)
            else "a symlink"
            if stat.S_ISLNK(info.st_mode)
            else "a file"
        )
        return f"{path} is {kind}, not a socket"
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {info.st_uid})"
    return None


def stale(path: str, pid: int) -> str | None:
    """Why the session at `path` (its process `pid`, 0 when unknown) is gone, without writing to it: its
    socket is not one (`problem`), or its process is gone, as after `kill -9` (the socket file stays),
    reaped or not: tmux 3.3a can miss the SIGCHLD of a pane's program and leave it a zombie for good.
    None when it may be alive. Only on the session's own machine."""
    why = problem(path)
    if why or pid <= 0:
        return why
    gone = f"its process (pid {pid}) is gone (the session was killed)"
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # PermissionError: another user's process has the pid now
        return gone
    return gone if _ended(pid) else None


def process_state(stat: str) -> str:
    """The state letter (R, S, D, Z, ...) of a `/proc/<pid>/stat` line, "" when it has none. Pure."""
    fields = stat.rpartition(")")[2].split()  # after the name, which may hold spaces and parentheses
    return fields[0] if fields else ""


def _ended(pid: int) -> bool:
    """Whether `pid` is a process that ended and waits to be reaped (a zombie); False without /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            return process_state(stat.read()) in ("Z", "X")
    except OSError:
        return False


def wire(token: str, text: str) -> bytes:
    """The bytes for one message: the auth line and the user message line. Pure."""
    auth = json.dumps({"type": "auth", "token": token})
    message = json.dumps({"type": "user", "message": {"role": "user", "content": text}})
    if len(message) > LINE_LIMIT:
        raise ValueError(f"a message line of {len(message)} characters is over the inbox's {LINE_LIMIT}")
    return f"{auth}\n{message}\n".encode()


def deliver(path: str, token: str, text: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Write one message; StaleSession when the session is gone, OSError for a failure worth retrying."""
    why = problem(path)
    if why:
        raise StaleSession(why)
    data = wire(token, text)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        try:
            conn.connect(path)
        except ConnectionRefusedError as e:
            raise StaleSession("nobody listens on its socket (the session was killed)") from e
        except FileNotFoundError as e:
            raise StaleSession("its socket is gone (the session exited)") from e
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        conn.recv(1)  # EOF: the session read it all (it never answers)
