"""Writes that must outlive a failover: sent with `WAIT replicas ms` behind them, on the same connection.

`WAIT` counts the replicas holding every write *this connection* made, so the write and its `WAIT` share
one connection and one round trip here (inside `MULTI` Redis answers `WAIT` at once, without waiting).
The setting is the publish's (`IB_REDIS_WAIT_REPLICAS`, `IB_REDIS_WAIT_MS`; 1 replica behind Sentinel).
A write no replica confirmed in time is on the primary already: NotReplicated says so in one line, and the
caller's operation fails like one Redis did not answer, never silently. Just after a failover the replicas
are attached to the new primary but still syncing, and acknowledge nothing for a few seconds; before that,
until Sentinel has told them to follow it, none is attached at all (over a second on a loaded machine).
So while as many replicas as wanted are attached, or the primary is one that was promoted, the `WAIT` is
asked again, for up to SYNC_GRACE_S more (bus.events.append_once.waited_out, shared with the light client).
The cost: a promoted primary whose replicas are gone for good fails such a write after SYNC_GRACE_S
rather than after the `WAIT`'s own ms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
from redis.client import Pipeline

from bus.events.append_once import replicated, waited_out

Wait = tuple[int, int]  # (replicas, ms): how many replicas must hold a write, and for how long to wait
NO_WAIT: Wait = (0, 0)


def confirmed(client: redis.Redis, commands: Sequence[Sequence[Any]], wait: Wait, what: str) -> list[Any]:
    """Send `commands`, then `WAIT`, on one connection in one round trip; their raw replies. An error reply
    is raised (the first one); then NotReplicated when fewer than `wait`'s replicas hold the writes."""
    replicas, ms = wait
    pool = client.connection_pool
    conn: Any = pool.get_connection()  # redis-py's Connection is untyped
    try:
        conn.send_packed_command(conn.pack_commands([*commands, ("WAIT", replicas, ms)]))
        replies = [_reply(conn) for _ in commands]
        # the WAIT may take its whole `ms` on top of the socket timeout a command gets
        patience = conn.socket_timeout + ms / 1000 if conn.socket_timeout else None
        replies.append(_reply(conn, patience))

        def ask(command: tuple[str | int, ...], more: float) -> Any:
            conn.send_command(*command)
            return _reply(conn, patience if more else None)

        replies[-1] = waited_out(ask, replies[-1], replicas, ms)
    except BaseException:
        conn.disconnect()  # replies may be left unread on it: it never goes back to the pool half-read
        raise
    finally:
        pool.release(conn)
    for found in replies[:-1]:
        if isinstance(found, redis.ResponseError):
            raise found
    replicated(replies[-1], replicas, ms, what)
    return replies[:-1]


def commit(client: redis.Redis, pipe: Pipeline, wait: Wait, what: str) -> list[Any]:
    """Run the commands queued on the transaction `pipe`; with `wait`, as `MULTI … EXEC` then `WAIT` on one
    connection (raw replies, an error inside the transaction raised). Without, `pipe.execute()`."""
    if not wait[0]:
        return pipe.execute()
    commands = [("MULTI",), *(args for args, _options in pipe.command_stack), ("EXEC",)]
    pipe.reset()
    executed = confirmed(client, commands, wait, what)[-1]
    for found in executed:
        if isinstance(found, redis.ResponseError):
            raise found
    return list(executed)


def _reply(conn: Any, timeout: float | None = None) -> Any:
    try:
        return conn.read_response() if timeout is None else conn.read_response(timeout=timeout)
    except redis.ResponseError as e:  # read on, so the connection stays in step with its replies
        return e
