"""Waiting in tests without bare sleeps: poll a condition until it holds or a deadline passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, TypeVar

T = TypeVar("T")


def retry_until(
    check: Callable[[], T | Literal[False] | None],
    timeout: float = 10.0,
    interval: float = 0.05,
    what: str = "",
) -> T:
    """Call `check` until it returns something truthy; return that, or fail the test at the deadline.

    The value returned is truthy: a check that answers `X | None` (or `cond and X`) gives an `X`."""
    deadline = time.monotonic() + timeout
    last = check()
    while not last:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or check!r}; last={last!r}")
        time.sleep(interval)
        last = check()
    return last  # truthy, so not None
