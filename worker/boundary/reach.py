"""`ib` inside Claude Code's sandbox (a compound line, a pipe, a script the agent wrote): it reaches the bus
as it is, or it says in one line that it cannot. It never starts a bus of its own there: that one would
live in the sandbox's private view of `.ib/`, take the event, print its stream id, and vanish. In the
bubblewrap box of a Gemini CLI or Codex CLI agent there is no bus address at all: every `ib` goes to the
relay. Hot.
"""

from __future__ import annotations

import os

from bus.errors import BusError
from bus.settings.relay_port import VIA_RELAY

SANDBOX_MARK = "SANDBOX_RUNTIME"
"""Claude Code puts `SANDBOX_RUNTIME=1` in the environment of every command it runs in its sandbox."""
CANNOT = (
    "cannot reach the bus from inside the sandbox; run ib as a command of its own "
    "(not after `&&` or `;`, in a pipe, a subshell or a script)"
)
_NO_BUS_NEEDED = frozenset({"--help", "-h", "--version", "-V"})


BOXED = (
    "this agent's box holds no bus address: ib runs through the worker's relay, "
    "and IB_RELAY (where the relay listens) is not set"
)


def sandboxed() -> bool:
    return os.environ.get(SANDBOX_MARK) == "1"


def relayed_only() -> bool:
    """Inside the bubblewrap box of an agent whose pane has no bus address (Gemini CLI's, Codex CLI's): the
    spawn marks it, and the mark comes from the pane's environment (worker.boundary.identity.act_as), not
    the agent's."""
    return os.environ.get(VIA_RELAY) == "1"


def unreachable(argv: list[str]) -> str | None:
    """Why `ib argv` cannot run here: inside the sandbox with no bus that answers, or in a box whose `ib`
    goes only through the relay; None otherwise."""
    if not argv or _NO_BUS_NEEDED & set(argv):
        return None
    if relayed_only():
        return BOXED
    if not sandboxed():
        return None
    from bus.connection.redis_url import bus_url
    from bus.settings.hotconf import (
        read_hotconf,  # only inside the sandbox: the embedded bus's module is slow
    )
    from bus.wire.address import Address
    from bus.wire.resp import Connection

    try:
        conf = read_hotconf()
        url = bus_url(conf.redis_url, conf.root, start=False, port=conf.embedded_port)
        with Connection(Address.from_url(url), conf.connect_timeout) as conn:
            conn.call("PING")
    except BusError:
        return CANNOT
    return None
