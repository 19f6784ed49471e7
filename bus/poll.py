"""Waiting on what cannot push: call a check until it holds or a deadline passes.

The one poll loop of the product, for pane text, process ids and a daemon coming up. The bus itself
never polls (blocking reads). Imports nothing but `time`: the hook path may use it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T | None], timeout: float, interval: float = 0.05) -> T | None:
    """Call `check` every `interval` seconds until it returns something truthy and return that; None
    when `timeout` seconds pass first. `check` runs at least once; what it raises goes to the caller."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)
