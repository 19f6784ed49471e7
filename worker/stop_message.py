"""What the Stop hook decides from the agent's last assistant message: complete or waiting when the
message ends with that marker as its own final line, unknown otherwise (the hook then reads the
pane). Pure."""

from __future__ import annotations

from enum import StrEnum

from worker.pane_state import COMPLETION_MARKER, WAITING_MARKER


class StopDecision(StrEnum):
    COMPLETE = "complete"
    WAITING = "waiting"
    UNKNOWN = "unknown"


_FINAL_LINES = {COMPLETION_MARKER: StopDecision.COMPLETE, WAITING_MARKER: StopDecision.WAITING}


def stop_decision(last_assistant_message: str | None) -> StopDecision:
    """The marker on the message's last non-blank line (surrounding spaces ignored, case kept)."""
    lines = (last_assistant_message or "").strip().splitlines()
    final_line = lines[-1].strip() if lines else ""
    return _FINAL_LINES.get(final_line, StopDecision.UNKNOWN)
