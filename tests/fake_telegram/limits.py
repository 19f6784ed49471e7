"""Telegram's flood limits for one chat, on a clock that tests can speed up or move forward.

Per chat about one message a second with a small burst allowed (a token bucket), and at most
`per_minute` messages in any 60 seconds in a group; an edit costs what a message costs. Times are on
the fake's clock: with `time_scale=60` one real second is a minute of Telegram time, and every
duration the fake states (retry_after) is in Telegram seconds.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass


class Clock:
    """Seconds since the fake started, in Telegram time: real time × `time_scale`, plus any `advance`."""

    def __init__(self, time_scale: float = 1.0) -> None:
        if time_scale <= 0:
            raise ValueError(f"time_scale must be positive, got {time_scale}")
        self._scale = time_scale
        self._base = 0.0
        self._real_start = time.monotonic()

    @property
    def time_scale(self) -> float:
        return self._scale

    @time_scale.setter
    def time_scale(self, value: float) -> None:
        if value <= 0:
            raise ValueError(f"time_scale must be positive, got {value}")
        self._base, self._real_start, self._scale = self.now(), time.monotonic(), value

    def now(self) -> float:
        return self._base + (time.monotonic() - self._real_start) * self._scale

    def advance(self, seconds: float) -> None:
        """Jump forward: limits that would pass in `seconds` of Telegram time pass now."""
        self._base += seconds

    @staticmethod
    def retry_after(seconds: float) -> int:
        """A wait as Telegram states it: whole seconds of its own clock, rounded up, at least 1."""
        return max(1, math.ceil(seconds))


@dataclass(frozen=True)
class Limits:
    per_second: float = 1.0
    burst: int = 3
    per_minute: int = 20


class RateLimiter:
    """Answers "how long must this chat wait" and records what was sent."""

    def __init__(self, clock: Clock, limits: Limits | None = None) -> None:
        self.clock = clock
        self.limits = limits or Limits()
        self._tokens: dict[str, tuple[float, float]] = {}
        self._recent: dict[str, deque[float]] = {}

    def wait(self, chat: str) -> float:
        """Telegram seconds before `chat` may send again; 0 when it may send now."""
        now = self.clock.now()
        tokens = self._refilled(chat, now)
        bucket_wait = 0.0 if tokens >= 1 else (1 - tokens) / self.limits.per_second
        recent = self._window(chat, now)
        minute_wait = recent[0] + 60 - now if len(recent) >= self.limits.per_minute else 0.0
        return max(bucket_wait, minute_wait)

    def record(self, chat: str) -> None:
        now = self.clock.now()
        self._tokens[chat] = (self._refilled(chat, now) - 1, now)
        self._window(chat, now).append(now)

    def _refilled(self, chat: str, now: float) -> float:
        tokens, then = self._tokens.get(chat, (float(self.limits.burst), now))
        return min(float(self.limits.burst), tokens + (now - then) * self.limits.per_second)

    def _window(self, chat: str, now: float) -> deque[float]:
        recent = self._recent.setdefault(chat, deque())
        while recent and recent[0] <= now - 60:
            recent.popleft()
        return recent
