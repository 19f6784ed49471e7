"""Publishing from short-lived processes (hooks, `ib notify`): append over the light client, else spool.

Never blocks for long and never loses the event: when Redis cannot be reached within the connect
timeout, the event goes to the spool and the next process that reaches Redis sends it. The event is
stamped with its client-made id first and appended by the publish-once script, so when a send that timed
out did land, the spooled copy is not appended again.
"""

from __future__ import annotations

import os
import sys

from bus.connection.redis_url import bus_url
from bus.errors import BusError, ConfigError, NotReplicated
from bus.events import append_once, spool
from bus.events.envelope import EID_FIELD, Envelope, encode, stamped
from bus.settings import defaults
from bus.settings.hotconf import HotConf
from bus.wire.address import Address, without_password
from bus.wire.keys import Keys
from bus.wire.record import Record
from bus.wire.resp import Connection, ServerError


class Published(Record):
    """The event's stream id, or where it was spooled when Redis could not be reached."""

    __slots__ = ("event_id", "spooled_to")

    def __init__(self, event_id: str | None, spooled_to: str | None = None) -> None:
        self.event_id, self.spooled_to = event_id, spooled_to


def target_of(conf: HotConf) -> str:
    """Names the bus a spool file belongs to; never its password (the name and the records are on disk)."""
    return without_password(conf.redis_url) if conf.redis_url else f"embedded:{conf.root}"


def open_bus(conf: HotConf, start: bool = True) -> Connection:
    """A connection to this process's bus, with whatever the spool held for it sent first.

    `start=False` never starts the embedded Redis (a hook asking a question of a bus that is not there).
    """
    conn = Connection(
        Address.from_url(bus_url(conf.redis_url, conf.root, start, conf.embedded_port)), conf.connect_timeout
    )
    try:
        spool.flush(conn, conf.spool_dir, target_of(conf), conf.namespace, conf.events_maxlen, _wait(conf))
    except BaseException:
        conn.close()
        raise
    return conn


def flush_spool(conf: HotConf) -> int:
    """Send what waits in this user's spool for this bus, if anything does; how many were sent. The
    worker calls it every tick, so events spooled while Redis was away go out once it answers."""
    target = target_of(conf)
    waiting = [spool.spool_path(d, target, conf.namespace) for d in spool.spool_dirs(conf.spool_dir)]
    if not any(os.path.exists(p) and os.path.getsize(p) for p in waiting):
        return 0
    url = bus_url(conf.redis_url, conf.root, start=False)
    with Connection(Address.from_url(url), conf.connect_timeout) as conn:
        return spool.flush(conn, conf.spool_dir, target, conf.namespace, conf.events_maxlen, _wait(conf))


def _wait(conf: HotConf) -> tuple[int, int]:
    return conf.wait_replicas, conf.wait_ms


def xadd(conn: Connection, conf: HotConf, event: Envelope) -> str:
    """Append `event` (stamped with its client-made id) once; its stream id, the first one if it was
    appended before. With `conf.wait_replicas`, the same round trip waits for that many replicas to hold
    it (raises NotReplicated when they do not in time)."""
    event = stamped(event)
    mark = Keys(conf.namespace).published(event[EID_FIELD])
    commands: list[tuple[str | bytes | int | float, ...]] = [
        append_once.command(conf.namespace, mark, encode(event), conf.events_maxlen)
    ]
    if conf.wait_replicas:
        commands.append(("WAIT", conf.wait_replicas, conf.wait_ms))
    replies = conn.pipeline(commands, conf.wait_ms / 1000 if conf.wait_replicas else 0.0)
    if isinstance(replies[0], ServerError):
        raise replies[0]
    if conf.wait_replicas:
        confirmed = append_once.confirmed_again(conn, replies[1], conf.wait_replicas, conf.wait_ms)
        append_once.replicated(confirmed, conf.wait_replicas, conf.wait_ms)
    return append_once.outcome(replies[0])[0]


def publish(conf: HotConf, event: Envelope, conn: Connection | None = None) -> Published:
    """Append `event` to the events stream, or spool it (with a warning on stderr) when Redis is away.
    Behind Sentinel, a send that fails on an open connection (a failover: READONLY, the primary gone) is
    tried once more on a new one, whose primary the sentinels name again.

    Raises SpoolUnavailable only when Redis is away and no spool folder can be written."""
    event = stamped(event)
    tries = 2 if defaults.behind_sentinel(conf.redis_url) else 1
    while True:
        try:
            own = conn if conn is not None else open_bus(conf)
        except ConfigError:
            raise  # no bus to send it to, ever: spooling would hide the mistake
        except BusError as e:  # opening a connection asks the sentinels twice already
            return keep(conf, event, e)
        try:
            return Published(xadd(own, conf, event))
        except ConfigError:
            raise
        except NotReplicated as e:  # in the stream already: the spool's copy is sent once more, then dropped
            return keep(conf, event, e)
        except BusError as e:
            tries -= 1
            if not tries:
                return keep(conf, event, e)
        finally:
            if own is not conn:
                own.close()
        conn = None


def keep(conf: HotConf, event: Envelope, why: BusError) -> Published:
    """Spool `event` because of `why`, saying so on stderr."""
    path = spool.append(conf.spool_dir, target_of(conf), conf.namespace, event)
    print(f"ib: warning: {why}; event kept in {path} and sent when Redis answers", file=sys.stderr)
    return Published(None, path)
