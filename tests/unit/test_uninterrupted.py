"""bus.readers.uninterrupted.stop_after: a stop during an ack lands after it; a second one does not wait."""

from __future__ import annotations

import os
import signal

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
