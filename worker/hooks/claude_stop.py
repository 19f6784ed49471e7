"""`ib hook stop`: a Claude Code agent's Stop hook. Its payload is read by Claude Code's own reader
(worker.programs.claude.hook) into the turn's end, published once per turn (worker.hooks.stop). Never fails
the session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

from worker.hooks.payload_hook import run_payload_hook
from worker.programs.claude.hook import read_stop

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("stop", read_stop)
