"""What one of Claude Code's hook payloads means for ittybus: an `Outcome` (the agent's new state and the
event to publish), or the Stop payload's `TurnEnd` (worker.programs.hook_outcome). Pure, and light enough
for the hooks' path (no re, json or typing at run time).

Covers Stop (`turn_end`), Notification (by `notification_type`), PermissionRequest (AskUserQuestion and
ExitPlanMode are dialogs of their own), StopFailure, SessionEnd, PreCompact and UserPromptSubmit.
Payloads from newer Claude Code versions (unknown types, missing or extra fields) still give an outcome,
never an error.
"""

from __future__ import annotations

from bus.events.event_options import listed
from worker.programs.hook_outcome import MAX_TEXT, PERMISSION_OPTIONS, Outcome, TurnEnd

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from bus.costs.usage import Usage

AUTH_ERRORS = frozenset(
    {
        "authentication_failed",
        "oauth_org_not_allowed",
        "account_on_hold",
        "verification_required",
        "billing_error",
        "cloud_credential_error",
    }
)
PLAN_OPTIONS = ("approve", "keep planning")


def _text(payload: Mapping[str, object], name: str) -> str:
    value = payload.get(name)
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def tool_detail(tool: str, tool_input: Mapping[str, object]) -> str:
    """The one thing a person needs to judge a tool call: its command, path, URL or pattern."""
    for name in ("command", "file_path", "notebook_path", "path", "url", "pattern", "query"):
        value = tool_input.get(name)
        if isinstance(value, str) and value:
            return value[:MAX_TEXT]
    return ""


def outcome(payload: Mapping[str, object], agent_id: str) -> Outcome | None:
    """The outcome of one hook payload (but Stop's: `turn_end`); None when the event does not concern
    ittybus. A Notification is a reminder (worker.programs.hook_outcome.says_nothing_new)."""
    event = payload.get("hook_event_name")
    read = _READERS.get(event) if isinstance(event, str) else None
    found = read(payload, agent_id) if read else None
    if found is not None:
        found.log = _path(payload)
        found.reminder = event == "Notification"
    return found


def turn_end(payload: Mapping[str, object], agent_id: str, decision: str = "") -> TurnEnd:
    """The Stop payload's turn end: its last message (Claude Code names no turn: the session and the
    transcript tell one apart), or the `decision` the screen showed when the payload has none (older
    Claude Code); its tokens read from the transcript as Claude Code writes it."""
    last = payload.get("last_assistant_message")
    session = payload.get("session_id", "")
    return TurnEnd(
        agent_id,
        last if isinstance(last, str) else "",
        read_usage,
        session=str(session),
        log=_path(payload),
        decision=decision,
    )


def read_usage(path: str) -> tuple[list[Usage], int]:
    """Each answer's usage in Claude Code's transcript at `path`, and its unreadable lines."""
    from worker.programs.claude.usage import read_transcript

    return read_transcript(path)


def _path(payload: Mapping[str, object]) -> str:
    path = payload.get("transcript_path")
    return path if isinstance(path, str) else ""


def _session_end(payload: Mapping[str, object], agent_id: str) -> Outcome | None:
    reason = _text(payload, "reason") or "other"
    if reason in ("clear", "resume"):
        return None  # the program goes on with another conversation
    return Outcome(
        "stopped", "stopped", f"{agent_id} stopped (Claude Code exited: {reason})", {"reason": reason}
    )


def _pre_compact(payload: Mapping[str, object], agent_id: str) -> Outcome:
    return Outcome("compacting", "state", "", {"trigger": _text(payload, "trigger")})


def _user_prompt_submit(payload: Mapping[str, object], agent_id: str) -> Outcome:
    return Outcome("running", "state", "", {})


def _notification(payload: Mapping[str, object], agent_id: str) -> Outcome:
    kind = _text(payload, "notification_type")
    message = _text(payload, "message")
    data: dict[str, object] = {"notification_type": kind, "message": message}
    if kind == "permission_prompt":
        return Outcome(
            "permission",
            "permission",
            f"{agent_id} needs your permission: {message or 'a dialog is open'}",
            {**data, "kind": "permission", "options": listed(PERMISSION_OPTIONS)},
            prompt="permission",
        )
    if kind == "idle_prompt":
        return Outcome("waiting", "waiting", f"Agent {agent_id} is waiting for input", data)
    if kind == "elicitation_dialog":
        return Outcome(
            "permission",
            "question",
            f"Agent {agent_id} asks: {message or 'an MCP server wants input'}",
            {**data, "question": message, "options": [], "kind": "elicitation"},
        )
    return Outcome("", "notification", f"{agent_id}: {message or kind or 'a notification'}", data)


def _permission_request(payload: Mapping[str, object], agent_id: str) -> Outcome:
    tool = _text(payload, "tool_name") or "a tool"
    tool_input = _mapping(payload.get("tool_input"))
    if tool == "AskUserQuestion":
        return _ask_user_question(tool_input, agent_id)
    if tool == "ExitPlanMode":
        plan = tool_input.get("plan")
        plan_text = plan[:MAX_TEXT] if isinstance(plan, str) else ""
        return Outcome(
            "permission",
            "permission",
            f"{agent_id} has a plan and asks to go ahead",
            {"kind": "plan", "tool": tool, "plan": plan_text, "options": listed(PLAN_OPTIONS)},
            prompt="plan",
        )
    detail = tool_detail(tool, tool_input)
    return Outcome(
        "permission",
        "permission",
        f"{agent_id} asks to use {tool}" + (f": {detail}" if detail else ""),
        {
            "kind": "permission",
            "tool": tool,
            "detail": detail,
            "description": str(tool_input.get("description") or "")[:MAX_TEXT],
            "options": listed(PERMISSION_OPTIONS),
        },
        prompt="permission",
    )


def _ask_user_question(tool_input: Mapping[str, object], agent_id: str) -> Outcome:
    """The first question of the dialog with its options, numbered 1, 2, ... as the dialog draws them."""
    questions = tool_input.get("questions")
    first = _mapping(questions[0]) if isinstance(questions, list) and questions else {}
    question = first.get("question")
    text = question[:MAX_TEXT] if isinstance(question, str) else "a question"
    options = first.get("options")
    labels = []
    for option in options if isinstance(options, list) else []:
        label = _mapping(option).get("label") if isinstance(option, dict) else option
        if isinstance(label, str):
            labels.append(label[:200])
    return Outcome(
        "permission",
        "question",
        f"Agent {agent_id} asks: {text}",
        {
            "kind": "ask",
            "question": text,
            "options": listed(labels, numbered=True),
            "multi_select": bool(first.get("multiSelect")),
            "questions": len(questions) if isinstance(questions, list) else 0,
        },
        prompt="ask",
    )


def error_kind(error: str, message: str) -> str:
    """overloaded, rate_limit, auth or other, from StopFailure's `error` (and its message for 529s,
    which Claude Code reports as server errors)."""
    if error == "overloaded" or (error == "server_error" and " 529 " in f" {message} "):
        return "overloaded"
    if error == "rate_limit":
        return "rate_limit"
    if error in AUTH_ERRORS:
        return "auth"
    return "other"


def _stop_failure(payload: Mapping[str, object], agent_id: str) -> Outcome:
    error = _text(payload, "error") or "unknown"
    last = _text(payload, "last_assistant_message")
    kind = error_kind(error, last)
    data: dict[str, object] = {
        "kind": kind,
        "error": error,
        "details": _text(payload, "error_details"),
        "last_message": last,
    }
    limits = _mapping(payload.get("rate_limits"))  # the quota the API sent (turn_quota)
    if limits:
        data["reset_header"], data["claim"] = limits.get("resets_at"), limits.get("rate_limit_type")
    if kind == "rate_limit":
        from bus.costs.usage_limits import is_plan_limit

        if is_plan_limit(limits, last):  # parked until its reset (worker.hooks.limit_park)
            return Outcome("limited", "limited", f"{agent_id} is limited", data)
        return Outcome("error", "error", f"{agent_id}: the turn ended on a rate limit (429), not the "
                       "plan's usage limit", data)  # fmt: skip
    return Outcome("error", "error", f"{agent_id}: the turn ended with an API error ({kind})", data)


_READERS = {
    "Notification": _notification,
    "PermissionRequest": _permission_request,
    "StopFailure": _stop_failure,
    "SessionEnd": _session_end,
    "PreCompact": _pre_compact,
    "UserPromptSubmit": _user_prompt_submit,
}
