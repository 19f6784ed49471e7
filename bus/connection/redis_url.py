"""Which Redis this process talks to: `IB_REDIS_URL`, else the repository's embedded one.

The embedded one is started on demand.
"""

from __future__ import annotations

from bus.connection.embedded import Embedded
from bus.errors import BusUnavailable, ConfigError

# Said wherever a command needs a bus and has neither a URL nor a repository to find one in.
NO_BUS_HERE = (
    "no IB_REDIS_URL is set and this is not inside a git repository: "
    "cd into your project (or set IB_REDIS_URL to a bus of your own)"
)


def bus_url(redis_url: str | None, root: str | None, start: bool = True, port: int | None = None) -> str:
    """The URL to connect to. Raises ConfigError when there is no bus to name, BusUnavailable when the
    embedded one is not running and `start` is False. `port`: IB_EMBEDDED_PORT, for a start."""
    if redis_url:
        return redis_url
    if root is None:  # nothing to connect to now or later: a spool for it would never be sent
        raise ConfigError(NO_BUS_HERE)
    embedded = Embedded(root, port)
    if start:
        return embedded.ensure()
    url = embedded.alive()
    if url is None:
        raise BusUnavailable(f"the embedded Redis of {root} is not running (start it with: ib bus start)")
    return url
