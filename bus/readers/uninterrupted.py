"""Acknowledge what was printed before a stop: a Ctrl-C or SIGTERM that comes during the ack waits for it.

A follower that prints an event and is stopped before it acknowledges leaves the entry pending, and the
next follower of its group prints it again. The print itself stays interruptible (a follower blocked on a
full pipe must still stop; what it did not finish printing is printed again); the ack that follows runs
with SIGINT and SIGTERM deferred to its end. A second signal during the ack (Redis hanging) stops at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

DEFERRED: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)
Handler = Callable[[int, FrameType | None], object] | int | None


@contextmanager
def stop_after() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held back; one that came meanwhile is raised at its end."""
    before: dict[int, Handler] = {number: signal.getsignal(number) for number in DEFERRED}
    if threading.current_thread() is not threading.main_thread() or None in before.values():
        yield  # only the main thread handles signals; a handler set outside Python cannot be put back
        return
    came: list[int] = []

    def later(number: int, _frame: FrameType | None) -> None:
        if came:
            raise KeyboardInterrupt  # asked twice: the person does not want to wait for the ack
        came.append(number)

    for number in DEFERRED:
        signal.signal(number, later)
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
        if came:
            signal.raise_signal(came[0])
