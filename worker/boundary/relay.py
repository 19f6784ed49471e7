"""The worker's relay: `ib` commands from inside agents' sandboxes, run as the agent that sent them.

It listens on one loopback port (kept in `.ib/relay-port`, so agents spawned before a worker restart
still find it), the only address the agents' sandbox settings let through Claude Code's proxy. Who asks
is read from the connection, never from the request: the peer socket of an accepted connection is
owned by the proxy, i.e. by the agent's Claude Code process (found through /proc/net/tcp and
/proc/*/fd), whose environment — set by the spawn, unchangeable by the agent — names the agent. From
ittybus's bubblewrap box (Gemini CLI's and Codex CLI's hooks and commands, which dial the relay
themselves) the peer is a process the agent controls, which may put any `IB_AGENT_ID` in its own
environment: the agent is then named by the outermost ancestor carrying one (`identity.caller_at`), the
box's bwrap process the spawn started, outside the box's PID namespace, where the agent cannot reach. A
connection that no agent's process owns is refused.

The command then runs as a child `ib` outside the sandbox, in the agent's worktree, with the agent's own
`IB_*` environment and `IB_RELAYED=1`: there `identity.agent_caller` makes it that agent (a mark that
can only narrow rights: a process without an agent ancestor is the person's already), and the guard
applies the agent's allow-list and confines its paths, as for the `ib` Claude Code runs outside the
sandbox. The bus password stays here: the sandbox gets output and an exit code, nothing else; a boxed
agent's pane has no bus address at all, so the child gets the worker's own (`bus_url`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import socket
import subprocess
import threading
from typing import IO

from bus.settings.relay_port import HOST, VIA_RELAY
from worker.boundary.identity import RELAYED, AgentCaller, caller_at
from worker.boundary.paths import inside
from worker.boundary.relay_wire import (
    MAX_LINE,
    BadLine,
    Chunk,
    Reply,
    Request,
    decode_request,
    encode_chunk,
    encode_reply,
    socket_inode,
)

log = logging.getLogger(__name__)
REQUEST_TIMEOUT = 30.0


def owners(inode: int, proc: str = "/proc") -> list[int]:
    """The processes holding socket `inode` open."""
    target = f"socket:[{inode}]"
    found = []
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"{proc}/{name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"{proc}/{name}/fd/{fd}") == target:
                        found.append(int(name))
                        break
    return found


def caller_of_peer(peer: tuple[str, int], relay: tuple[str, int], proc: str = "/proc") -> AgentCaller | str:
    """The agent whose process holds the other end of an accepted connection; else why not, in words."""
    try:
        with open(f"{proc}/net/tcp", encoding="ascii") as f:
            inode = socket_inode(f.read(), peer, relay)
    except OSError as e:
        return f"cannot read {proc}/net/tcp: {e.strerror}"
    if inode is None:
        return f"no socket of this machine is the peer {peer[0]}:{peer[1]}"
    agents = {
        caller.id: caller for pid in owners(inode, proc) if (caller := caller_at(pid, proc)) is not None
    }
    if len(agents) != 1:
        return (
            "the relay serves agents' sandboxed commands only" if not agents else "two agents share a socket"
        )
    return next(iter(agents.values()))


class Relay:
    """The listening socket and a thread per connection; `close` stops it."""

    def __init__(self, ib_command: str, port: int, bus_url: str | None = None) -> None:
        self.ib_command = ib_command
        self.bus_url = bus_url  # the worker's own IB_REDIS_URL (None: the repository's embedded bus)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((HOST, port))
        self.listener.listen(16)
        self.address: tuple[str, int] = self.listener.getsockname()
        self.thread = threading.Thread(target=self._accept, name="relay", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(conn, peer), name="relay-conn", daemon=True).start()

    def _serve(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        with conn:
            caller = caller_of_peer(peer, self.address)
            if isinstance(caller, str):
                log.warning("relay: refused a connection from %s:%s: %s", *peer, caller)
                return _send(conn, Reply(1, stderr=f"ib: error: {caller}\n".encode()))
            conn.settimeout(REQUEST_TIMEOUT)  # the command line comes at once; the answer may take long
            try:
                line = conn.makefile("rb").readline(MAX_LINE + 1)
                request = decode_request(line)
                conn.settimeout(None)
            except (BadLine, OSError) as e:
                return _send(conn, Reply(2, stderr=f"ib: error: the relay got no command ({e})\n".encode()))
            _send(conn, self.run(conn, caller, request))

    def run(self, conn: socket.socket, caller: AgentCaller, request: Request) -> Reply:
        """`ib argv` as `caller`, from its worktree: the same guard as the `ib` Claude Code runs outside.
        What it prints goes back as it comes; its exit code is the reply."""
        started = self._start(caller, request)
        if isinstance(started, Reply):
            return started
        code = Passing(conn, started).run(request.stdin or b"")
        return Reply(code if code >= 0 else 128 - code)  # killed: as a shell says

    def replay(self, caller: AgentCaller, request: Request) -> Reply:
        """`ib argv` as `caller`, as `run` does, for a hook that waited in the agent's queue while no
        worker ran (worker.boundary.relay_queue): nobody waits for its output, which comes back whole."""
        started = self._start(caller, request)
        if isinstance(started, Reply):
            return started
        try:
            out, err = started.communicate(request.stdin or b"", timeout=REQUEST_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(started.pid, signal.SIGKILL)
            out, err = started.communicate()
        return Reply(started.returncode, out, err)

    def _start(self, caller: AgentCaller, request: Request) -> subprocess.Popen[bytes] | Reply:
        """The child `ib` of a request, running; or the reply that says why it cannot run."""
        cwd = os.path.realpath(request.cwd)
        home = os.path.realpath(caller.worktree)
        name = request.argv[0]
        if not caller.worktree or not inside(cwd, home) or not os.path.isdir(cwd):
            why = f"ib {name}: error: agent {caller.id} runs ib only inside its worktree {home} (not {cwd})\n"
            return Reply(1, stderr=why.encode())
        env = {k: v for k, v in os.environ.items() if not k.startswith("IB_") and k != "SANDBOX_RUNTIME"}
        env.update(caller.environ)
        env.pop(VIA_RELAY, None)  # here it reaches the bus itself
        if self.bus_url:  # a boxed agent's pane has no bus address: the worker's own one
            env["IB_REDIS_URL"] = self.bus_url
        env[RELAYED] = "1"
        log.info("relay: agent %s runs ib %s", caller.id, " ".join(request.argv)[:200])
        try:
            return subprocess.Popen(
                [self.ib_command, *request.argv],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own group: stopped whole when the caller hangs up
            )
        except OSError as e:
            return Reply(1, stderr=f"ib {name}: error: the relay cannot run ib: {e.strerror or e}\n".encode())


class Passing:
    """One relayed command on its way: its stdin fed, its output sent as it comes, and the command stopped
    the moment the caller hangs up (the agent's Bash tool timed out, or the person pressed Esc): an
    `ib look --follow` or an unanswered `ib ask` must not outlive the agent's command."""

    def __init__(self, conn: socket.socket, child: subprocess.Popen[bytes]) -> None:
        self.conn, self.child = conn, child
        self.sending = threading.Lock()
        self.finished = threading.Event()
        self.caller_gone = False

    def run(self, stdin: bytes) -> int:
        threads = [
            threading.Thread(target=self._feed, args=(stdin,), name="relay-stdin", daemon=True),
            threading.Thread(
                target=self._pump, args=(self.child.stdout, "stdout"), name="relay-out", daemon=True
            ),
            threading.Thread(
                target=self._pump, args=(self.child.stderr, "stderr"), name="relay-err", daemon=True
            ),
            threading.Thread(target=self._hang_up_watch, name="relay-watch", daemon=True),
        ]
        for thread in threads:
            thread.start()
        code = self.child.wait()
        for thread in threads[:3]:
            thread.join()
        self.finished.set()
        return code

    def _feed(self, stdin: bytes) -> None:
        assert self.child.stdin is not None
        with contextlib.suppress(OSError):  # a command that exits without reading it
            self.child.stdin.write(stdin)
        with contextlib.suppress(OSError):
            self.child.stdin.close()

    def _pump(self, pipe: IO[bytes] | None, stream: str) -> None:
        assert pipe is not None
        reader = io.BufferedReader(io.FileIO(pipe.fileno(), closefd=False))
        while data := reader.read1(CHUNK):  # to the end, so the command never blocks on a full pipe
            if self.caller_gone:
                continue
            try:
                with self.sending:
                    self.conn.sendall(encode_chunk(Chunk(stream, data)))
            except OSError:
                self.caller_gone = True
                self.stop("the caller is gone")
        pipe.close()

    def _hang_up_watch(self) -> None:
        """The caller sends nothing after its command line: its connection reads empty (or fails) only when
        it hangs up, or when the relay closes it after the reply."""
        with contextlib.suppress(OSError):
            while self.conn.recv(4096):
                continue  # bytes after the command line mean nothing
        if not self.finished.is_set():
            self.stop("the caller hung up")

    def stop(self, why: str) -> None:
        if self.child.poll() is not None:
            return
        log.info("relay: stopping ib (pid %s): %s", self.child.pid, why)
        with contextlib.suppress(OSError):
            os.killpg(self.child.pid, signal.SIGTERM)
        try:
            self.child.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.child.pid, signal.SIGKILL)


CHUNK = 65536
STOP_GRACE = 5.0
"""Seconds a relayed command has to end after SIGTERM before it is killed."""


def _send(conn: socket.socket, reply: Reply) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(encode_reply(reply))
