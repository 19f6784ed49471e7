"""What Claude Code's hook payloads mean for ittybus: the state and the event, for every event we install,
and payloads from newer or broken producers (unknown types, missing or extra fields) that must not fail."""

from __future__ import annotations

import pytest

from worker.programs.claude.signals import error_kind, outcome
from worker.programs.hook_outcome import Outcome, says_nothing_new, stopped_reason

A = "agent-1"


def _seen(payload: dict[str, object]) -> tuple[str, str, str] | None:
    found = outcome(payload, A)
    return None if found is None else (found.state, found.event_type, found.prompt)


CASES = {
    "permission-request-bash": (
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "rm x"}},
        ("permission", "permission", "permission"),
    ),
    "ask-user-question": (
        {
            "hook_event_name": "PermissionRequest",
            "tool_name": "AskUserQuestion",
            "tool_input": {
                "questions": [{"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}]
            },
        },
        ("permission", "question", "ask"),
    ),
    "exit-plan-mode-no-input": (
        {"hook_event_name": "PermissionRequest", "tool_name": "ExitPlanMode", "tool_input": {}},
        ("permission", "permission", "plan"),
    ),
    "notification-permission": (
        {"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "m"},
        ("permission", "permission", "permission"),
    ),
    "notification-idle": (
        {"hook_event_name": "Notification", "notification_type": "idle_prompt"},
        ("waiting", "waiting", ""),
    ),
    "notification-elicitation": (
        {"hook_event_name": "Notification", "notification_type": "elicitation_dialog", "message": "Token?"},
        ("permission", "question", ""),
    ),
    "notification-unknown-type-kept": (
        {"hook_event_name": "Notification", "notification_type": "brand_new", "message": "hi"},
        ("", "notification", ""),
    ),
    "notification-no-type": ({"hook_event_name": "Notification"}, ("", "notification", "")),
    "stop-failure-overloaded": (
        {"hook_event_name": "StopFailure", "error": "overloaded"},
        ("error", "error", ""),
    ),
    "stop-failure-plain-429": (
        {"hook_event_name": "StopFailure", "error": "rate_limit"},
        ("error", "error", ""),
    ),
    "stop-failure-usage-limit-recorded": (
        {
            "hook_event_name": "StopFailure",
            "error": "rate_limit",
            "rate_limits": {
                "api_error": "usage_limit_reached",
                "status": "rejected",
                "resets_at": 1795917169,
            },
        },
        ("limited", "limited", ""),
    ),
    "stop-failure-usage-limit-in-words": (
        {
            "hook_event_name": "StopFailure",
            "error": "rate_limit",
            "last_assistant_message": "API Error: Request rejected (429) · 5-hour limit reached",
        },
        ("limited", "limited", ""),
    ),
    "stop-failure-not-your-usage-limit": (
        {
            "hook_event_name": "StopFailure",
            "error": "rate_limit",
            "last_assistant_message": "API Error: Server is temporarily limiting requests (not your usage "
            "limit) · This request would exceed the rate limit for your organization.",
        },
        ("error", "error", ""),
    ),
    "stop-failure-missing-error": ({"hook_event_name": "StopFailure"}, ("error", "error", "")),
    "session-end-exit": (
        {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
        ("stopped", "stopped", ""),
    ),
    "session-end-unknown-reason": (
        {"hook_event_name": "SessionEnd", "reason": "cosmic_ray"},
        ("stopped", "stopped", ""),
    ),
    "session-end-clear-goes-on": ({"hook_event_name": "SessionEnd", "reason": "clear"}, None),
    "pre-compact": ({"hook_event_name": "PreCompact", "trigger": "auto"}, ("compacting", "state", "")),
    "user-prompt-submit": ({"hook_event_name": "UserPromptSubmit", "prompt": "x"}, ("running", "state", "")),
    "unknown-event": ({"hook_event_name": "FutureEvent"}, None),
    "no-event-name": ({"tool_name": "Bash"}, None),
    "event-name-not-a-string": ({"hook_event_name": ["Stop"]}, None),
    "tool-input-not-an-object": (
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": "rm -rf /"},
        ("permission", "permission", "permission"),
    ),
    "questions-garbled": (
        {
            "hook_event_name": "PermissionRequest",
            "tool_name": "AskUserQuestion",
            "tool_input": {"questions": 7},
        },
        ("permission", "question", "ask"),
    ),
}


@pytest.mark.parametrize(("payload", "expected"), CASES.values(), ids=CASES.keys())
def test_outcome(payload: dict[str, object], expected: tuple[str, str, str] | None) -> None:
    assert _seen({**payload, "session_id": "s", "extra_field_from_the_future": {"x": 1}}) == expected


def test_permission_data_names_the_tool_and_the_command() -> None:
    found = outcome(
        {
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "touch made", "description": "make a file"},
        },
        A,
    )
    assert found is not None
    assert found.data["tool"] == "Bash"
    assert found.data["detail"] == "touch made"
    assert found.data["options"] == [
        {"number": None, "label": "approve"},  # told before it is drawn: the answers, by meaning
        {"number": None, "label": "approve always"},
        {"number": None, "label": "deny"},
    ]
    assert found.message == "agent-1 asks to use Bash: touch made"


def test_question_data_has_the_options_numbered_as_drawn() -> None:
    questions = [{"question": "Which database?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]
    found = outcome(
        {
            "hook_event_name": "PermissionRequest",
            "tool_name": "AskUserQuestion",
            "tool_input": {"questions": questions},
        },
        A,
    )
    assert found is not None
    assert (found.data["question"], found.data["options"]) == (
        "Which database?",
        [{"number": 1, "label": "Postgres"}, {"number": 2, "label": "SQLite"}],  # as the dialog numbers them
    )


@pytest.mark.parametrize(
    ("error", "message", "kind"),
    [
        ("overloaded", "", "overloaded"),
        ("server_error", "API Error: 529 x. This is a server-side issue", "overloaded"),
        ("server_error", "API Error: 500 boom", "other"),
        ("rate_limit", "", "rate_limit"),
        ("authentication_failed", "", "auth"),
        ("billing_error", "", "auth"),
        ("max_output_tokens", "", "other"),
        ("something_new", "", "other"),
    ],
)
def test_error_kind(error: str, message: str, kind: str) -> None:
    assert error_kind(error, message) == kind


QUIET_CASES = {
    "idle-after-waiting": ("Notification", "waiting", "waiting", True),
    "idle-after-complete": ("Notification", "waiting", "complete", True),
    "idle-after-api-error": ("Notification", "waiting", "error", True),
    "idle-after-rate-limit": ("Notification", "waiting", "rate_limited", True),
    "idle-while-limited": ("Notification", "waiting", "limited", True),
    "idle-while-running": ("Notification", "waiting", "running", False),
    "permission-after-permission-request": ("Notification", "permission", "permission", True),
    "permission-prompt-while-running": ("Notification", "permission", "running", False),
    "session-end-after-the-watcher": ("SessionEnd", "stopped", "stopped", True),
    "session-end-first": ("SessionEnd", "stopped", "waiting", False),
    "next-turn-after-error": ("UserPromptSubmit", "running", "error", False),
    "stop-failure-after-retries": ("StopFailure", "error", "error", False),
    "limit-while-parked": ("StopFailure", "limited", "limited", True),
    "limit-after-a-resumed-turn": ("StopFailure", "limited", "running", False),
    "event-name-not-a-string": (["Notification"], "waiting", "error", False),
}


@pytest.mark.parametrize(
    ("hook_event", "state", "previous", "quiet"), QUIET_CASES.values(), ids=QUIET_CASES.keys()
)
def test_says_nothing_new(hook_event: object, state: str, previous: str, quiet: bool) -> None:
    found = Outcome(state, state, "", {})
    found.reminder = hook_event == "Notification"  # as Claude Code's reader marks them (test below)
    assert says_nothing_new(found, previous) is quiet


@pytest.mark.parametrize(
    ("payload", "reminder"),
    [
        ({"hook_event_name": "Notification", "notification_type": "idle_prompt"}, True),
        ({"hook_event_name": "Notification", "notification_type": "permission_prompt"}, True),
        ({"hook_event_name": "SessionEnd", "reason": "logout"}, False),
        ({"hook_event_name": "StopFailure", "error": "overloaded"}, False),
        ({"hook_event_name": "UserPromptSubmit", "transcript_path": "/t.jsonl"}, False),
    ],
    ids=["idle", "permission-prompt", "session-end", "stop-failure", "prompt"],
)
def test_a_notification_is_a_reminder_and_the_transcript_its_log(
    payload: dict[str, object], reminder: bool
) -> None:
    found = outcome(payload, A)
    assert found is not None
    assert found.reminder is reminder
    assert found.log == payload.get("transcript_path", "")


def test_stopped_reason_names_the_agent() -> None:
    assert stopped_reason("a1") == "agent a1 stopped (its session ended) while holding the task"
