"""The quota a 429 reported, read from Claude Code's transcript: the entries below are as 2.1.332 wrote
them offline (tests/fake_anthropic answering 429), cut to the fields that matter."""

from __future__ import annotations

import json

import pytest

from worker.programs.claude.turn_quota import last_api_error, quota_of_entry

USER = {"type": "user", "message": {"role": "user", "content": "say hi"}}
LOGIN_LIMIT = {
    "type": "assistant",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "You've hit your 5-hour limit"}]},
    "apiError": "usage_limit_reached",
    "apiErrorParams": {"rate_limit_info": {"status": "rejected", "resetsAt": 1795917169}},
    "quotaLimits": {"status": "rejected", "resetsAt": 1795917169, "rateLimitType": "five_hour"},
    "error": "rate_limit",
    "isApiErrorMessage": True,
    "apiErrorStatus": 429,
}
GARBLED_RESET = {
    **LOGIN_LIMIT,
    "quotaLimits": {"status": "rejected", "resetsAt": None, "rateLimitType": "five_hour"},
}
PLAIN_429 = {
    "type": "assistant",
    "message": {
        "role": "assistant",
        "content": [{"type": "text", "text": "API Error: Request rejected (429)"}],
    },
    "apiErrorIsTransient": False,
    "error": "rate_limit",
    "isApiErrorMessage": True,
    "apiErrorStatus": 429,
}
ANSWER = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}}
TAIL = {"type": "last-prompt", "lastPrompt": "say hi"}

CASES = {
    "login-limit": ([USER, LOGIN_LIMIT, TAIL], LOGIN_LIMIT),
    "garbled-reset": ([USER, GARBLED_RESET, TAIL], GARBLED_RESET),
    "plain-429": ([USER, PLAIN_429, TAIL], PLAIN_429),
    "answer-after-an-old-error": ([USER, PLAIN_429, USER, ANSWER], None),
    "not-written-yet": ([USER], None),
}


@pytest.mark.parametrize(("entries", "expected"), CASES.values(), ids=CASES.keys())
def test_the_turns_api_error_is_its_last_assistant_entry(
    entries: list[dict[str, object]], expected: dict[str, object] | None
) -> None:
    lines = [json.dumps(e) for e in entries]
    assert last_api_error(["{cut half a line", *lines]) == expected


def test_the_quota_takes_the_unified_headers_names() -> None:
    assert quota_of_entry(LOGIN_LIMIT) == {
        "api_error": "usage_limit_reached",
        "status": "rejected",
        "resets_at": 1795917169,
        "rate_limit_type": "five_hour",
    }
    assert quota_of_entry(GARBLED_RESET) == {
        "api_error": "usage_limit_reached",
        "status": "rejected",
        "rate_limit_type": "five_hour",
    }
    assert quota_of_entry(PLAIN_429) == {}
