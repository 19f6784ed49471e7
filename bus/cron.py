"""Cron expressions, parsed and stepped forward: the pure core of scheduled tasks (UTC, minute resolution).

The classic five fields — minute, hour, day of month, month, day of week — with `*`, ranges `a-b`,
lists `a,b`, steps `*/n` and `a-b/n`, month and weekday names, and the `@hourly`-style shorthands.
As in Vixie cron, when both day fields are restricted a day matches either of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from bus.errors import InvalidInput

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
SHORTHANDS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# (name, lowest, highest, names whose index + offset is the value)
_FIELDS = (
    ("minute", 0, 59, (), 0),
    ("hour", 0, 23, (), 0),
    ("day of month", 1, 31, (), 0),
    ("month", 1, 12, MONTHS, 1),
    ("day of week", 0, 7, WEEKDAYS, 0),
)
# Eight years hold every month length and a leap day (2100 is no leap year, but 2104 is).
_HORIZON_DAYS = 8 * 366


@dataclass(frozen=True)
class Cron:
    """A parsed expression: the sets of values each field allows."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day of month was `*`
    any_weekday: bool  # day of week was `*`

    def day_matches(self, day: datetime) -> bool:
        if day.month not in self.months:
            return False
        by_date = day.day in self.days
        by_weekday = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return by_date and by_weekday
        return by_date or by_weekday

    def times_of_day(self) -> list[int]:
        """Minutes after midnight at which it fires on a matching day, in order."""
        return sorted(h * 60 + m for h in self.hours for m in self.minutes)

    def next_after(self, moment: datetime) -> datetime | None:
        """The first firing strictly after `moment` (UTC), or None when it never fires again."""
        start = moment.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
        times = self.times_of_day()
        day = start.replace(hour=0, minute=0)
        first = start.hour * 60 + start.minute
        for _ in range(_HORIZON_DAYS):
            if self.day_matches(day):
                for minute in times:
                    if minute >= first:
                        return day + timedelta(minutes=minute)
            day += timedelta(days=1)
            first = 0
        return None

    def shortest_gap(self) -> int:
        """The least number of seconds between two firings (a lower bound across midnight)."""
        times = self.times_of_day()
        gaps = [b - a for a, b in pairwise(times)]
        gaps.append(times[0] + 1440 - times[-1])
        return min(gaps) * 60


def parse(text: str, now: datetime | None = None, min_interval: float = 60.0) -> Cron:
    """A cron expression, refused with one line when it is malformed, never fires, or fires more often than
    every `min_interval` seconds."""
    cleaned = " ".join(text.split())
    fields = SHORTHANDS.get(cleaned.lower(), cleaned).split(" ")
    if cleaned.lower() == "@reboot":
        raise InvalidInput("bad cron expression '@reboot': schedules fire at times, not at start-up")
    if len(fields) == 6:
        raise InvalidInput(
            f"bad cron expression {text!r}: 6 fields (a seconds field) is not supported; "
            "cron fires at most once a minute: use 5 fields, e.g. '*/5 * * * *'"
        )
    if len(fields) != 5:
        raise InvalidInput(
            f"bad cron expression {text!r}: it needs 5 fields (minute hour day-of-month month "
            "day-of-week), e.g. '0 9 * * mon-fri'"
        )
    sets = [_field(part, *spec) for part, spec in zip(fields, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in sets[4])
    cron = Cron(cleaned, sets[0], sets[1], sets[2], sets[3], weekdays, fields[2] == "*", fields[4] == "*")
    if cron.next_after(now or datetime.now(UTC)) is None:
        raise InvalidInput(f"cron expression {text!r} never fires (no such day): check the day and month")
    if cron.shortest_gap() < min_interval:
        raise InvalidInput(
            f"cron expression {text!r} fires every {cron.shortest_gap()} s, more often than the minimum of "
            f"{min_interval:g} s (IB_SCHEDULE_MIN_INTERVAL)"
        )
    return cron


def _field(part: str, name: str, low: int, high: int, names: tuple[str, ...], offset: int) -> frozenset[int]:
    values: set[int] = set()
    for item in part.lower().split(","):
        values.update(_item(item, name, low, high, names, offset))
    return frozenset(values)


def _item(item: str, name: str, low: int, high: int, names: tuple[str, ...], offset: int) -> range:
    where = f"the {name} field"
    span, slash, step_text = item.partition("/")
    step = _number(step_text, where, names, offset) if slash else 1
    if step < 1:
        raise InvalidInput(f"bad step /{step_text} in {where}: use a whole number of 1 or more")
    if span == "*":
        first, last = low, high
    else:
        start, dash, end = span.partition("-")
        first = _number(start, where, names, offset)
        last = _number(end, where, names, offset) if dash else (high if slash else first)
    for value in (first, last):
        if not low <= value <= high:
            raise InvalidInput(f"bad value {value} in {where}: it must be {low}-{high}")
    if first > last:
        raise InvalidInput(f"bad range {span} in {where}: the start is after the end")
    return range(first, last + 1, step)


def _number(text: str, where: str, names: tuple[str, ...], offset: int) -> int:
    if text in names:
        return names.index(text) + offset
    if not text.isdigit():
        known = f" or a name ({names[0]}…{names[-1]})" if names else ""
        raise InvalidInput(f"bad value {text!r} in {where}: use a number{known}")
    return int(text)
