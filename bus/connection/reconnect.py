"""Consumers that outlive Redis: after a lost connection, wait for Redis to answer again with backoff,
saying so once on the way down and once on the way back, then go on where the consumer was.

`Reconnect` waits in place (the command-line consumers); loops that wait in their own way (the bot's
asyncio tasks) keep an `Outage` for the two lines and take their pauses from `backoff`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

if TYPE_CHECKING:
    import redis.asyncio as aredis

# What a restarting or unreachable Redis raises; anything else is a real error and goes up.
LOST = (redis.ConnectionError, redis.TimeoutError)
FIRST_S, CAP_S = 0.2, 5.0


def backoff(failures: int, first_s: float = FIRST_S, cap_s: float = CAP_S) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1, 2, …): doubling up to a cap. Pure."""
    return float(min(cap_s, first_s * 2 ** max(0, min(failures - 1, 32))))


async def forget_idle(client: aredis.Redis) -> None:
    """Close the pooled connections nobody is using: after a restart they are all dead, and the first
    command to take one would fail although Redis answers again (a second, false outage)."""
    await client.connection_pool.disconnect(inuse_connections=False)


@dataclass
class Outage:
    """Whether `who` has said that Redis is away: its first failure says so, the next ones are quiet
    until Redis answers again, which is said once too. Pure: the caller logs the lines it returns."""

    who: str
    away: bool = False
    failures: int = 0

    def lost(self, error: Exception) -> str | None:
        self.failures += 1
        if self.away:
            return None
        self.away = True
        return f"{self.who}: lost the connection to Redis ({error}); reconnecting"

    def back(self) -> str | None:
        self.failures = 0
        if not self.away:
            return None
        self.away = False
        return f"{self.who}: connected to Redis again"

    @property
    def pause(self) -> float:
        """Seconds to wait before the next try."""
        return backoff(self.failures)


@dataclass
class Reconnect:
    client: redis.Redis
    who: str  # the consumer, for the two lines it prints: `ib events`
    say: Callable[[str], None]
    first_s: float = FIRST_S
    cap_s: float = CAP_S
    pause: Callable[[float], object] = time.sleep  # a thread's stop event's wait: returns at the stop
    missed: Callable[[], None] = lambda: None  # after each ping Redis did not answer (may raise to give up)

    def __post_init__(self) -> None:
        # redis-py would otherwise retry a lost command on its own, silently, for up to a minute
        self.client.set_retry(Retry(NoBackoff(), 0))

    def wait(self, error: Exception, keep_going: Callable[[], bool] = lambda: True) -> bool:
        """Block until Redis answers a PING (True), or until `keep_going` says stop (False)."""
        self.say(f"{self.who}: lost the connection to Redis ({error}); reconnecting")
        delay = self.first_s
        while keep_going():
            self.pause(delay)  # nothing to block on in Redis while it is away
            try:
                self.client.ping()
            except LOST:
                self.missed()
                delay = min(self.cap_s, delay * 2)
                continue
            self.say(f"{self.who}: connected to Redis again")
            return True
        return False
