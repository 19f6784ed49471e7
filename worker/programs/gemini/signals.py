"""What one of Gemini CLI's hook payloads means for ittybus: an `Outcome` or a `TurnEnd`
(worker.programs.hook_outcome), as every program's. Pure and light; `hook` reads the chat log for what
AfterAgent leaves out.

BeforeAgent / AfterAgent bracket a turn (AfterAgent is Gemini's only turn-end signal: its
`prompt_response`, less the repeat 0.61.0 appends (`turn_reply`), ends with the marker, or the agent
waits for the person; a turn an API error ended is `failed_turn`, read from the chat log); Notification with
`notification_type: ToolPermission` opens an approval dialog; BeforeTool / AfterTool mean the turn is at
work (after a dialog: it was answered); SessionEnd, which 0.61.0 fires three times on one exit, stops the
agent once. SessionStart, PreCompress (sent before every model request, not only when it compresses),
BeforeModel, AfterModel and BeforeToolSelection (per request or streamed chunk) say nothing a person
needs. Unknown events and unknown fields are no error: an unknown event gives None, extra fields are
ignored, missing ones read as empty.
"""

from __future__ import annotations

from bus.events.event_options import listed
from worker.programs.hook_outcome import MAX_TEXT, PERMISSION_OPTIONS, Outcome, TurnEnd

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from bus.costs.usage import Usage

HOOKED = ("SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "Notification")
"""The events ittybus installs a hook for: the ones `outcome` reads."""


COMMON = ("session_id", "transcript_path", "cwd", "hook_event_name", "timestamp")
KNOWN = {
    "BeforeAgent": ("prompt",),
    "AfterAgent": ("prompt", "prompt_response", "stop_hook_active"),
    "BeforeTool": ("tool_name", "tool_input"),
    "AfterTool": ("tool_name", "tool_input", "tool_response"),
    "Notification": ("notification_type", "message", "details"),
    "SessionEnd": ("reason",),
}
"""The fields 0.61.0 sends with each event ittybus reads; any other is kept in the event's `unknown`."""
UNKNOWN_CHARS = 200  # of each unknown field's value kept in the event


def _text(payload: Mapping[str, object], name: str) -> str:
    value = payload.get(name)
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def outcome(payload: Mapping[str, object], agent_id: str, previous: str = "") -> Outcome | None:
    """The outcome of one hook payload for an agent whose stored state is `previous`; None when the event
    does not concern ittybus or only repeats what the agent's state already says."""
    event = payload.get("hook_event_name")
    read = _READERS.get(event) if isinstance(event, str) else None
    found = read(payload, agent_id) if read else None
    if found is None or (found.event_type == "state" and found.state == previous):
        return None
    if event == "SessionEnd" and previous == "stopped":
        return None  # the second and third SessionEnd of one exit
    found.log = _path(payload)
    found.record_log = event == "BeforeAgent"  # its chat log, read by the worker's tail
    found.reminder = event == "Notification"
    known = (*COMMON, *KNOWN.get(str(event), ()))
    unknown = {k: str(v)[:UNKNOWN_CHARS] for k, v in payload.items() if k not in known}
    if unknown:
        found.data = {**found.data, "unknown": unknown}
    return found


def outcomes(payloads: Iterable[Mapping[str, object]], agent_id: str, state: str = "") -> list[Outcome]:
    """The outcomes of a run of payloads in order, each read against the state the ones before it left."""
    made: list[Outcome] = []
    for payload in payloads:
        found = outcome(payload, agent_id, state)
        if found is not None:
            made.append(found)
            state = found.state or state
    return made


def _before_agent(payload: Mapping[str, object], agent_id: str) -> Outcome:
    return Outcome("running", "state", "", {"prompt": _text(payload, "prompt")})


def _at_work(payload: Mapping[str, object], agent_id: str) -> Outcome:
    return Outcome("running", "state", "", {"tool": _text(payload, "tool_name")})


def turn_reply(prompt_response: str) -> str:
    """The turn's reply from AfterAgent's `prompt_response`: 0.61.0 appends the stream's last chunk to it
    once more after a space ("…THE GOAL" + " " + "HE GOAL"), which would hide a marker on the last line;
    that repeat is cut off."""
    text = prompt_response.rstrip()
    for index in range(len(text) - 1, 0, -1):
        if text[index] == " " and text[index + 1 :] and text[:index].endswith(text[index + 1 :]):
            return text[:index]
    return text


def _after_agent(payload: Mapping[str, object], agent_id: str) -> TurnEnd:
    return turn_end(payload, agent_id)


def turn_end(payload: Mapping[str, object], agent_id: str, answer: str = "") -> TurnEnd:
    """AfterAgent's turn end: the turn's reply is `answer`, its last message as the chat log keeps it, else
    what `prompt_response` holds; its tokens are read from the chat log as Gemini CLI writes it; Gemini
    names no turn, so the session and the moment it ended tell one apart."""
    reply = payload.get("prompt_response")
    last = answer or (turn_reply(reply) if isinstance(reply, str) else "")
    session = f"{payload.get('session_id', '')}@{payload.get('timestamp', '')}"
    return TurnEnd(agent_id, last, read_usage, session=session, log=_path(payload))


def read_usage(path: str) -> tuple[list[Usage], int]:
    """Each answer's usage in the chat log at `path`, and its unreadable lines."""
    from worker.programs.gemini.usage import read_chat

    return read_chat(path)


def _path(payload: Mapping[str, object]) -> str:
    path = payload.get("transcript_path")
    return path if isinstance(path, str) else ""


QUOTA_WORDS = ("RESOURCE_EXHAUSTED", "quota", "Usage limit reached", '"code":429')
"""What names a used-up quota in the error Gemini CLI writes to its chat log: the API's status (a 429 is
RESOURCE_EXHAUSTED), or 0.61.0's own words ("You have exhausted your daily quota on this model.")."""
ERROR_KINDS = (("UNAVAILABLE", "overloaded"), ("UNAUTHENTICATED", "auth"), ("PERMISSION_DENIED", "auth"))
"""The API's status in the error, as the kinds of Claude Code's StopFailure
(worker.programs.claude.signals)."""


def failed_turn(error: str, agent_id: str) -> Outcome:
    """A turn an API error ended, from the `error` entry of the chat log (AfterAgent says only "[no response
    text]"): a used-up quota is `limited`, the agent parked until the reset its text names ("Suggested
    retry after 3600s"; worker.hooks.limit_park), any other error is `error`."""
    text = error[:MAX_TEXT]
    if any(word in text for word in QUOTA_WORDS):
        data: dict[str, object] = {"kind": "rate_limit", "error": "quota", "last_message": text}
        return Outcome("limited", "limited", f"{agent_id} is limited", data)
    kind = next((k for status, k in ERROR_KINDS if f'"status":"{status}"' in text), "other")
    data = {"kind": kind, "error": "api_error", "last_message": text}
    return Outcome("error", "error", f"{agent_id}: the turn ended with an API error ({kind})", data)


def _notification(payload: Mapping[str, object], agent_id: str) -> Outcome:
    kind = _text(payload, "notification_type")
    message = _text(payload, "message")
    if kind != "ToolPermission":
        data: dict[str, object] = {"notification_type": kind, "message": message}
        return Outcome("", "notification", f"{agent_id}: {message or kind or 'a notification'}", data)
    details = _mapping(payload.get("details"))
    detail = next(
        (
            v[:MAX_TEXT]
            for k in ("command", "filePath", "fileName", "url")
            if isinstance(v := details.get(k), str)
        ),
        "",
    )
    tool = _text(details, "title") or message or "a tool"
    return Outcome(
        "permission",
        "permission",
        f"{agent_id} asks: {tool}" + (f": {detail}" if detail and detail not in tool else ""),
        {
            "kind": "permission",
            "tool": _text(details, "type") or "tool",
            "detail": detail,
            "description": message,
            "options": listed(PERMISSION_OPTIONS),
        },
        prompt="permission",
    )


def _session_end(payload: Mapping[str, object], agent_id: str) -> Outcome:
    reason = _text(payload, "reason") or "other"
    return Outcome(
        "stopped", "stopped", f"{agent_id} stopped (Gemini CLI exited: {reason})", {"reason": reason}
    )


_READERS = {
    "BeforeAgent": _before_agent,
    "AfterAgent": _after_agent,
    "BeforeTool": _at_work,
    "AfterTool": _at_work,
    "Notification": _notification,
    "SessionEnd": _session_end,
}
