"""`ib hook event`: a Claude Code agent's Notification, PermissionRequest, StopFailure, SessionEnd,
PreCompact and UserPromptSubmit hooks. The payload is read by Claude Code's own reader
(worker.programs.claude.hook) and acted on as every program's (worker.hooks.agent_event). Never fails the
session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

from worker.hooks.payload_hook import run_payload_hook
from worker.programs.claude.hook import read_event

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("event", read_event)
