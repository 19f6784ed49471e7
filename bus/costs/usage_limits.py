"""Usage limits of a plan: when an account's limit resets, read from what Claude Code and the API say, and
held to sane bounds. Pure (no Redis, no clock of its own: `now` is passed in).

A reset comes from the API's `anthropic-ratelimit-unified-reset` header (epoch seconds) when one is at
hand, else from the text Claude Code or the API puts beside the error ("… · resets 3pm (Europe/Berlin)",
"resets at 14:05", "resets Nov 27", Codex CLI's "… or try again at 3:05 PM."); a reset in the past means
"now", one further ahead than the window that ran out is capped to that window, and no reset at all means
"look again in UNKNOWN_RESET_WAIT".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bus.wire.keys import Keys

Command = tuple[str, ...]

WINDOWS = {
    "five_hour": 5 * 3600,
    "seven_day": 7 * 86400,
    "seven_day_opus": 7 * 86400,
    "seven_day_sonnet": 7 * 86400,
}
"""The API's windows (`anthropic-ratelimit-unified-representative-claim`) and their lengths in seconds."""

DEFAULT_WINDOW = "five_hour"
UNKNOWN_RESET_WAIT = 300.0  # seconds: no reset given, so the agent is tried again after this long
DEFAULT_ACCOUNT = "default"

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_RESETS = re.compile(
    r"(?:resets|will\s+reset|try\s+again)\s+(?:at\s+)?"
    r"(?:(?P<month>[A-Za-z]{3})[a-z]*\.?\s+(?P<day>\d{1,2})(?:,?\s+)?)?"
    r"(?:(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?)?"
    r"(?:\s*\((?P<zone>[A-Za-z_]+(?:/[A-Za-z_+\-0-9]+)*)\)|\s+(?P<utc>UTC|GMT)\b)?",
    re.IGNORECASE,
)
_RETRY_AFTER = re.compile(r"\bretry\s+(?:in|after)\s+(?P<seconds>\d{1,9}(?:\.\d+)?)s\b", re.IGNORECASE)
"""A reset given as a delay: the API's "Please retry in 3600s.", Gemini CLI's "Suggested retry after
3600s"."""
_WINDOW_WORDS = (
    ("5-hour", "five_hour"),
    ("weekly opus", "seven_day_opus"),
    ("weekly sonnet", "seven_day_sonnet"),
    ("opus", "seven_day_opus"),
    ("sonnet", "seven_day_sonnet"),
    ("weekly", "seven_day"),
    ("7-day", "seven_day"),
)
"""Words of an error message that name its window, the most specific first."""


@dataclass(frozen=True)
class Reset:
    """When a limit ends (`at`, epoch seconds), where that came from (`source`: header, text or none) and,
    when the given time was not taken as it was, why (`note`: said to the person)."""

    at: float
    source: str
    note: str = ""


@dataclass(frozen=True)
class RecordedLimit:
    """A usage limit as the program's own log recorded the API's headers: when it resets (epoch seconds)
    and the window that ran out (a WINDOWS name)."""

    reset_at: float
    window: str


@dataclass(frozen=True)
class Limit:
    """One account's limit as stored."""

    account: str
    reset_at: float
    window: str
    since: float
    source: str
    note: str
    agents: tuple[str, ...]

    def due(self, now: float) -> bool:
        return self.reset_at <= now


_PLAN_LIMIT_WORDS = re.compile(
    r"hit your (?:[\w-]+ )?limit|limit reached|/upgrade to increase your usage limit", re.IGNORECASE
)
_NOT_PLAN_LIMIT = re.compile(r"not your usage limit", re.IGNORECASE)


def names_plan_limit(text: str) -> bool:
    """Whether an error's text names the plan's usage limit ("You've hit your 5-hour limit · resets 3pm",
    "5-hour limit reached"), as opposed to an ordinary 429 ("Server is temporarily limiting requests (not
    your usage limit)", "… exceed the rate limit for your organization")."""
    return bool(_PLAN_LIMIT_WORDS.search(text)) and not _NOT_PLAN_LIMIT.search(text)


def is_plan_limit(quota: Mapping[str, object], text: str) -> bool:
    """Whether a 429 that ended a turn is the plan's usage limit: what the API said, as Claude Code records
    it (`quota`: its `apiError` "usage_limit_reached", the unified status "rejected", or a reset and window
    given without a status), else the words of the error (an API key's session records no quota)."""
    if quota.get("api_error") == "usage_limit_reached" or quota.get("status") == "rejected":
        return True
    if "status" not in quota and ("resets_at" in quota or "rate_limit_type" in quota):
        return True
    return names_plan_limit(text)


def limit_line(screen: str) -> str:
    """The last line of a pane that names a plan's usage limit ("… 5-hour limit reached · resets 3pm"),
    stripped of blanks and of the borders of a dialog's box; "" when none does (an ordinary 429 is no
    usage limit)."""
    found = [_unboxed(line) for line in screen.splitlines() if names_plan_limit(line)]
    return found[-1] if found else ""


def limit_text(screen: str) -> str:
    """The limit line and the lines the pane shows under it, unboxed: a dialog names the reset on the line
    under its title (Gemini CLI's "Usage limit reached for gemini-2.5-flash." / "Access resets at 1:01 PM
    UTC."); "" when no line names a usage limit."""
    lines = screen.splitlines()
    at = [index for index, line in enumerate(lines) if names_plan_limit(line)]
    return "\n".join(_unboxed(line) for line in lines[at[-1] :] if line.strip()) if at else ""


def _unboxed(line: str) -> str:
    return line.strip().strip("│").strip()


def park_commands(
    keys: Keys, account: str, agent: str, reset: Reset, window: str, now: float
) -> list[Command]:
    """The writes that record `account`'s limit (the newest report's reset wins) and park `agent` on it."""
    return [
        ("HSETNX", keys.limit(account), "since", f"{now:.3f}"),
        (
            "HSET",
            keys.limit(account),
            "reset_at",
            f"{reset.at:.3f}",
            "window",
            window,
            "source",
            reset.source,
            "note",
            reset.note,
        ),
        ("SADD", keys.limit_agents(account), agent),
        ("SADD", keys.limits, account),
    ]


def limit_lines(limit: Limit, now: float) -> list[str]:
    """How `ib limits` and /limits show one account: its reset, then its parked agents and any note."""
    state = "resuming now" if limit.due(now) else f"limited until {until_text(limit.reset_at, now)}"
    lines = [f"{limit.account}: {state} ({limit.window}, since {until_text(limit.since, now)})"]
    lines.append("  parked: " + (", ".join(limit.agents) if limit.agents else "none"))
    if limit.note:
        lines.append(f"  note: {limit.note}")
    return lines


def reset_from_header(value: object) -> float | None:
    """The epoch seconds of an `anthropic-ratelimit-unified-reset` value; None when missing or garbled."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and 0 < seconds < 1e11 else None  # NaN, negative, milliseconds


def reset_from_text(text: str, now: datetime) -> float | None:
    """The reset a "… resets 3pm (Europe/Berlin)" text names, as epoch seconds: the next such moment after
    `now` (an aware datetime, whose zone is used when the text names none), or `now` plus the delay a
    "retry in 3600s" names; None when the text names no reset or a zone that does not exist."""
    found = next((m for m in _RESETS.finditer(text) if m["hour"] or m["month"]), None)
    if found is None:
        delay = _RETRY_AFTER.search(text)
        return now.timestamp() + float(delay["seconds"]) if delay else None
    zone = _zone(found["zone"] or found["utc"], now.tzinfo)
    if zone is None:
        return None
    local = now.astimezone(zone)
    hour, minute = _clock(found["hour"], found["minute"], found["ampm"])
    if hour is None:
        return None
    if found["month"]:
        return _on_date(found["month"], int(found["day"]), hour, minute, local)
    moment = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if moment <= local:
        moment += timedelta(days=1)
    return moment.timestamp()


def _zone(name: str | None, fallback: tzinfo | None) -> tzinfo | None:
    if not name:
        return fallback
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _clock(hour_text: str | None, minute_text: str | None, ampm: str | None) -> tuple[int | None, int]:
    """(hour 0-23, minute) of "3pm", "3:05 pm", "15:00"; (None, 0) for an impossible time; midnight when
    only a date was given."""
    if hour_text is None:
        return 0, 0
    hour, minute = int(hour_text), int(minute_text or 0)
    if ampm:
        if not 1 <= hour <= 12:
            return None, 0
        hour = hour % 12 + (12 if ampm.lower().startswith("p") else 0)
    if hour > 23 or minute > 59:
        return None, 0
    return hour, minute


def _on_date(month_text: str, day: int, hour: int, minute: int, local: datetime) -> float | None:
    month_name = month_text[:3].lower()
    if month_name not in _MONTHS:
        return None
    month = _MONTHS.index(month_name) + 1
    for year in (local.year, local.year + 1):
        try:
            moment = local.replace(year=year, month=month, day=day, hour=hour, minute=minute, second=0,
                                   microsecond=0)  # fmt: skip
        except ValueError:
            return None
        if moment > local:
            return moment.timestamp()
    return None


def window_of_minutes(minutes: object) -> str:
    """The window a length in minutes names (300: five_hour, 10080: seven_day); DEFAULT_WINDOW for any
    other length."""
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)):
        return DEFAULT_WINDOW
    return next((name for name, length in WINDOWS.items() if length == minutes * 60), DEFAULT_WINDOW)


def window_of(claim: object, text: str = "") -> str:
    """The window that ran out: the header's claim when it names a known one, else the words of the
    error ("5-hour limit", "weekly limit"), else DEFAULT_WINDOW."""
    if isinstance(claim, str) and claim in WINDOWS:
        return claim
    lowered = text.lower()
    for words, window in _WINDOW_WORDS:
        if words in lowered:
            return window
    return DEFAULT_WINDOW


def settle(at: float | None, source: str, window: str, now: float) -> Reset:
    """The reset to wait for: `at` as given, or now when it is past, or the window's length from now when
    it is further ahead than that, or UNKNOWN_RESET_WAIT from now when there is none."""
    if at is None:
        wait = int(UNKNOWN_RESET_WAIT // 60)
        return Reset(now + UNKNOWN_RESET_WAIT, "none", f"no reset time given: trying again in {wait} min")
    if at <= now:
        return Reset(now, source, f"the reset time given ({_iso(at)}) is past: resuming at once")
    length = WINDOWS.get(window, WINDOWS[DEFAULT_WINDOW])
    if at - now > length:
        return Reset(
            now + length,
            source,
            f"the reset time given ({_iso(at)}) is {_span(at - now)} ahead, more than the {window} window: "
            f"capped to {_iso(now + length)}",
        )
    return Reset(at, source)


def read_reset(header: object, text: str, window: str, now: datetime) -> Reset:
    """The reset from the header if it has a usable one, else from the text, settled (see `settle`)."""
    at = reset_from_header(header)
    if at is not None:
        return settle(at, "header", window, now.timestamp())
    at = reset_from_text(text, now)
    return settle(at, "text" if at is not None else "none", window, now.timestamp())


def until_text(at: float, now: float, zone: tzinfo | None = None) -> str:
    """How a person reads a reset: "15:00" today, "Nov 28 15:00" another day (local time unless `zone`)."""
    moment = datetime.fromtimestamp(at, zone).astimezone(zone)
    today = datetime.fromtimestamp(now, zone).astimezone(zone).date()
    clock = moment.strftime("%H:%M")
    return clock if moment.date() == today else f"{moment.strftime('%b')} {moment.day} {clock}"


def _span(seconds: float) -> str:
    return f"{seconds / 3600:.0f} hours" if seconds < 2 * 86400 else f"{seconds / 86400:.0f} days"


def _iso(at: float) -> str:
    return datetime.fromtimestamp(min(at, 253402214400.0), tz=ZoneInfo("UTC")).strftime("%Y-%m-%d %H:%M UTC")
