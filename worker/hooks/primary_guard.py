"""`ib hook primary-pre-tool-use`: the main repository's own Claude may not `cd` into an agent's worktree.

Everything else gets no decision. Runs on every Bash call of the primary session: stdlib only (plus
bus.settings.repo_paths); bad stdin or anything unexpected → exit 0 with nothing printed.
"""

from __future__ import annotations

import os
import sys

from worker.hooks.pre_tool_use import denial, read_payload
from worker.permissions.policy import decide_primary

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def check(stdin_text: str, env: Mapping[str, str], cwd: str) -> str | None:
    """The hook's output for one tool call of the primary session (None: say nothing)."""
    if env.get("IB_AGENT_ID"):
        return None  # an agent has its own PreToolUse hook
    call = read_payload(stdin_text)
    if call is None or call[0] != "Bash":
        return None
    tool_name, tool_input, payload_cwd = call
    from bus.settings.repo_paths import repo_root

    here = payload_cwd or cwd
    root = repo_root(here) or env.get("CLAUDE_PROJECT_DIR")
    if not root:
        return None
    home = env.get("HOME") or os.path.expanduser("~")
    decision = decide_primary(tool_name, tool_input, cwd=here, root=root, home=home)
    return denial(decision.reason) if decision.verdict == "deny" else None


def main(argv: Sequence[str] = ()) -> int:
    try:
        out = check(sys.stdin.read(), os.environ, os.getcwd())
        if out:
            print(out)
    except Exception:
        return 0
    return 0
