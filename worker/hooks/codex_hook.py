"""`ib hook codex`: a Codex CLI agent's hooks.json command. The payload (on stdin) is read by Codex's own
reader (worker.programs.codex.signals) and acted on as every program's (worker.hooks.payload_hook): a
turn's end once per Codex turn id (its notify tells the same end), a dialog or a change of state as
`ib hook event` does. Runs on the light client and never fails the session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

from worker.hooks.payload_hook import run_payload_hook
from worker.programs.codex.signals import read_hook

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("codex", read_hook)
