"""A tmux control-mode client (`tmux -C`) that a long-running process keeps open, so the reads it runs
(worker.tmux.control_mode.READS) cost a line written and a reply read instead of a tmux process each.

A control client must be attached to a session; this one makes its own, `ittybus-control-<pid>-<n>`.
Closing the client kills that session through it; the session's one pane waits on the process that made
it and ends with it, so the session goes too however that process goes (killed included). Not tmux's
`destroy-unattached`: tmux 3.3a to 3.5 crash (SIGSEGV, and every agent's session with them) when the
client of such a session is killed while another client comes and goes (tmux/tmux PR 5497; 1 kill in 12
beside stress-ng here). It never starts a server (`-N`): with none running, or once the one it was
attached to is gone, `run` answers None and the caller runs a tmux process; the next call after RETRY
seconds tries again, on whichever server then answers to the same `-L` / `-f`."""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from worker.tmux.control_mode import (
    CLIENT_FLAGS,
    SESSION_PREFIX,
    Reply,
    ReplyFramer,
    control_argument,
    control_line,
)
from worker.tmux.parse import command_line

RETRY = 1.0  # seconds between tries to start a client: with no server each try costs a process start
CLOSE_WAIT = 1.0  # seconds a closed client gets to leave before it is killed
OWNER_POLL = 2  # seconds between the session's looks at whether the process that made it still runs


class ControlClient:
    """One control client on the server `base` names (`tmux -u [-L name] [-f file]`), started by the first
    call that needs it; calls take turns (a lock), so each reply is the one for the line just written."""

    def __init__(self, base: Sequence[str], env: Mapping[str, str]) -> None:
        self.base, self.env = list(base), dict(env)
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[Reply | None] = queue.Queue()  # None: the client's output ended
        self._started = itertools.count(1)
        self._retry_at = 0.0
        self._owner: int | None = os.getpid()  # None once closed; a forked child's calls run tmux processes
        self.session = ""

    def run(self, commands: Sequence[Sequence[str]], timeout: float) -> Reply | None:
        """The reply to `commands` run in order (their output joined, or the first one's `%error`); None
        when a tmux process must run them: not reads it may run, or no client. TimeoutError when no reply
        came in `timeout` seconds (the client is then closed)."""
        line = control_line(commands)
        if line is None or self._owner != os.getpid():
            return None
        with self._lock:
            process = self._running()
            if process is None or process.stdin is None:
                return None
            try:
                process.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
                process.stdin.flush()
            except OSError:  # the client left between the check and the write
                self._close()
                return None
            return self._reply(len(commands), time.monotonic() + timeout)

    def close(self) -> None:
        """End the client (tmux destroys its session with it) for good: `run` answers None from now on."""
        with self._lock:
            self._owner = None
            self._close()

    def _reply(self, count: int, deadline: float) -> Reply | None:
        replies: list[Reply] = []
        while len(replies) < count:
            try:
                reply = self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._close()
                raise TimeoutError from None
            if reply is None:  # the server went away mid-call (killed, restarted)
                self._close()
                return None
            if not reply.ok:
                return reply  # tmux runs none of the commands after a failing one
            replies.append(reply)
        return Reply(replies[0].number, True, True, "".join(reply.text for reply in replies))

    def _running(self) -> subprocess.Popen[bytes] | None:
        """The client, started when there is none and the last try is RETRY seconds old."""
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._close()
        if self._owner is None or time.monotonic() < self._retry_at:
            return None
        self._retry_at = time.monotonic() + RETRY
        self.session = f"{SESSION_PREFIX}{os.getpid()}-{next(self._started)}"
        start = ["new-session", "-s", self.session, "-f", CLIENT_FLAGS, _pane_command(os.getpid())]
        try:
            self._process = subprocess.Popen(
                [*self.base, "-N", "-C", *command_line(start)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # "no server running": the calls go to tmux processes meanwhile
                env=self.env,
            )
        except OSError:  # no tmux: the tmux process the caller runs says so
            return None
        self._replies = queue.Queue()
        assert self._process.stdout is not None
        reader = threading.Thread(
            target=_read, args=(self._process.stdout, self._replies), name="tmux-control", daemon=True
        )
        reader.start()
        return self._process

    def _close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            kill = " ".join(control_argument(arg) for arg in ("kill-session", "-t", f"={self.session}"))
            with contextlib.suppress(OSError):  # a client gone already: its session ends with this process
                process.stdin.write(kill.encode() + b"\n")
                process.stdin.flush()
            with contextlib.suppress(OSError):
                process.stdin.close()  # the client exits with its session, or at the end of its input
        try:
            process.wait(timeout=CLOSE_WAIT)
        except subprocess.TimeoutExpired:  # a stuck server keeps it waiting
            process.kill()
            process.wait()


def _read(output: IO[bytes], replies: queue.Queue[Reply | None]) -> None:
    """The client's output into `replies`: the replies to the lines written, then None at its end."""
    framer = ReplyFramer()
    for raw in output:
        reply = framer.feed(raw.removesuffix(b"\n").decode("utf-8", "replace"))
        if reply is not None and reply.ours:
            replies.put(reply)
    output.close()
    replies.put(None)


def _pane_command(owner: int) -> str:
    """What the client's session shows a person who attaches to it, then a wait in `sh` (whatever the
    person's shell) until the process `owner` is gone: the pane ends then, and the session with it."""
    said = f"ittybus: the tmux control client of process {owner}; it closes when that process exits."
    wait = f"while kill -0 {owner} 2>/dev/null; do sleep {OWNER_POLL}; done"
    return f"printf '%s\\n' '{said}'; exec sh -c '{wait}'"
