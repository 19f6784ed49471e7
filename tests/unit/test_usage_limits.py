"""The reset of a usage limit, read from the header or the error's text, and held to sane bounds."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bus.costs.usage_limits import (
    UNKNOWN_RESET_WAIT,
    WINDOWS,
    Limit,
    is_plan_limit,
    limit_line,
    limit_lines,
    limit_text,
    read_reset,
    reset_from_header,
    reset_from_text,
    settle,
    until_text,
    window_of,
    window_of_minutes,
)

NOW = datetime(2026, 11, 27, 13, 30, tzinfo=UTC)


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


TEXTS = {
    "hour-today": ("resets 3pm", "2026-11-27 15:00"),
    "at-minutes-named-zone": ("5-hour limit reached · resets at 3:05pm (UTC)", "2026-11-27 15:05"),
    "24-hour-clock": ("resets 15:00", "2026-11-27 15:00"),
    "past-hour-is-tomorrow": ("resets 1pm", "2026-11-28 13:00"),
    "date-and-hour": ("resets Nov 28, 3pm", "2026-11-28 15:00"),
    "date-only": ("spend limit reached · resets Dec 1", "2026-12-01 00:00"),
    "another-zone": ("You've hit your limit · resets 3pm (Europe/Berlin)", "2026-11-27 14:00"),
    "last-minute-of-year": ("resets Dec 31 11:59pm", "2026-12-31 23:59"),
    "older-cli": ("Claude usage limit reached. Your limit will reset at 5:30pm.", "2026-11-27 17:30"),
    "older-cli-date": (
        "Claude usage limit reached. Your limit will reset at Nov 28, 1am.",
        "2026-11-28 01:00",
    ),
    "older-cli-zone": ("Your limit will reset at 3pm (America/Santiago).", "2026-11-27 18:00"),
    "pane-capture-zone": ("You've hit your limit · resets 1am (America/Chicago)", "2026-11-28 07:00"),
    "codex-try-again-at": (
        "■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
        "https://chatgpt.com/settings/usage to purchase more credits or try again at 3:53 PM.",
        "2026-11-27 15:53",
    ),
    "codex-try-again-later": ("… purchase more credits or try again later.", None),
    "gemini-dialog-utc": (
        "Usage limit reached for gemini-2.5-flash.\nAccess resets at 1:43 PM UTC.",
        "2026-11-27 13:43",
    ),
    "gemini-retry-after": ("[API Error: … quota …\nSuggested retry after 3600s.]", "2026-11-27 14:30"),
    "api-retry-in": ("Quota exceeded … Please retry in 90.5s.", "2026-11-27 13:31:30.5"),
    "a-time-after-later": ("Please wait and try again later. Access resets at 2:05 PM.", "2026-11-27 14:05"),
    "retry-without-unit": ("retry after 3600", None),
    "try-again-in-is-no-time": ("Please try again in 5 minutes.", None),
    "wait-for-reset-is-no-time": ("  > Wait for limit reset\n  2. Upgrade", None),
    "unknown-zone": ("resets 3pm (Mars/Olympus)", None),
    "impossible-clock": ("resets 25:99", None),
    "thirteen-pm": ("resets 13pm", None),
    "no-such-day": ("resets Feb 30", None),
    "a-word": ("resets tomorrow", None),
    "no-reset": ("API Error: Request rejected (429) · 5-hour limit reached", None),
    "empty": ("", None),
}


@pytest.mark.parametrize(("text", "expected"), TEXTS.values(), ids=TEXTS.keys())
def test_reset_from_text(text: str, expected: str | None) -> None:
    assert reset_from_text(text, NOW) == (_utc(expected) if expected else None)


HEADERS = {
    "epoch-string": ("1795752000", 1795752000.0),
    "epoch-number": (1795752000, 1795752000.0),
    "fraction": ("1795752000.5", 1795752000.5),
    "missing": (None, None),
    "empty": ("", None),
    "garbled": ("3pm", None),
    "negative": ("-5", None),
    "not-a-number": ("nan", None),
    "infinite": ("inf", None),
    "milliseconds": ("1795752000000", None),
    "a-bool": (True, None),
    "a-list": ([1795752000], None),
}


@pytest.mark.parametrize(("value", "expected"), HEADERS.values(), ids=HEADERS.keys())
def test_reset_from_header(value: object, expected: float | None) -> None:
    assert reset_from_header(value) == expected


NOW_S = NOW.timestamp()
SETTLED = {
    "ahead-within-the-window": (NOW_S + 60, "five_hour", NOW_S + 60, ""),
    "past": (NOW_S - 3600, "five_hour", NOW_S, "is past: resuming at once"),
    "years-ahead": (NOW_S + 3 * 365 * 86400, "five_hour", NOW_S + WINDOWS["five_hour"], "capped to"),
    "days-ahead-of-a-weekly-window": (NOW_S + 6 * 86400, "seven_day", NOW_S + 6 * 86400, ""),
    "weeks-ahead-of-a-weekly-window": (NOW_S + 30 * 86400, "seven_day", NOW_S + 7 * 86400, "30 days ahead"),
    "unknown-window-takes-five-hours": (NOW_S + 86400, "other", NOW_S + WINDOWS["five_hour"], "capped"),
    "none": (None, "five_hour", NOW_S + UNKNOWN_RESET_WAIT, "no reset time given: trying again in 5 min"),
}


@pytest.mark.parametrize(("at", "window", "expected", "note"), SETTLED.values(), ids=SETTLED.keys())
def test_settle(at: float | None, window: str, expected: float, note: str) -> None:
    reset = settle(at, "header", window, NOW_S)
    assert reset.at == expected
    assert (note in reset.note) if note else reset.note == ""


def test_the_header_comes_before_the_text() -> None:
    reset = read_reset(str(int(NOW_S + 120)), "resets 3pm", "five_hour", NOW)
    assert (reset.at, reset.source) == (NOW_S + 120, "header")


def test_a_garbled_header_falls_back_to_the_text() -> None:
    reset = read_reset("soon", "resets 3pm (UTC)", "five_hour", NOW)
    assert (reset.at, reset.source) == (_utc("2026-11-27 15:00"), "text")


def test_neither_header_nor_text_tries_again_later() -> None:
    reset = read_reset(None, "429", "five_hour", NOW)
    assert (reset.at, reset.source) == (NOW_S + UNKNOWN_RESET_WAIT, "none")


WINDOW_CASES = {
    "claim": ("seven_day_opus", "", "seven_day_opus"),
    "unknown-claim-words": ("eleven_day", "weekly limit reached", "seven_day"),
    "five-hour-words": (None, "5-hour limit reached", "five_hour"),
    "sonnet-words": (None, "Weekly Sonnet limit reached", "seven_day_sonnet"),
    "nothing": (None, "429", "five_hour"),
}


@pytest.mark.parametrize(("claim", "text", "expected"), WINDOW_CASES.values(), ids=WINDOW_CASES.keys())
def test_window_of(claim: object, text: str, expected: str) -> None:
    assert window_of(claim, text) == expected


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [
        (300, "five_hour"),
        (10080, "seven_day"),
        (300.0, "five_hour"),
        (60, "five_hour"),
        ("300", "five_hour"),
        (None, "five_hour"),
        (True, "five_hour"),
    ],
    ids=["five-hours", "a-week", "float", "unknown-length", "text", "none", "bool"],
)
def test_window_of_minutes(minutes: object, expected: str) -> None:
    assert window_of_minutes(minutes) == expected


def test_until_text_names_the_day_only_when_it_is_not_today() -> None:
    assert until_text(_utc("2026-11-27 15:00"), NOW_S, UTC) == "15:00"
    assert until_text(_utc("2026-11-28 09:05"), NOW_S, UTC) == "Nov 28 09:05"


def test_limit_lines_name_the_reset_the_window_and_the_parked_agents() -> None:
    reset, since = _utc("2026-11-27 15:00"), _utc("2026-11-27 13:02")
    limit = Limit("default", reset, "five_hour", since, "text", "", ("a1", "a2"))
    assert limit_lines(limit, NOW_S) == [
        f"default: limited until {until_text(reset, NOW_S)} (five_hour, since {until_text(since, NOW_S)})",
        "  parked: a1, a2",
    ]
    noted = Limit("work", NOW_S - 1, "seven_day", since, "none", "no reset time given", ())
    assert limit_lines(noted, NOW_S)[0].startswith("work: resuming now (seven_day")
    assert limit_lines(noted, NOW_S)[1:] == ["  parked: none", "  note: no reset time given"]


# What Claude Code 2.1.332 records and shows (offline, tests/fake_anthropic): with a Claude login the 429's
# unified headers become the transcript entry's `apiError` and `quotaLimits`, and the text is its own; with
# an API key it records no quota and shows the API's message after "API Error: Request rejected (429) · ".
PLAN_LIMITS = {
    "recorded-usage-limit": ({"api_error": "usage_limit_reached", "status": "rejected"}, "", True),
    "recorded-reset-missing": ({"api_error": "usage_limit_reached", "status": "rejected"}, "", True),
    "rejected-status-only": ({"status": "rejected"}, "", True),
    "reset-without-status": ({"resets_at": 1795917169}, "API Error: 429", True),
    "allowed-status": ({"status": "allowed", "resets_at": 1795917169}, "API Error: 429", False),
    "login-words": ({}, "You've hit your 5-hour limit · resets 1:52am (UTC)", True),
    "older-login-words": ({}, "You've hit your limit · resets 3pm (Europe/Berlin)", True),
    "api-key-words": ({}, "API Error: Request rejected (429) · 5-hour limit reached · resets 1:52am", True),
    "plain-429-login": (
        {},
        "API Error: Server is temporarily limiting requests (not your usage limit) · This request would "
        "exceed the rate limit for your organization of 50 requests per minute.",
        False,
    ),
    "plain-429-api-key": (
        {},
        "API Error: Request rejected (429) · This request would exceed the rate limit for your organization",
        False,
    ),
    "bare-429": ({}, "API Error: 429", False),
    "nothing": ({}, "", False),
}


@pytest.mark.parametrize(("quota", "text", "expected"), PLAN_LIMITS.values(), ids=PLAN_LIMITS.keys())
def test_only_the_plans_usage_limit_is_one(quota: dict[str, object], text: str, expected: bool) -> None:
    assert is_plan_limit(quota, text) is expected


def test_a_dialog_s_limit_line_and_the_reset_under_it() -> None:
    """A boxed dialog names the limit on one line and the reset on the next (Gemini CLI 0.61.0)."""
    screen = (
        " > go on\n╭────────╮\n│                    │\n│ Usage limit reached for gemini-2.5-flash.   │\n"
        "│ Access resets at 1:43 PM UTC.    │\n│ ● 1. Keep trying   │\n╰────────╯\n"
    )
    assert limit_line(screen) == "Usage limit reached for gemini-2.5-flash."
    assert limit_text(screen).splitlines()[:2] == [limit_line(screen), "Access resets at 1:43 PM UTC."]
    assert limit_text("no limit here\n") == ""


def test_a_screen_with_a_plain_429_shows_no_limit_line() -> None:
    plain = "❯ say hi\n● API Error: Request rejected (429) · This request would exceed the rate limit\n❯ \n"
    assert limit_line(plain) == ""
    login = (
        "❯ say hi\n  ⎿  You've hit your 5-hour limit · resets 1:52am (UTC)\n"
        "● Usage limit reached · set to continue automatically at 1:52am\n❯ \n"
        "  ⚠ Usage limit reached · limit resets 1:52am\n"
        "    Continuing automatically at 1:52am · Esc to cancel\n"
    )
    assert limit_line(login) == "⚠ Usage limit reached · limit resets 1:52am"
