"""Telegram's flood limits for one chat as the bot keeps them: the limits, and the pacer that says how
long the next call must wait.

Pure: times are passed in (seconds on one monotonic clock, which may run scaled in tests).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

SPARE = 2  # the pacer's bucket: a status change needs it full, so a message after it goes at once


@dataclass(frozen=True)
class Limits:
    """Telegram's flood limits: about one message a second in a chat, 20 a minute in a group, edits
    included. `time_scale` > 1 runs them on a faster clock (tests against a fast fake Bot API)."""

    per_second: float = 1.0
    per_minute: int = 20
    window: float = 61.0  # Telegram's minute and a second more: requests arrive late by varying amounts
    time_scale: float = 1.0

    def scaled(self, factor: float) -> Limits:
        """The same limits on a clock running `factor` times faster (tests against a fast fake)."""
        if factor <= 0:
            raise ValueError(f"a time scale must be positive, got {factor}")
        return Limits(self.per_second * factor, self.per_minute, self.window / factor, factor)

    def local_seconds(self, telegram_seconds: float) -> float:
        """A duration Telegram states (retry_after) on this clock."""
        return telegram_seconds / self.time_scale


class Pacer:
    """One chat's budget: a gap of 1/per_second between messages, per_minute in any window (messages
    and edits alike, this process's and, as last heard, other processes'), and holds.

    Besides the gap, a bucket of SPARE tokens refills at per_second: a message takes one, and a status
    change (`spare=True`) goes only when the bucket is full and does not move the messages' gap, so a
    message right after a status change still goes at once, and no more than SPARE calls ever go in
    a burst.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._next = 0.0
        self._held_until = 0.0
        self._recent: deque[float] = deque()
        self._tokens = float(SPARE)
        self._tokens_at = 0.0

    def wait(self, now: float, reserve: int = 0, spare: bool = False) -> float:
        """Seconds before this chat may send (0: now), leaving `reserve` of the minute's budget unspent;
        `spare`: only with a full bucket (a status change)."""
        wait = max(self._held_until - now, self._next - now)
        missing = (SPARE if spare else 1) - self._bucket(now)
        if missing > 0:
            wait = max(wait, missing / self.limits.per_second)
        recent = self._window(now)
        allowed = self.limits.per_minute - reserve
        if allowed <= 0:
            return self.limits.window
        if len(recent) >= allowed:
            wait = max(wait, recent[len(recent) - allowed] + self.limits.window - now)
        return max(0.0, wait)

    def held(self, now: float) -> float:
        """Seconds before anything at all may go (a hold after a 429 or an error); 0 when none."""
        return max(0.0, self._held_until - now)

    def spent(self, now: float) -> int:
        """Messages and edits in the window ending now."""
        return len(self._window(now))

    def record(self, now: float, status: bool = False, counted: bool = True) -> None:
        """A call went at `now`: a message or edit (`counted`), or a status change (`status`)."""
        self._tokens, self._tokens_at = self._bucket(now) - 1, now
        if not status:
            self._next = now + 1.0 / self.limits.per_second
        if counted:
            self._window(now).append(now)

    def _bucket(self, now: float) -> float:
        refill = max(0.0, now - self._tokens_at) * self.limits.per_second
        return min(float(SPARE), self._tokens + refill)

    def heard(self, spends: list[float]) -> None:
        """The window as the shared budget holds it (times on this clock), replacing what was known."""
        self._recent = deque(sorted(spends))

    def hold(self, until: float) -> None:
        """Nothing goes out before `until` (Telegram's retry_after, or a back-off after an error)."""
        self._held_until = max(self._held_until, until)

    def _window(self, now: float) -> deque[float]:
        while self._recent and self._recent[0] <= now - self.limits.window:
            self._recent.popleft()
        return self._recent
