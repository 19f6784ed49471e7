"""The hot path's writes that must outlive a failover (a hook finishing or failing a task): the command
and its `WAIT` in one round trip on the light client's connection, as bus.events.replication does for
redis-py."""

from __future__ import annotations

from bus.events.append_once import confirmed_again, replicated

TYPE_CHECKING = False  # keep `typing` off the hooks' path; the checker still reads the imports below
if TYPE_CHECKING:
    from bus.wire.resp import Connection, Reply


def confirmed_call(
    conn: Connection, command: tuple[str | bytes | int | float, ...], wait: tuple[int, int], what: str
) -> Reply:
    """The command's reply, once `wait`'s replicas hold its writes (within the grace after a failover,
    bus.events.append_once.confirmed_again). An error reply is raised (ServerError); then NotReplicated when
    fewer replicas confirmed it in time."""
    replicas, ms = wait
    if not replicas:
        return conn.call(*command)
    from bus.wire.resp import ServerError

    reply, confirmed = conn.pipeline([command, ("WAIT", replicas, ms)], ms / 1000)
    if isinstance(reply, ServerError):
        raise reply
    replicated(confirmed_again(conn, confirmed, replicas, ms), replicas, ms, what)
    return reply
