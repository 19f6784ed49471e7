"""What Codex CLI's own signals mean for ittybus: its hooks.json payloads (on the hook's stdin) and its
notify program's `agent-turn-complete` JSON (the program's last argument), each turned into an `Outcome`
or a `TurnEnd` (worker.programs.hook_outcome). Pure, and light enough for the hooks' path (no re, json
or typing at run time).

Codex 0.169.0 runs notify once per turn of every thread, and a turn may also run a hidden thread that
names the session (seen on the first and on later turns): its notify (another thread id, the title
instruction as its input) arrives while the agent's turn still runs and must not end it. A turn's end
reaches ittybus twice, by the Stop hook and by notify, with the same turn id: `TurnEnd.turn` is what the
hooks publish once. A turn end is read from its own payload alone, never from an earlier start
signal, so an agent never stays `waiting` or `running` for want of one. Fields this version does not
know are kept in the event's `data["extra"]`, never an error.
"""

from __future__ import annotations

from bus.events.event_options import listed
from worker.programs.hook_outcome import MAX_TEXT, PERMISSION_OPTIONS, Outcome, TurnEnd

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from bus.costs.usage import Usage

MAX_EXTRA = 200  # characters of an unknown field's text kept in the event
TURN_COMPLETE = "agent-turn-complete"
# how Codex opens the request of its hidden title thread (the first input message of that thread)
TITLE_INSTRUCTION = "Generate a concise, single-line task title"
_HOOK_FIELDS = frozenset(
    {
        "session_id", "turn_id", "transcript_path", "cwd", "hook_event_name", "model", "permission_mode",
        "source", "prompt", "tool_name", "tool_input", "tool_use_id", "tool_response", "stop_hook_active",
        "last_assistant_message", "reason", "trigger",
    }
)  # fmt: skip
_NOTIFY_FIELDS = frozenset(
    {"type", "thread-id", "turn-id", "cwd", "client", "input-messages", "last-assistant-message"}
)
_WORKING = frozenset({"UserPromptSubmit", "PreToolUse", "PostToolUse", "PreModelRequest", "PostModelRequest"})


def _text(payload: Mapping[str, object], name: str, limit: int = MAX_TEXT) -> str:
    value = payload.get(name)
    return value[:limit] if isinstance(value, str) else ""


def _extra(payload: Mapping[str, object], known: frozenset[str]) -> dict[str, object]:
    """The payload's fields this version does not know, kept (texts cut short) for whoever reads the event."""
    kept: dict[str, object] = {}
    for name, value in payload.items():
        if name not in known:
            kept[name] = value[:MAX_EXTRA] if isinstance(value, str) else value
    return kept


def _with_extra(
    data: Mapping[str, object], payload: Mapping[str, object], known: frozenset[str]
) -> dict[str, object]:
    extra = _extra(payload, known)
    return {**data, "extra": extra} if extra else dict(data)


def _turn_end(
    agent_id: str, last_message: str, turn: str, data: dict[str, object], session: str, log: str = ""
) -> TurnEnd:
    return TurnEnd(agent_id, last_message, read_usage, session, turn, log, {"turn": turn, **data})


def read_usage(path: str) -> tuple[list[Usage], int]:
    """Each answer's usage in the rollout at `path` (the Stop hook names it; notify does not), and its
    unreadable lines."""
    from worker.programs.codex.usage import read_rollout

    return read_rollout(path)


# --- hooks.json -------------------------------------------------------------------------------------


def read_hook(payload: Mapping[str, object], agent_id: str) -> Outcome | None:
    """The reading of one hooks.json payload; None when the event does not concern ittybus (an event
    this version does not know, a subagent's)."""
    event = payload.get("hook_event_name")
    read = _HOOK_READERS.get(event) if isinstance(event, str) else None
    return read(payload, agent_id, _text(payload, "turn_id")) if read else None


def _working(payload: Mapping[str, object], agent_id: str, turn: str) -> Outcome:
    data = _with_extra({"hook": payload.get("hook_event_name")}, payload, _HOOK_FIELDS)
    return Outcome("running", "state", "", data, turn=turn)


def _stop(payload: Mapping[str, object], agent_id: str, turn: str) -> Outcome:
    data = _with_extra({"signal": "Stop"}, payload, _HOOK_FIELDS)
    last = _text(payload, "last_assistant_message", 1 << 20)
    return _turn_end(
        agent_id, last, turn, data, _text(payload, "session_id"), _text(payload, "transcript_path")
    )


def _session_end(payload: Mapping[str, object], agent_id: str, turn: str) -> Outcome:
    reason = _text(payload, "reason") or "other"
    data = _with_extra({"reason": reason}, payload, _HOOK_FIELDS)
    return Outcome("stopped", "stopped", f"{agent_id} stopped (Codex exited: {reason})", data)


def _compacting(payload: Mapping[str, object], agent_id: str, turn: str) -> Outcome:
    return Outcome("compacting", "state", "", _with_extra({}, payload, _HOOK_FIELDS), turn=turn)


def _session_start(payload: Mapping[str, object], agent_id: str, turn: str) -> Outcome:
    """No event: the session's id (the thread notify names) for whoever keeps it, and its session log for
    the agent's record (the worker's tail reads it)."""
    data = {"session": _text(payload, "session_id"), "source": _text(payload, "source")}
    found = Outcome(
        "", "", "", _with_extra(data, payload, _HOOK_FIELDS), log=_text(payload, "transcript_path")
    )
    found.record_log = True
    return found


def tool_detail(tool_input: Mapping[str, object]) -> str:
    """The one thing a person needs to judge a tool call: its command, or the file or patch it writes."""
    for name in ("command", "cmd", "file_path", "path", "patch", "input"):
        value = tool_input.get(name)
        if isinstance(value, str) and value:
            return value[:MAX_TEXT]
        if isinstance(value, list) and value and all(isinstance(word, str) for word in value):
            return " ".join(value)[:MAX_TEXT]
    return ""


def _permission_request(payload: Mapping[str, object], agent_id: str, turn: str) -> Outcome:
    tool = _text(payload, "tool_name") or "a tool"
    given = payload.get("tool_input")
    tool_input = given if isinstance(given, dict) else {}
    detail = tool_detail(tool_input)
    data = {
        "kind": "permission",
        "tool": tool,
        "detail": detail,
        "description": str(tool_input.get("description") or "")[:MAX_TEXT],  # Codex's justification
        "options": listed(PERMISSION_OPTIONS),
    }
    message = f"{agent_id} asks to use {tool}" + (f": {detail}" if detail else "")
    return Outcome(
        "permission", "permission", message, _with_extra(data, payload, _HOOK_FIELDS), "permission", turn
    )


# --- notify -----------------------------------------------------------------------------------------


def is_title_thread(payload: Mapping[str, object], session: str = "") -> bool:
    """Whether a notify payload is the hidden thread that names the session: another thread than the
    agent's `session` (when known, from its SessionStart hook), or a turn that opens with the title
    instruction."""
    thread = payload.get("thread-id")
    if session and isinstance(thread, str) and thread:
        return thread != session
    messages = payload.get("input-messages")
    first = messages[0] if isinstance(messages, list) and messages else ""
    return isinstance(first, str) and first.startswith(TITLE_INSTRUCTION)


def read_notify(payload: Mapping[str, object], agent_id: str, session: str = "") -> TurnEnd | None:
    """The reading of one notify payload: a turn's end, or None (the title thread's turn, a type this
    version does not know)."""
    if payload.get("type") != TURN_COMPLETE or is_title_thread(payload, session):
        return None
    data = _with_extra({"signal": "notify", "thread": _text(payload, "thread-id")}, payload, _NOTIFY_FIELDS)
    last = _text(payload, "last-assistant-message", 1 << 20)
    return _turn_end(agent_id, last, _text(payload, "turn-id"), data, _text(payload, "thread-id"))


def notify_payload(argument: str) -> dict[str, object] | None:
    """The JSON notify passes as its last argument; None for what is no JSON object."""
    from bus.wire import fastjson

    try:
        payload = fastjson.loads(argument)
    except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
        return None
    return payload if isinstance(payload, dict) else None


_HOOK_READERS = {
    **dict.fromkeys(_WORKING, _working),
    "PostCompact": _working,
    "PermissionRequest": _permission_request,
    "Stop": _stop,
    "SessionEnd": _session_end,
    "PreCompact": _compacting,
    "SessionStart": _session_start,
}
