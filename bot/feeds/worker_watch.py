"""The bot notices workers that died: a sweep every few seconds marks a worker whose heartbeat expired
as down and its agents `unreachable` (bus/commands/workers.py), whose `state` events then reach their topics.

A periodic sweep and not a blocking read, because a key expiring pushes nothing without keyspace
notifications, which a shared or managed Redis may not allow (CONFIG SET).
"""

from __future__ import annotations

import asyncio
import logging

import redis

from bus.commands.workers import sweep
from bus.connection.reconnect import LOST, Outage
from bus.wire.keys import Keys

log = logging.getLogger(__name__)


def sweep_interval(heartbeat_ttl: float) -> float:
    """Often enough that a dead worker is noticed well within its heartbeat's TTL. Pure."""
    return max(0.5, min(2.0, heartbeat_ttl / 5))


async def watch_workers(client: redis.Redis, keys: Keys, events_maxlen: int, heartbeat_ttl: float) -> None:
    """Sweep until cancelled; Redis errors are logged and the next sweep tries again."""
    interval = sweep_interval(heartbeat_ttl)
    outage = Outage("workers")
    while True:
        try:
            for gone in await asyncio.to_thread(sweep, client, keys, events_maxlen):
                log.warning("worker %s stopped answering: its agents are unreachable", gone)
            if said := outage.back():
                log.warning("%s", said)
        except LOST as e:
            if said := outage.lost(e):
                log.warning("%s", said)
        except redis.RedisError as e:
            log.warning("sweeping workers failed (retrying in %.1fs): %s", interval, e)
        await asyncio.sleep(interval)
