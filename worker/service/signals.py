"""Stopping a long-running service (worker, status node) cleanly on SIGTERM and Ctrl-C."""

from __future__ import annotations

import signal
import threading
from types import FrameType


def stop_on_signals(stopping: threading.Event) -> None:
    """SIGTERM and SIGINT set `stopping`; the service's loop sees it within one blocking read."""

    def stop(_signum: int, _frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
