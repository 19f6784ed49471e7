"""The worker's loop lingers between reads only while the events stream is busy: a quiet bus never makes a
person's command wait for it."""

from __future__ import annotations

from worker.service.inbox import BUSY_EVENTS, Pace


def test_a_quiet_stream_is_never_busy() -> None:
    pace = Pace()
    assert not any(pace.busy(1, second + 0.5) for second in range(100))  # an event a second


def test_a_busy_second_is_busy_once_it_read_enough_and_the_next_quiet_one_is_not() -> None:
    pace = Pace()
    found = [pace.busy(1, 10.0 + n / 1000) for n in range(BUSY_EVENTS)]  # within one millisecond apart
    assert found == [False] * (BUSY_EVENTS - 1) + [True]
    assert pace.busy(1, 10.5)
    assert not pace.busy(1, 11.2)  # a new second, one event: quiet again
    assert pace.busy(BUSY_EVENTS, 11.3)
