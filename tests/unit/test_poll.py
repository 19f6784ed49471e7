"""bus.poll.wait_until: the one poll loop, for what cannot push."""

from __future__ import annotations

import itertools

import pytest

from bus.poll import wait_until


def test_returns_the_first_truthy_answer() -> None:
    counter = itertools.count()
    assert wait_until(lambda: next(counter) >= 3 and "ready", timeout=5, interval=0.001) == "ready"
    assert next(counter) == 4  # called until it held, not once more


def test_none_when_the_deadline_passes_and_the_check_ran_at_least_once() -> None:
    calls: list[int] = []
    assert wait_until(lambda: calls.append(1), timeout=0) is None
    assert calls == [1]
    assert wait_until(lambda: 0, timeout=0.05, interval=0.01) is None


def test_what_the_check_raises_reaches_the_caller() -> None:
    def broken() -> bool:
        raise LookupError("the pane is gone")

    with pytest.raises(LookupError, match="the pane is gone"):
        wait_until(broken, timeout=5)
