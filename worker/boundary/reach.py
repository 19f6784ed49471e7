"""`ib` inside Claude Code's sandbox (a compound line, a pipe, a script the agent wrote): it reaches the bus
as it is, or it says in one line that it cannot. It never starts a bus of its own there: that one would
live in the sandbox's private view of `.ib/`, take the event, print its stream id, and vanish. Hot.
"""

from __future__ import annotations

import os

from bus.errors import BusError

SANDBOX_MARK = "SANDBOX_RUNTIME"
"""Claude Code puts `SANDBOX_RUNTIME=1` in the environment of every command it runs in its sandbox."""
CANNOT = (
    "cannot reach the bus from inside the sandbox; run ib as a command of its own "
    "(not after `&&` or `;`, in a pipe, a subshell or a script)"
)
_NO_BUS_NEEDED = frozenset({"--help", "-h", "--version", "-V"})


def sandboxed() -> bool:
    return os.environ.get(SANDBOX_MARK) == "1"


def unreachable(argv: list[str]) -> str | None:
    """Why `ib argv` cannot run here: inside the sandbox with no bus that answers; None otherwise."""
    if not sandboxed() or not argv or _NO_BUS_NEEDED & set(argv):
        return None
    from bus.address import Address
    from bus.hotconf import read_hotconf  # only inside the sandbox: the embedded bus's module is slow
    from bus.redis_url import bus_url
    from bus.resp import Connection

    try:
        conf = read_hotconf()
        url = bus_url(conf.redis_url, conf.root, start=False, port=conf.embedded_port)
        with Connection(Address.from_url(url), conf.connect_timeout) as conn:
            conn.call("PING")
    except BusError:
        return CANNOT
    return None
