"""An agent of the pane watcher's tests: its record saved for this worker, and a 200 x 50 pane of the test's
tmux server showing a captured screen as if its program drew it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from tests.waiting import retry_until
from worker.runtime import Runtime


def worker_runtime(redis_url: str, namespace: str, tmux_socket: str, cwd: Path) -> Runtime:
    """A worker's runtime on the test's namespace and tmux server."""
    settings = Settings(redis_url=redis_url, namespace=namespace, tmux_socket=tmux_socket)
    return Runtime(settings, client_for(redis_url), cwd)


def showing(rt: Runtime, agent: Agent, screen: Path | None, shows: str = "") -> None:
    """Save `agent` (its `session` named) and open its pane showing `screen` (nothing when None); waits
    until `shows` is on it."""
    AgentStore(rt.client, rt.keys).save(agent)
    command = f"cat {screen}; sleep 600" if screen is not None else "sleep 600"
    opened = ["new-session", "-d", "-s", agent.session, "-x", "200", "-y", "50", command]
    subprocess.run(["tmux", "-L", str(rt.settings.tmux_socket), *opened], check=True)
    if shows:
        retry_until(lambda: shows in rt.tmux.capture(agent.session), what=f"{shows!r} on screen")
