"""What the Stop hook decides from the agent's last assistant message: complete or waiting when the
message ends with that marker as its own final line, unknown otherwise; a turn that ended without a
marker leaves the agent waiting for the person. Pure, and light: plain strings rather than an Enum,
because the Stop hook imports this on every turn of every agent and `enum` alone costs it about 2 ms."""

from __future__ import annotations

from worker.markers import COMPLETION_MARKER, WAITING_MARKER

COMPLETE = "complete"
WAITING = "waiting"
UNKNOWN = "unknown"
DECISIONS = (COMPLETE, WAITING, UNKNOWN)

_FINAL_LINES = {COMPLETION_MARKER: COMPLETE, WAITING_MARKER: WAITING}


def stop_decision(last_assistant_message: str | None) -> str:
    """The marker on the message's last non-blank line (surrounding spaces ignored, case kept)."""
    lines = (last_assistant_message or "").strip().splitlines()
    final_line = lines[-1].strip() if lines else ""
    return _FINAL_LINES.get(final_line, UNKNOWN)


def turn_end(last_assistant_message: str) -> str:
    """The event a turn that ended with this message raises: its marker's, else WAITING (the agent is idle
    and the person is the one to act: a plain question, a summary without the marker, an empty reply)."""
    decision = stop_decision(last_assistant_message)
    return WAITING if decision == UNKNOWN else decision
