"""The loopback port of this repository's relay (worker.boundary.relay): recorded in `.ib/relay-port`
so that the spawn, which writes it into an agent's sandbox settings, and the worker, which listens on
it, agree, and agents spawned before a worker restart still find it. Not a secret: the relay trusts the
connection, not the port. Stdlib only.
"""

from __future__ import annotations

import os

HOST = "127.0.0.1"
PORT_FILE = "relay-port"
VIA_RELAY = "IB_VIA_RELAY"
"""Set to 1 in the pane of an agent whose program runs in ittybus's bubblewrap box without the bus's
address (Gemini CLI, Codex CLI): every `ib` there, its hooks included, goes to the relay, which runs it
outside."""
RELAY_QUEUE = "IB_RELAY_QUEUE"
"""The folder, in a boxed agent's pane, where its hooks wait while no worker runs (worker.boundary.
relay_queue)."""


def relay_port(state_dir: str) -> int:
    """The recorded port, or a free one, recorded."""
    recorded = os.path.join(state_dir, PORT_FILE)
    port = _recorded(recorded)
    if port is not None:
        return port
    import socket  # not at the top: the hooks' path reads VIA_RELAY from here

    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port = int(probe.getsockname()[1])
    with open(recorded, "w", encoding="utf-8") as f:
        f.write(f"{port}\n")
    return port


def relay_address(state_dir: str) -> str:
    return f"{HOST}:{relay_port(state_dir)}"


def _recorded(path: str) -> int | None:
    """The port in `path`, None when there is none usable (no file, not a port). Not contextlib: the hooks'
    path reads VIA_RELAY from this module, and contextlib costs it milliseconds."""
    try:
        with open(path, encoding="utf-8") as f:
            port = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return port if 0 < port < 65536 else None
