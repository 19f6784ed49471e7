"""`ib hook gemini`: a Gemini CLI agent's BeforeAgent, AfterAgent, BeforeTool, AfterTool, Notification and
SessionEnd hooks. The payload is read by Gemini CLI's own reader (worker.programs.gemini.hook: AfterAgent
ends a turn, or an API error the chat log shows ended it) and acted on as every program's
(worker.hooks.payload_hook). Prints nothing (Gemini CLI reads a hook's stdout as its decision) and never
fails the session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

from worker.hooks.payload_hook import run_payload_hook
from worker.programs.gemini.hook import read_hook

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("gemini", read_hook)
