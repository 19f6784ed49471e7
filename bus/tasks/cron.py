"""Cron expressions for scheduled tasks (UTC, minute resolution): cronsim finds the firings, this module
says in one line what is wrong with an expression it refuses.

The classic five fields — minute, hour, day of month, month, day of week — with `*`, ranges `a-b`,
lists `a,b`, steps `*/n` and `a-b/n`, month and weekday names, the `@hourly`-style shorthands, and
cronsim's `L` (last day of the month, `5L` its last Friday) and `1#2` (its second Monday). As in Vixie
cron, when both day fields are restricted (neither starts with `*`) a day matches either of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise

from cronsim import CronSim, CronSimError

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
# (name, lowest, highest, names whose index + offset is the value), in the order of the fields
_FIELDS = (
    ("minute", 0, 59, (), 0),
    ("hour", 0, 23, (), 0),
    ("day of month", 1, 31, (), 0),
    ("month", 1, 12, MONTHS, 1),
    ("day of week", 0, 7, WEEKDAYS, 0),
)


@dataclass(frozen=True)
class Cron:
    """A valid expression, and the minutes and hours it fires at (for the shortest gap)."""

    text: str
    fields: str  # the five fields (a shorthand spelled out)
    minutes: frozenset[int]
    hours: frozenset[int]

    def next_after(self, moment: datetime) -> datetime | None:
        """The first firing strictly after `moment` (UTC), or None when none comes in the next 50 years."""
        return next(CronSim(self.fields, moment.astimezone(UTC)), None)

    def shortest_gap(self) -> int:
        """The least number of seconds between two firings (a lower bound across midnight)."""
        times = sorted(h * 60 + m for h in self.hours for m in self.minutes)
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
    fields = [",".join(_one_value_range(item) for item in part.split(",")) for part in fields]
    try:
        sim = CronSim(" ".join(fields), now or datetime.now(UTC))
        first = next(sim, None)
    except CronSimError as e:
        raise InvalidInput(_why_refused(text, fields)) from e
    if first is None:
        raise InvalidInput(_never_fires(text))
    cron = Cron(cleaned, " ".join(fields), frozenset(sim.minutes), frozenset(sim.hours))
    if cron.shortest_gap() < min_interval:
        raise InvalidInput(
            f"cron expression {text!r} fires every {cron.shortest_gap()} s, more often than the minimum of "
            f"{min_interval:g} s (IB_SCHEDULE_MIN_INTERVAL)"
        )
    return cron


def _one_value_range(item: str) -> str:
    """`5-5/10` as `5`: cronsim reads a range of one value with a step as `5/10` (from 5 to the end)."""
    span, slash, _step = item.partition("/")
    start, dash, end = span.partition("-")
    return start if slash and dash and start.lower() == end.lower() else item


def _never_fires(text: str) -> str:
    return f"cron expression {text!r} never fires (no such day): check the day and month"


def _why_refused(text: str, fields: list[str]) -> str:
    """The first item cronsim could not read, and why; cronsim itself only says which field ("Bad minute")."""
    for part, (name, low, high, names, offset) in zip(fields, _FIELDS, strict=True):
        for item in part.lower().split(","):
            problem = _item_problem(item, f"the {name} field", low, high, names, offset)
            if problem:
                return problem
    # every item reads well: cronsim refused a day of month that no month of the expression has
    return _never_fires(text)


def _item_problem(
    item: str, where: str, low: int, high: int, names: tuple[str, ...], offset: int
) -> str | None:
    span, slash, step = item.partition("/")
    if slash and not (step.isdigit() and int(step) >= 1):
        return f"bad step /{step} in {where}: use a whole number of 1 or more"
    if span == "*" or (where == "the day of month field" and span in ("l", "lw")):
        return None
    start, dash, end = span.partition("-")
    if where == "the day of week field" and not dash:  # `5l`, `1#2`: a weekday, then its place in the month
        start, hash_sign, nth = start.removesuffix("l").partition("#")
        if hash_sign and nth not in ("1", "2", "3", "4", "5"):
            return f"bad week #{nth} in {where}: use 1-5 (the first to the fifth of its weekday in the month)"
    values: list[int] = []
    for number in (start, end) if dash else (start,):
        value = _value(number, where, low, high, names, offset)
        if isinstance(value, str):
            return value
        values.append(value)
    if dash and values[0] > values[1]:
        return f"bad range {span} in {where}: the start is after the end"
    return None


def _value(text: str, where: str, low: int, high: int, names: tuple[str, ...], offset: int) -> int | str:
    """The number `text` stands for, or what is wrong with it."""
    if text in names:
        return names.index(text) + offset
    if not text.isdigit():
        known = f" or a name ({names[0]}…{names[-1]})" if names else ""
        return f"bad value {text!r} in {where}: use a number{known}"
    if not low <= int(text) <= high:
        return f"bad value {int(text)} in {where}: it must be {low}-{high}"
    return int(text)
