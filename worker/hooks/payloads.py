"""What one of Claude Code's hook payloads means for ittybus: the agent's new state and the event to
publish. Pure, and light enough for the hooks' path (no re, json or typing at run time).

Covers Notification (by `notification_type`), PermissionRequest (AskUserQuestion and ExitPlanMode are
dialogs of their own), StopFailure, SessionEnd, PreCompact and UserPromptSubmit. Payloads from newer
Claude Code versions (unknown types, missing or extra fields) still give an outcome, never an error.
"""

from __future__ import annotations

from bus.events.event_options import listed

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_TEXT = 2000  # characters of any one text taken from a payload into an event
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
PERMISSION_OPTIONS = ("approve", "approve always", "deny")
PLAN_OPTIONS = ("approve", "keep planning")


class Outcome:
    """What a hook payload decided. `state` ("" = keep the agent's state), the event (`event_type`,
    "" = none, with `message` and `data`), and for a dialog its `prompt` kind (permission, plan, ask)."""

    __slots__ = ("data", "event_type", "message", "prompt", "state")

    def __init__(
        self, state: str, event_type: str, message: str, data: dict[str, object], prompt: str = ""
    ) -> None:
        self.state, self.event_type, self.message, self.data, self.prompt = (
            state,
            event_type,
            message,
            data,
            prompt,
        )

    def __repr__(self) -> str:
        fields = (self.state, self.event_type, self.message, self.data, self.prompt)
        return f"Outcome{fields!r}"


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
    """The outcome of one hook payload; None when the event does not concern ittybus."""
    event = payload.get("hook_event_name")
    read = _READERS.get(event) if isinstance(event, str) else None
    return read(payload, agent_id) if read else None


def stopped_reason(agent_id: str) -> str:
    """Why a claim fails when its agent's session ends (the SessionEnd hook or the pane watcher says it)."""
    return f"agent {agent_id} stopped (its session ended) while holding the task"


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
    limits = _mapping(payload.get("rate_limits"))  # the quota the API sent (worker.hooks.turn_quota)
    if limits:
        data["reset_header"], data["claim"] = limits.get("resets_at"), limits.get("rate_limit_type")
    if kind == "rate_limit":
        from bus.costs.usage_limits import is_plan_limit

        if is_plan_limit(limits, last):  # parked until its reset (worker.hooks.limit_park)
            return Outcome("limited", "limited", f"{agent_id} is limited", data)
        return Outcome("error", "error", f"{agent_id}: the turn ended on a rate limit (429), not the "
                       "plan's usage limit", data)  # fmt: skip
    return Outcome("error", "error", f"{agent_id}: the turn ended with an API error ({kind})", data)


QUIET_REPEATS = frozenset(
    {
        ("waiting", "waiting"),
        ("waiting", "complete"),
        ("waiting", "error"),  # idle_prompt comes 45-60 s after any turn end: the error still stands
        ("waiting", "rate_limited"),
        ("waiting", "limited"),  # the limit stands until the worker resumes the agent at its reset
        ("permission", "permission"),
    }
)
"""(outcome state, stored state) pairs where a Notification only repeats what a hook already said, or
would hide the error that ended the turn (that stands until the next turn starts)."""


def says_nothing_new(hook_event: object, state: str, previous: str) -> bool:
    """Whether an outcome of state `state` from `hook_event` must be dropped, the agent being `previous`:
    a Notification that repeats (QUIET_REPEATS), a limit the agent is parked on already, or a SessionEnd
    after the pane watcher saw the session end (it published `stopped` and gave the claims back)."""
    if hook_event == "Notification":
        return (state, previous) in QUIET_REPEATS
    if state == previous == "limited":
        return True  # one `limited` event per limit: the agent is parked on it already
    return hook_event == "SessionEnd" and state == previous == "stopped"


_READERS = {
    "Notification": _notification,
    "PermissionRequest": _permission_request,
    "StopFailure": _stop_failure,
    "SessionEnd": _session_end,
    "PreCompact": _pre_compact,
    "UserPromptSubmit": _user_prompt_submit,
}
