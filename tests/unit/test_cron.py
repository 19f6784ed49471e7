"""Cron expressions (cronsim underneath): fields, names, steps, the day rule, the extensions, and the
expressions refused with one line that names the value."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bus.errors import InvalidInput
from bus.tasks import cron

NOW = datetime(2026, 11, 26, 2, 30, 15, tzinfo=UTC)  # a Thursday


def at(text: str) -> str:
    found = cron.parse(text, NOW).next_after(NOW)
    assert found is not None
    return found.strftime("%Y-%m-%d %H:%M %a")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("* * * * *", "2026-11-26 02:31 Thu"),
        ("*/15 * * * *", "2026-11-26 02:45 Thu"),
        ("0 9 * * mon-fri", "2026-11-26 09:00 Thu"),
        ("0 9 * * sat,sun", "2026-11-28 09:00 Sat"),
        ("0 9 * * 7", "2026-11-29 09:00 Sun"),
        ("30 2 * * *", "2026-11-27 02:30 Fri"),
        ("0 0 1 jan *", "2027-01-01 00:00 Fri"),
        ("0 0 29 2 *", "2028-02-29 00:00 Tue"),
        ("0 12 1 * mon", "2026-11-30 12:00 Mon"),  # both day fields restricted: either matches
        ("0 0 */2 * mon", "2026-12-07 00:00 Mon"),  # a day field starting with `*` is not: both must
        ("0 0 1,15 * */7", "2027-08-01 00:00 Sun"),  # Vixie cron; a test of an exact `*` gave Nov 29
        ("5-10/2 3 * * *", "2026-11-26 03:05 Thu"),
        ("40/10 2 * * *", "2026-11-26 02:40 Thu"),
        ("@daily", "2026-11-27 00:00 Fri"),
        ("@hourly", "2026-11-26 03:00 Thu"),
        ("0  0   * *  *", "2026-11-27 00:00 Fri"),
        ("0 9 L * *", "2026-11-30 09:00 Mon"),
        ("0 9 * * 5L", "2026-11-27 09:00 Fri"),
        ("0 9 * * mon#1", "2026-12-07 09:00 Mon"),
        ("7-7/5 3 * * *", "2026-11-26 03:07 Thu"),
    ],
    ids=lambda v: v,
)
def test_next_firing(expression: str, expected: str) -> None:
    assert at(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("* * * * * *", "6 fields (a seconds field) is not supported"),
        ("* * * *", "it needs 5 fields"),
        ("", "it needs 5 fields"),
        ("60 * * * *", "bad value 60 in the minute field: it must be 0-59"),
        ("* 24 * * *", "bad value 24 in the hour field"),
        ("0 0 0 * *", "bad value 0 in the day of month field"),
        ("0 0 * 13 *", "bad value 13 in the month field"),
        ("0 0 * * 8", "bad value 8 in the day of week field"),
        ("0 0 * foo *", "bad value 'foo' in the month field: use a number or a name (jan…dec)"),
        ("*/0 * * * *", "bad step /0"),
        ("10-5 * * * *", "the start is after the end"),
        ("0 0 30 2 *", "never fires"),
        ("0 0 31 4,6,9,11 *", "never fires"),
        ("0 0 */20 * 1L", "never fires"),  # 1st or 21st, and the last Monday: none in 50 years
        ("@reboot", "not at start-up"),
        ("0 L * * *", "bad value 'l' in the hour field: use a number"),
        ("0 0 * * 1#6", "bad week #6 in the day of week field: use 1-5"),
        ("0 0 * * 9L", "bad value 9 in the day of week field: it must be 0-7"),
        ("0 0 * * #2", "bad value '' in the day of week field"),
        ("0 0 * jan-dec/x *", "bad step /x in the month field"),
    ],
    ids=lambda v: v,
)
def test_refused(expression: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        cron.parse(expression, NOW)


@pytest.mark.parametrize(
    ("expression", "gap"),
    [
        ("* * * * *", 60),
        ("*/5 * * * *", 300),
        ("0 * * * *", 3600),
        ("0 9 * * *", 86400),
        ("0 9,10 * * *", 3600),
        ("5-5/10 * * * *", 3600),  # one minute, not 5/10 (cronsim's reading of a one-value range)
    ],
)
def test_shortest_gap(expression: str, gap: int) -> None:
    assert cron.parse(expression, NOW).shortest_gap() == gap


def test_minimum_interval_refuses_what_fires_more_often() -> None:
    cron.parse("*/5 * * * *", NOW, min_interval=300)
    with pytest.raises(InvalidInput, match=r"fires every 240 s, more often than the minimum of 300 s"):
        cron.parse("*/4 * * * *", NOW, min_interval=300)
