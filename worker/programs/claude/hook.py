"""Claude Code's hook payloads read into outcomes where the payload alone does not say it all: a 429's
quota read from the transcript (`turn_quota`), and the end of a turn whose Stop payload has no last
message (older Claude Code) read from the screen. The payloads themselves are read by `signals` (pure).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from worker.programs.hook_outcome import Outcome, TurnEnd


def read_event(payload: Mapping[str, object], agent_id: str) -> Outcome | None:
    """The outcome of `ib hook event`'s payload (Notification, PermissionRequest, StopFailure, ...)."""
    from worker.programs.claude.signals import outcome

    if payload.get("hook_event_name") == "StopFailure" and payload.get("error") == "rate_limit":
        payload = _with_quota(payload)
    return outcome(payload, agent_id)


def _with_quota(payload: Mapping[str, object]) -> Mapping[str, object]:
    """A 429's StopFailure payload with the quota the API sent (`rate_limits`), read from the transcript
    when the payload does not carry it: it tells the plan's usage limit from an ordinary rate limit."""
    if payload.get("rate_limits"):
        return payload
    from worker.programs.claude.turn_quota import read_quota

    return {**payload, "rate_limits": read_quota(payload.get("transcript_path"))}


def read_stop(payload: Mapping[str, object], agent_id: str) -> TurnEnd | None:
    """The turn end of `ib hook stop`'s payload (None for what is no Stop payload). Claude Code draws the
    end of the turn a moment after this hook starts, so the screen is read only when the payload has no
    last message, and only for the completion marker."""
    from worker.programs.claude.signals import turn_end

    if isinstance(payload.get("last_assistant_message"), str):
        return turn_end(payload, agent_id)
    if payload.get("hook_event_name") != "Stop":
        return None
    return turn_end(payload, agent_id, _screen_decision())


def _screen_decision() -> str:
    """complete when the agent's pane shows the completion marker, else waiting."""
    from worker.programs.stop_message import COMPLETE, WAITING

    pane = os.environ.get("TMUX_PANE")
    if not pane:
        return WAITING
    from worker.tmux.in_pane import tmux
    from worker.tmux.pane_state import pane_state

    shown = tmux(["capture-pane", "-p", "-t", pane], timeout=3, check=False)
    return COMPLETE if pane_state(shown).value == COMPLETE else WAITING
