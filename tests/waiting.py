"""Waiting in tests without bare sleeps: poll a condition until it holds or a deadline passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def retry_until(check: Callable[[], T], timeout: float = 10.0, interval: float = 0.05, what: str = "") -> T:
    """Call `check` until it returns something truthy; return that, or fail the test at the deadline."""
    deadline = time.monotonic() + timeout
    last: T = check()
    while not last:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or check!r}; last={last!r}")
        time.sleep(interval)
        last = check()
    return last
