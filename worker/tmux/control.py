"""A tmux control-mode client (`tmux -C`) that a long-running process keeps open, so the reads it runs
(worker.tmux.control_mode.READS) cost a line written and a reply read instead of a tmux process each.

A control client must be attached to a session; this one makes its own, `ittybus-control-<pid>-<n>`, with
`destroy-unattached` on, so tmux destroys it the moment the client goes, however it goes (closed, its
process or ours killed). It never starts a server (`-N`): with none running, or once the one it was
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

from worker.tmux.control_mode import CLIENT_FLAGS, SESSION_PREFIX, Reply, ReplyFramer, control_line
from worker.tmux.parse import command_line

RETRY = 1.0  # seconds between tries to start a client: with no server each try costs a process start
CLOSE_WAIT = 1.0  # seconds a closed client gets to leave before it is killed


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
        start = ["new-session", "-s", self.session, "-f", CLIENT_FLAGS, _pane_command()]
        own = ["set-option", "-t", f"={self.session}:", "destroy-unattached", "on"]
        try:
            self._process = subprocess.Popen(
                [*self.base, "-N", "-C", *command_line(start, own)],
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
            with contextlib.suppress(OSError):
                process.stdin.close()  # the client detaches and exits
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


def _pane_command() -> str:
    """What the client's session shows a person who attaches to it, then waits on without a shell."""
    said = f"ittybus: the tmux control client of process {os.getpid()}; it closes when that process exits."
    return f"printf '%s\\n' '{said}'; exec cat >/dev/null"
