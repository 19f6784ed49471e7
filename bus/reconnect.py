"""Consumers that outlive Redis: after a lost connection, wait for Redis to answer again with backoff,
saying so once on the way down and once on the way back, then go on where the consumer was."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

# What a restarting or unreachable Redis raises; anything else is a real error and goes up.
LOST = (redis.ConnectionError, redis.TimeoutError)


@dataclass
class Reconnect:
    client: redis.Redis
    who: str  # the consumer, for the two lines it prints: `ib events`
    say: Callable[[str], None]
    first_s: float = 0.2
    cap_s: float = 5.0

    def __post_init__(self) -> None:
        # redis-py would otherwise retry a lost command on its own, silently, for up to a minute
        self.client.set_retry(Retry(NoBackoff(), 0))

    def wait(self, error: Exception, keep_going: Callable[[], bool] = lambda: True) -> bool:
        """Block until Redis answers a PING (True), or until `keep_going` says stop (False)."""
        self.say(f"{self.who}: lost the connection to Redis ({error}); reconnecting")
        delay = self.first_s
        while keep_going():
            time.sleep(delay)  # nothing to block on in Redis while it is away
            try:
                self.client.ping()
            except LOST:
                delay = min(self.cap_s, delay * 2)
                continue
            self.say(f"{self.who}: connected to Redis again")
            return True
        return False
