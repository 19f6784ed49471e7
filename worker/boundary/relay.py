"""The worker's relay: `ib` commands from inside agents' sandboxes, run as the agent that sent them.

It listens on one loopback port (kept in `.ib/relay-port`, so agents spawned before a worker restart
still find it), the only address the agents' sandbox settings let through Claude Code's proxy. Who asks
is read from the connection, never from the request: the peer socket of an accepted connection is
owned by the proxy, i.e. by the agent's Claude Code process (found through /proc/net/tcp and
/proc/*/fd), whose environment — set by the spawn, unchangeable by the agent — names the agent. A
connection that no agent's process owns is refused.

The command then runs as a child `ib` outside the sandbox, in the agent's worktree, with the agent's own
`IB_*` environment and `IB_RELAYED=1`: there `identity.agent_caller` makes it that agent (a mark that
can only narrow rights: a process without an agent ancestor is the person's already), and the guard
applies the agent's allow-list and confines its paths, as for the `ib` Claude Code runs outside the
sandbox. The bus password stays here: the sandbox gets output and an exit code, nothing else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import threading

from bus.relay_port import HOST
from worker.boundary.identity import RELAYED, AgentCaller, caller_at
from worker.boundary.paths import inside
from worker.boundary.relay_wire import (
    MAX_LINE,
    BadLine,
    Reply,
    Request,
    decode_request,
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

    def __init__(self, ib_command: str, port: int) -> None:
        self.ib_command = ib_command
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
            _send(conn, self.run(caller, request))

    def run(self, caller: AgentCaller, request: Request) -> Reply:
        """`ib argv` as `caller`, from its worktree: the same guard as the `ib` Claude Code runs outside."""
        cwd = os.path.realpath(request.cwd)
        home = os.path.realpath(caller.worktree)
        name = request.argv[0]
        if not caller.worktree or not inside(cwd, home) or not os.path.isdir(cwd):
            why = f"ib {name}: error: agent {caller.id} runs ib only inside its worktree {home} (not {cwd})\n"
            return Reply(1, stderr=why.encode())
        env = {k: v for k, v in os.environ.items() if not k.startswith("IB_") and k != "SANDBOX_RUNTIME"}
        env.update(caller.environ)
        env[RELAYED] = "1"
        log.info("relay: agent %s runs ib %s", caller.id, " ".join(request.argv)[:200])
        try:
            done = subprocess.run(
                [self.ib_command, *request.argv],
                cwd=cwd,
                env=env,
                input=request.stdin if request.stdin is not None else b"",
                capture_output=True,
                check=False,
            )
        except OSError as e:
            return Reply(1, stderr=f"ib {name}: error: the relay cannot run ib: {e.strerror or e}\n".encode())
        code = done.returncode if done.returncode >= 0 else 128 - done.returncode  # killed: as a shell says
        return Reply(code, done.stdout, done.stderr)


def _send(conn: socket.socket, reply: Reply) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(encode_reply(reply))
