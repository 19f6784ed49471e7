"""The dashboard says why the bus is down in words, never redis-py's raw `Error 111 connecting to …`."""

from __future__ import annotations

import pytest

from worker.frontends.bus_down import bus_down, reason

REASONS = {
    "refused": (
        "Error 111 connecting to 127.0.0.1:41234. Connection refused.",
        "nothing listens at 127.0.0.1:41234",
    ),
    "no-route": ("Error 113 connecting to 10.0.0.5:6379. No route to host.", "no route to 10.0.0.5:6379"),
    "no-such-host": (
        "Error -2 connecting to redis.nowhere:6379. Name or service not known.",
        "no host is named redis.nowhere",
    ),
    "other-errno": (
        "Error 24 connecting to 127.0.0.1:6379. Too many open files.",
        "cannot connect to 127.0.0.1:6379: too many open files",
    ),
    "timeout": ("Timeout connecting to server", "it does not answer in time"),
    "closed": ("Connection closed by server.", "it closed the connection"),
    "reset": (
        "Error while reading from 127.0.0.1:53513 : (104, 'Connection reset by peer')",
        "the connection to 127.0.0.1:53513 broke: connection reset by peer",
    ),
    "reset-writing": (
        "Error 32 while writing to 127.0.0.1:6379 : (32, 'Broken pipe')",
        "the connection to 127.0.0.1:6379 broke: broken pipe",
    ),
    "stopped-on-purpose": (
        "the embedded bus of /r was stopped with `ib bus stop`; start it with `ib bus start` or `ib up`",
        "the embedded bus of /r was stopped with `ib bus stop`; start it with `ib bus start` or `ib up`",
    ),
}


@pytest.mark.parametrize(("error", "said"), REASONS.values(), ids=REASONS.keys())
def test_reason_in_words(error: str, said: str) -> None:
    assert reason(error) == said


def test_the_line_names_the_time_of_the_view_it_keeps() -> None:
    error = "Error 111 connecting to 127.0.0.1:41234. Connection refused."
    assert bus_down(error, "14:30:05") == (
        "the bus is down: nothing listens at 127.0.0.1:41234; showing the view of 14:30:05, "
        "waiting for it to come back"
    )
    assert (
        bus_down(error) == "the bus is down: nothing listens at 127.0.0.1:41234; waiting for it to come back"
    )
