"""What Gemini CLI's hook payloads mean for ittybus: each event ittybus hooks, a whole real session's
payloads in order (tests/fixtures/gemini-0.61.0/hooks-one-session.jsonl, three SessionEnds on one exit),
and payloads from other versions (unknown events, unknown or missing fields, wrong types) that must not
fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worker.markers import COMPLETION_MARKER, WAITING_MARKER
from worker.programs.gemini.hook import chat_end, read_hook
from worker.programs.gemini.signals import failed_turn, outcome, outcomes, read_usage, turn_end, turn_reply
from worker.programs.hook_outcome import TurnEnd
from worker.programs.stop_message import turn_end as message_end

A = "agent-7"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini-0.61.0"
BASE = {
    "session_id": "s-1",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/repo",
    "timestamp": "2026-11-27T01:48:29Z",
}


def _event(name: str, **fields: object) -> dict[str, object]:
    return {**BASE, "hook_event_name": name, **fields}


SHELL_PERMISSION = _event(
    "Notification",
    notification_type="ToolPermission",
    message="Tool Confirm Shell Command requires execution",
    details={
        "type": "exec",
        "title": "Confirm Shell Command",
        "command": "rm -rf build",
        "rootCommand": "rm",
    },
)
CASES = {
    "before-agent-runs": (_event("BeforeAgent", prompt="fix it"), "", ("running", "state", "")),
    "before-agent-when-running-says-nothing": (_event("BeforeAgent", prompt="x"), "running", None),
    "before-tool-after-waiting": (
        _event("BeforeTool", tool_name="run_shell_command"),
        "waiting",
        ("running", "state", ""),
    ),
    "after-tool-answers-the-dialog": (
        _event("AfterTool", tool_name="write_file"),
        "permission",
        ("running", "state", ""),
    ),
    "after-agent-marker-completes": (
        _event("AfterAgent", prompt="p", prompt_response=f"Done.\n{COMPLETION_MARKER}\n"),
        "running",
        ("complete", "complete", ""),
    ),
    "after-agent-marker-with-the-last-chunk-repeated": (
        _event("AfterAgent", prompt_response="Making it. \nMade.\nI HAVE COMPLETED THE GOAL HE GOAL"),
        "running",
        ("complete", "complete", ""),
    ),
    "after-agent-waiting-marker": (
        _event("AfterAgent", prompt="p", prompt_response=f"Which one?\n{WAITING_MARKER}"),
        "running",
        ("waiting", "waiting", ""),
    ),
    "after-agent-no-marker-waits": (
        _event("AfterAgent", prompt="p", prompt_response="All done here."),
        "running",
        ("waiting", "waiting", ""),
    ),
    "after-agent-without-start-signal-still-ends-the-turn": (
        _event("AfterAgent", prompt_response=COMPLETION_MARKER),
        "",
        ("complete", "complete", ""),
    ),
    "tool-permission-shell": (SHELL_PERMISSION, "running", ("permission", "permission", "permission")),
    "other-notification": (
        _event("Notification", notification_type="SomethingNew", message="hello"),
        "running",
        ("", "notification", ""),
    ),
    "session-end-stops": (_event("SessionEnd", reason="exit"), "waiting", ("stopped", "stopped", "")),
    "session-end-again-says-nothing": (_event("SessionEnd", reason="exit"), "stopped", None),
    "session-start-ignored": (_event("SessionStart", source="startup"), "", None),
    "pre-compress-every-request-ignored": (_event("PreCompress", trigger="auto"), "running", None),
    "after-model-per-chunk-ignored": (_event("AfterModel", llm_response={}), "running", None),
    "unknown-event-ignored": (_event("SomeFutureEvent", x=1), "running", None),
    "no-event-name": ({"session_id": "s"}, "running", None),
    "event-name-not-a-string": ({"hook_event_name": 3}, "running", None),
    "details-not-a-mapping": (
        _event("Notification", notification_type="ToolPermission", message="m", details="{json text}"),
        "running",
        ("permission", "permission", "permission"),
    ),
    "prompt-response-not-a-string": (
        _event("AfterAgent", prompt_response=["list"]),
        "running",
        ("waiting", "waiting", ""),
    ),
    "session-end-without-reason": (_event("SessionEnd"), "running", ("stopped", "stopped", "")),
}


@pytest.mark.parametrize(("payload", "previous", "expected"), CASES.values(), ids=CASES.keys())
def test_outcome(payload: dict[str, object], previous: str, expected: tuple[str, str, str] | None) -> None:
    found = outcome(payload, A, previous)
    assert (None if found is None else (found.state, found.event_type, found.prompt)) == expected


def test_permission_event_names_the_command_and_offers_the_answers() -> None:
    found = outcome(SHELL_PERMISSION, A, "running")
    assert found is not None
    assert found.message == f"{A} asks: Confirm Shell Command: rm -rf build"
    assert found.data["detail"] == "rm -rf build"
    assert [o["label"] for o in found.data["options"]] == ["approve", "approve always", "deny"]  # type: ignore[attr-defined]


def test_unknown_fields_are_kept_in_the_event() -> None:
    payload = _event("SessionEnd", reason="exit", exit_code=0, origin={"by": "ctrl-c"})
    found = outcome(payload, A, "running")
    assert found is not None
    assert found.data == {"reason": "exit", "unknown": {"exit_code": "0", "origin": "{'by': 'ctrl-c'}"}}


def _session() -> list[dict[str, object]]:
    lines = (FIXTURES / "hooks-one-session.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_real_session_reads_as_its_turns() -> None:
    """One prompt, a shell command, a new file and a replace (each approved), a reply without a marker;
    a second prompt the API refused (Gemini CLI ends that turn with "[no response text]": the error is
    the pane's to read); /quit, whose three SessionEnds make one `stopped`."""
    payloads = _session()
    assert [p["hook_event_name"] for p in payloads].count("SessionEnd") == 3
    seen = [(o.state, o.event_type) for o in outcomes(payloads, A)]
    approved = [("permission", "permission"), ("running", "state")]
    turn_end = [("waiting", "waiting")]
    started = [("running", "state")]
    assert seen == started + approved * 3 + turn_end + started + turn_end + [("stopped", "stopped")]


REPLIES = {
    "last-chunk-repeated": ("Made.\nI HAVE COMPLETED THE GOAL HE GOAL", "Made.\nI HAVE COMPLETED THE GOAL"),
    "one-chunk-trailing-space": ("All done here. ", "All done here."),
    "nothing-repeated": ("Running it.  \nNow writing.", "Running it.  \nNow writing."),
    "empty": ("", ""),
}


@pytest.mark.parametrize(("given", "expected"), REPLIES.values(), ids=REPLIES.keys())
def test_turn_reply_cuts_the_repeated_chunk(given: str, expected: str) -> None:
    assert turn_reply(given) == expected


def test_after_agent_reaches_the_stop_hook_as_its_last_message() -> None:
    payload = _event("AfterAgent", prompt_response="Done.\nI HAVE COMPLETED THE GOAL HE GOAL")
    made = turn_end(payload, A)
    assert made.last_message == "Done.\nI HAVE COMPLETED THE GOAL"
    assert (made.state, made.session, made.turn) == ("complete", "s-1@2026-11-27T01:48:29Z", "")
    # the chat log goes on the agent's record, and the turn's tokens are read from it as Gemini writes it
    assert (made.log, made.read_usage) == ("/tmp/t.jsonl", read_usage)


def test_the_chat_log_s_answer_wins_over_a_garbled_prompt_response(tmp_path: Path) -> None:
    """0.61.0 adds a streamed answer's pieces to `prompt_response` again, spaced: seen with 1-character
    chunks. The chat log keeps the answer whole."""
    whole = "All steps done.\n\nI HAVE COMPLETED THE GOAL"
    garbled = whole + " l l   s t e p s   d o n e . \n \n I   H A V E   C O M P L E T E D   T H E   G O A L"
    log = tmp_path / "session.jsonl"
    log.write_text(
        json.dumps({"id": "u1", "type": "user", "content": [{"text": "do the steps"}]})
        + "\n"
        + json.dumps({"id": "m1", "type": "gemini", "content": whole})
        + "\n",
        encoding="utf-8",
    )
    payload = _event("AfterAgent", prompt_response=garbled, transcript_path=str(log))
    assert turn_end(payload, A, chat_end(str(log))[0]).last_message == whole
    assert message_end(whole) == "complete"
    found = read_hook(payload, A)  # the hook reads the chat log itself
    assert isinstance(found, TurnEnd)
    assert (found.last_message, found.state) == (whole, "complete")
    assert chat_end(str(tmp_path / "gone.jsonl")) == chat_end(None) == ("", "")


FAILED = {
    "bad-request": (
        '[API Error: {"error":{"code":400,"message":"refused.","status":"INVALID_ARGUMENT"}}]',
        ("error", "error", "other"),
    ),
    "overloaded": (
        '[API Error: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}]',
        ("error", "error", "overloaded"),
    ),
    "bad-key": (
        '[API Error: {"error":{"code":401,"message":"no","status":"UNAUTHENTICATED"}}]',
        ("error", "error", "auth"),
    ),
    "daily-quota": (
        "[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later.",
        ("limited", "limited", "rate_limit"),
    ),
    "quota-with-reset": (
        "[API Error: You exceeded your current quota, please check your plan and billing details.\n"
        "Suggested retry after 3600s.]",
        ("limited", "limited", "rate_limit"),
    ),
    "resource-exhausted": (
        '[API Error: {"error":{"code":429,"message":"Exhausted.","status":"RESOURCE_EXHAUSTED"}}]',
        ("limited", "limited", "rate_limit"),
    ),
}


@pytest.mark.parametrize(("error", "expected"), FAILED.values(), ids=FAILED.keys())
def test_a_turn_an_api_error_ended(error: str, expected: tuple[str, str, str]) -> None:
    """Told as Claude Code's StopFailure is: `limited` (parked: worker.hooks.limit_park) for a used-up
    quota, else `error` with its kind, the error as the last message."""
    found = failed_turn(error, "g1")
    assert (found.state, found.event_type, found.data["kind"]) == expected
    assert found.data["last_message"] == error


def test_after_agent_reads_the_error_from_the_chat_log(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    lines = [
        {"id": "u1", "type": "user", "content": [{"text": "go on"}]},
        {
            "id": "e1",
            "type": "error",
            "content": "[API Error: You have exhausted your daily quota on this model.]",
        },
        {"id": "i1", "type": "info", "content": "This request failed. Press F12 for diagnostics"},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert chat_end(str(log)) == ("", "[API Error: You have exhausted your daily quota on this model.]")
    found = read_hook(_event("AfterAgent", prompt_response="[no response text]", transcript_path=str(log)), A)
    assert found is not None and not isinstance(found, TurnEnd)  # told as an error, not a turn's end
    assert (found.state, found.event_type) == ("limited", "limited")
