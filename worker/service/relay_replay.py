"""The hooks boxed agents queued while no worker ran (worker.boundary.relay_queue), run now, as each agent,
oldest first, through the relay's own guard. Each file is deleted after its run, whatever the run said (a
hook that fails now would fail again); a worker stopped in between runs it again rather than lose it.

An agent is known by its queue's folder, and its rights by its pane's program (the box's bwrap process,
whose environment the spawn set). A queue whose agent has no pane left is dropped: its end is the pane
watcher's to tell. The agent writes its queue: what is not a regular file holding a hook request is
removed unread.
"""

from __future__ import annotations

import logging
import time

from worker.agents.layout import RELAY_QUEUE_FOLDER, state_root
from worker.boundary import relay_queue
from worker.boundary.identity import AgentCaller, caller_at
from worker.boundary.relay import Relay
from worker.boundary.relay_wire import BadLine, decode_request
from worker.errors import WorkerError
from worker.runtime import Runtime

log = logging.getLogger(__name__)


def replay_queued(rt: Runtime, relay: Relay, until: float = float("inf")) -> int:
    """Run what waits in every agent's queue of this repository, up to time `until` (time.monotonic; the
    rest waits for the next call); how many hooks ran."""
    ran = 0
    agents = state_root(rt.root) / "agents"
    for folder in sorted(agents.glob(f"*/{RELAY_QUEUE_FOLDER}")):
        files = relay_queue.queued(str(folder))
        if files:
            ran += _replay(rt, relay, folder.parent.name, files, until)
    return ran


def _replay(rt: Runtime, relay: Relay, agent: str, files: list[str], until: float) -> int:
    caller = _caller(rt, agent)
    if caller is None:
        log.info("agent %s has no pane: its %d queued hooks are dropped", agent, len(files))
        for path in files:
            relay_queue.remove(path)
        return 0
    ran = 0
    for path in files:
        if time.monotonic() > until:
            break
        line = relay_queue.read(path)
        try:
            request = decode_request(line if line is not None else b"")
        except BadLine as e:
            why = e if line is not None else "not a regular file of a request's size"
            log.warning("agent %s: queued %s is not a request (%s): removed", agent, path, why)
            relay_queue.remove(path)
            continue
        if request.argv[0] == "hook":
            reply = relay.replay(caller, request)
            ran += 1
            if reply.code != 0:
                log.warning("agent %s: queued ib %s exited %d: %s", agent, request.argv[1:2], reply.code,
                            reply.stderr.decode(errors="replace").strip()[:300])  # fmt: skip
        else:
            log.warning("agent %s: queued %r is not a hook: removed", agent, " ".join(request.argv)[:80])
        relay_queue.remove(path)  # after its run: a worker stopped in between runs it again, never loses it
    log.info("agent %s: ran %d of the hooks it queued while no worker ran", agent, ran)
    return ran


def _caller(rt: Runtime, agent: str) -> AgentCaller | None:
    """The agent as its pane's program names it (None when it has no live pane)."""
    record = rt.agents.find(agent)
    if record is None or not record.session:
        return None
    try:
        pid = rt.tmux.pane_pid(record.session)
    except (WorkerError, OSError):
        return None
    caller = caller_at(pid) if pid is not None else None
    return caller if caller is not None and caller.id == agent else None
