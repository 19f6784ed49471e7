"""The back-off between tries to reach Redis again, and the two lines a consumer says about an outage."""

from __future__ import annotations

import pytest
import redis

from bus.connection.reconnect import CAP_S, FIRST_S, Outage, backoff


@pytest.mark.parametrize(
    ("failures", "seconds"),
    [(1, FIRST_S), (2, 2 * FIRST_S), (3, 4 * FIRST_S), (5, 16 * FIRST_S), (6, CAP_S), (10_000, CAP_S)],
    ids=["first", "second", "third", "fifth", "capped", "huge"],
)
def test_backoff_doubles_up_to_the_cap(failures: int, seconds: float) -> None:
    assert backoff(failures) == pytest.approx(seconds)


def test_an_outage_is_said_once_each_way() -> None:
    outage = Outage("events")
    error = redis.ConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")
    assert outage.back() is None  # nothing to say while nothing happened
    said = [outage.lost(error), outage.lost(error), outage.lost(error)]
    assert said == [
        "events: lost the connection to Redis (Error 111 connecting to 127.0.0.1:6390. Connection refused.); "
        "reconnecting",
        None,
        None,
    ]
    assert outage.pause == pytest.approx(4 * FIRST_S)  # three failures in a row
    assert [outage.back(), outage.back()] == ["events: connected to Redis again", None]
    assert outage.pause == pytest.approx(FIRST_S)
    assert outage.lost(error) is not None  # the next outage is said again
