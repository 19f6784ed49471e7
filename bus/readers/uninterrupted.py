"""Acknowledge what was printed before a stop: a Ctrl-C or SIGTERM that comes while an event is printed and
acknowledged waits for both.

A follower that prints an event and is stopped before it acknowledges leaves the entry pending, and the
next follower of its group prints it again. So the print and the ack that follows run with SIGINT and
SIGTERM held back to their end. A stop must still land when the print cannot finish (a follower blocked on a
full pipe) or the ack hangs (Redis away): a second signal lands at once, and the first one is sent again
`at_most_s` after it came; what was cut off is not acknowledged and is printed again.
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
def stop_after(at_most_s: float | None = None) -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held back; one that came meanwhile lands at its end, or
    `at_most_s` after it came if the block is still running then."""
    before: dict[int, Handler] = {number: signal.getsignal(number) for number in DEFERRED}
    if threading.current_thread() is not threading.main_thread() or None in before.values():
        yield  # only the main thread handles signals; a handler set outside Python cannot be put back
        return
    came: list[int] = []
    again: list[threading.Timer] = []
    main = threading.get_ident()

    def put_back() -> None:
        for timer in again:
            timer.cancel()
        for number, handler in before.items():
            signal.signal(number, handler)

    def later(number: int, _frame: FrameType | None) -> None:
        if came:  # asked twice, or the wait is over: the stop lands now, as if never held back
            put_back()
            signal.raise_signal(came.pop())
            return
        came.append(number)
        if at_most_s is not None:
            again.append(threading.Timer(at_most_s, signal.pthread_kill, (main, number)))
            again[-1].start()

    for number in DEFERRED:
        signal.signal(number, later)
    try:
        yield
    finally:
        put_back()
        if came:
            signal.raise_signal(came[0])
