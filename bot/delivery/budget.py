"""The group's flood budget, shared through Redis: every message and every edit any bot process sends
to the chat spends one unit of `per_minute` in a sliding window, so a restarted bot, or a second one,
sees what was already spent.

One sorted set per chat (`Keys.telegram_budget`), scored by Redis's own clock (TIME), so processes on
different machines agree on when a unit was spent. A spend is one script: drop what left the window,
grant if there is room, and answer the window as it stands, which the caller's pacer then plans with.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio as aredis
from redis.exceptions import RedisError

from bot.delivery.outbound import Limits
from bus.connection.reconnect import LOST, Outage, forget_idle
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

# KEYS[1] the chat's budget; ARGV: window (ms), units allowed in it (0: only look), this spend's member.
# Answers {granted 0/1, Redis time (ms), [member, score, ...] of the window without this spend}.
_SPEND = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local spends = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local granted = 0
if #spends / 2 < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  granted = 1
end
return {granted, now, spends}
"""


@dataclass(frozen=True)
class Spent:
    """The answer to a spend: granted or not, and the window's other spends as times on the local clock."""

    granted: bool
    others: list[float]


class SharedBudget:
    """Spends of one chat's minute budget, in Redis; `clock` is the caller's (the pacer's) clock."""

    def __init__(
        self,
        client: aredis.Redis,
        keys: Keys,
        chat: int,
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.key = keys.telegram_budget(chat)
        self.limits = limits
        self.clock = clock
        self._script = client.register_script(_SPEND)
        self._prefix = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._numbers = itertools.count()
        self._outage = Outage("telegram budget")

    async def spend(self, allowed: int) -> Spent:
        """One unit, if fewer than `allowed` were spent in the window. Redis unreachable: granted, with
        nothing heard (the caller's own pacer still keeps the limits it knows of)."""
        member = f"{self._prefix}-{next(self._numbers)}"
        window_ms = max(1, round(self.limits.window * 1000))
        try:
            reply = cast(list[Any], await self._script(keys=[self.key], args=[window_ms, allowed, member]))
        except LOST as e:
            if said := self._outage.lost(e):
                log.warning("%s; pacing on what this process knows meanwhile", said)
                await forget_idle(self.client)
            return Spent(allowed > 0, [])
        except RedisError as e:
            log.warning("telegram budget: Redis refused it (%s); pacing on what this process knows", e)
            return Spent(allowed > 0, [])
        if said := self._outage.back():
            log.warning("%s", said)
        granted, redis_now, flat = int(reply[0]), int(reply[1]), reply[2]
        local_now = self.clock()
        others = [local_now - (redis_now - float(score)) / 1000 for score in flat[1::2]]
        return Spent(bool(granted), others)

    async def look(self) -> list[float]:
        """The window as it stands, spending nothing."""
        return (await self.spend(0)).others
