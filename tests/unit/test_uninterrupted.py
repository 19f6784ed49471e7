"""bus.readers.uninterrupted.stop_after: a stop during an ack lands after it; a second one does not wait."""

from __future__ import annotations

import os
import signal
import time

import pytest

from bus.readers.uninterrupted import stop_after


def test_a_signal_during_the_block_is_raised_after_it() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), stop_after():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("acknowledged")
    assert done == ["acknowledged"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_a_second_signal_stops_the_block_at_once() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), stop_after():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        done.append("acknowledged")
    assert done == []


def test_no_signal_no_interrupt_and_the_handlers_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with stop_after():
        assert signal.getsignal(signal.SIGTERM) is not before[0]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_a_block_that_cannot_finish_is_stopped_after_the_wait() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), stop_after(at_most_s=0.05):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # a print blocked on a full pipe
        done.append("acknowledged")
    assert done == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_a_block_that_finishes_within_the_wait_ends_before_the_stop() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), stop_after(at_most_s=0.2):
        os.kill(os.getpid(), signal.SIGINT)
        done.append("printed")
        done.append("acknowledged")
    assert done == ["printed", "acknowledged"]
    time.sleep(0.5)  # the wait's timer was cancelled: no second stop comes
