"""Appending an event to the events stream once by its client-made id, over the light client.

A retry after a timeout, a spool flush and the first try all send the same Lua script, which appends
the event only when its mark is not set yet and sets it in the same step (bus/lua/publish_once.lua).
"""

from __future__ import annotations

import time

from bus.errors import BusError, NotReplicated
from bus.wire.keys import Keys
from bus.wire.lua_source import lua

SYNC_GRACE_S = 10.0  # how long replicas that may still confirm a write (after a failover) are waited for
MARK_TTL = 7 * 24 * 3600  # as long as an event may wait in a spool and still be told apart
RETRY_MARK_TTL = 3600  # a long-running process never spools: its marks only outlive its retries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from bus.wire.resp import Connection, Reply

    Ask = Callable[[tuple[str | int, ...], float], Any]  # one command and its extra patience → its reply


def command(
    namespace: str, mark_key: str, body: str, maxlen: int, ttl: int = MARK_TTL
) -> tuple[str | int, ...]:
    """The EVAL that appends `body` unless `mark_key` says it was appended already."""
    return ("EVAL", script(), 2, *arguments(namespace, mark_key, body, maxlen, ttl))


def arguments(namespace: str, mark_key: str, body: str, maxlen: int, ttl: int) -> tuple[str | int, ...]:
    """The script's two keys, then its arguments."""
    return (Keys(namespace).events, mark_key, maxlen, body, ttl)


def outcome(reply: Reply) -> tuple[str, bool]:
    """(the stream id, or what the mark holds; True when appended by this call) from the script's reply."""
    if isinstance(reply, list) and len(reply) == 2 and isinstance(reply[0], bytes):
        return reply[0].decode(), reply[1] == 1
    raise BusError(f"unexpected reply to the publish script: {reply!r}")


def replicated(reply: Reply | object, wanted: int, wait_ms: int, what: str = "the event") -> None:
    """Raise NotReplicated unless the reply to `WAIT wanted wait_ms` says enough replicas hold the writes."""
    if not isinstance(reply, int) or reply < wanted:
        got = str(reply) if isinstance(reply, int) else f"an error: {reply!r}"
        confirmed = f"{got} of {wanted} replica(s) confirmed it in {wait_ms} ms"
        raise NotReplicated(f"Redis took {what} but {confirmed}")


def confirmed_again(conn: Connection, reply: Reply, wanted: int, wait_ms: int) -> object:
    """`waited_out` on the light client's connection."""
    return waited_out(lambda command, patience: conn.pipeline([command], patience)[0], reply, wanted, wait_ms)


def waited_out(ask: Ask, reply: object, wanted: int, wait_ms: int) -> Any:
    """The reply to a `WAIT wanted wait_ms`, asked again (through `ask`: one command and the seconds the
    server may take on top, its reply) while too few replicas confirmed and more may still come
    (`syncing`), for up to SYNC_GRACE_S: a failover's first seconds (bus.events.replication)."""
    deadline = time.monotonic() + SYNC_GRACE_S
    while isinstance(reply, int) and reply < wanted and time.monotonic() < deadline:
        info = ask(("INFO", "replication"), 0.0)
        text = info.decode(errors="replace") if isinstance(info, bytes) else info
        if not isinstance(text, str) or not syncing(text, wanted):
            break
        reply = ask(("WAIT", wanted, wait_ms), wait_ms / 1000)
    return reply


def syncing(info: str, replicas: int) -> bool:
    """Whether replicas may still come to confirm a write, from the text of `INFO replication`: `replicas`
    are attached (synced or syncing), or this primary was promoted (a failover) and Sentinel may not have
    moved the others to it yet."""
    fields = dict(line.partition(":")[::2] for line in info.splitlines() if ":" in line)
    promoted = fields.get("second_repl_offset", "-1").strip() not in ("-1", "")
    return promoted or int(fields.get("connected_slaves", "0") or 0) >= replicas


def script() -> str:
    return lua("publish_once")
