"""Who runs this `ib`: a person, or an agent and which, read from the process ancestry.

The worker starts an agent's pane program with a fixed environment (`IB_AGENT_ID` and friends, see
worker.agents.spawn); every process the agent runs descends from it, and none can change an ancestor's
`/proc/<pid>/environ`. So the outermost ancestor carrying `IB_AGENT_ID` names the agent, whatever the
agent put in the environment of its own `ib`. A person's shell has no such ancestor. Hot: stdlib only.
"""

from __future__ import annotations

import itertools
import os

from bus.wire.record import Record

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

AGENT_ID = "IB_AGENT_ID"
RELAYED = "IB_RELAYED"
"""Set by the worker's relay on the `ib` it runs for an agent's sandboxed command (worker.boundary.relay)."""
PROC = "/proc"
MAX_DEPTH = 64  # a parent chain longer than this is not a real one


class AgentCaller(Record):
    """The agent this process acts for: its id, role and worktree, and the `IB_*` environment its pane
    program was started with (which replaces whatever `IB_*` this process was given)."""

    __slots__ = ("environ", "id", "pid", "role", "worktree")

    def __init__(self, pid: int, environ: dict[str, str]) -> None:
        self.pid, self.environ = pid, environ
        self.id = environ[AGENT_ID]
        self.role = environ.get("IB_AGENT_ROLE") or "worker"  # unknown: the narrower role
        self.worktree = environ.get("IB_AGENT_WORKTREE") or environ.get("IB_ROOT") or ""


def parent_of(pid: int, proc: str = PROC) -> int | None:
    """The parent pid from `/proc/<pid>/stat` (the fields after the command name, which may hold `)`)."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def environ_of(pid: int, proc: str = PROC) -> dict[str, str] | None:
    """The environment `pid` was started with, or None when it cannot be read (another user's process)."""
    try:
        with open(f"{proc}/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    found: dict[str, str] = {}
    for item in raw.split(b"\0"):
        name, eq, value = item.partition(b"=")
        if eq:
            found[name.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
    return found


def ancestors(pid: int, proc: str = PROC) -> Iterator[int]:
    """`pid`'s parent, its parent, ... up to (not including) pid 0."""
    seen = {pid}
    current: int | None = pid
    for _ in range(MAX_DEPTH):
        current = parent_of(current, proc) if current is not None else None
        if not current or current in seen:
            return
        seen.add(current)
        yield current


def caller_of(pid: int, proc: str = PROC) -> AgentCaller | None:
    """The agent `pid` acts for: the outermost ancestor whose environment names one; None for a person."""
    return _outermost(ancestors(pid, proc), proc)


def caller_at(pid: int, proc: str = PROC) -> AgentCaller | None:
    """The agent process `pid` belongs to: itself or an ancestor (the relay asks this of the Claude Code
    process that owns a socket; its own environment names the agent)."""
    return _outermost(itertools.chain((pid,), ancestors(pid, proc)), proc)


def _outermost(pids: Iterable[int], proc: str) -> AgentCaller | None:
    outermost: AgentCaller | None = None
    for ancestor in pids:
        environ = environ_of(ancestor, proc)
        if environ and environ.get(AGENT_ID):
            ib_only = {k: v for k, v in environ.items() if k.startswith("IB_")}
            outermost = AgentCaller(ancestor, ib_only)
    return outermost


_known: list[AgentCaller | None] = []


def agent_caller() -> AgentCaller | None:
    """The agent this `ib` process acts for (computed once). Where there is no /proc (macOS) it falls
    back to `IB_AGENT_ID`, which the agent controls: the README says so.

    A process with no agent ancestor that carries `IB_RELAYED=1` and an `IB_AGENT_ID` acts for that
    agent: the worker's relay runs the sandboxed commands of agents so. Only a person's process can be
    such a one, and the mark only narrows what it may do; an agent's own process is its agent whatever
    it sets."""
    if not _known:
        _known.append(caller_for(os.getpid(), os.environ))
    return _known[0]


def caller_for(pid: int, environ: Mapping[str, str]) -> AgentCaller | None:
    """The agent process `pid`, started with `environ`, acts for (see agent_caller)."""
    ib_only = {k: v for k, v in environ.items() if k.startswith("IB_")}
    if not os.path.isdir(f"{PROC}/self"):
        return AgentCaller(pid, ib_only) if ib_only.get(AGENT_ID) else None
    found = caller_of(pid)
    if found is None and ib_only.get(RELAYED) == "1" and ib_only.get(AGENT_ID):
        found = AgentCaller(pid, ib_only)
    return found


def adopt_caller(pid: int, environ: Mapping[str, str]) -> None:
    """Make this process act for whom process `pid` (started with `environ`) acts for: the warm `ib`'s
    command process (worker.cli.warm) runs its client's command, and its own ancestry is the server's."""
    _known[:] = [caller_for(pid, environ)]


def act_as(caller: AgentCaller) -> None:
    """Make this process's `IB_*` environment the agent's own: a forged `IB_AGENT_ID`, `IB_WORKER_ID`,
    `IB_NAMESPACE` or `IB_REDIS_URL` given to this `ib` is dropped, the pane's values put back."""
    for name in [n for n in os.environ if n.startswith("IB_")]:
        del os.environ[name]
    os.environ.update(caller.environ)
