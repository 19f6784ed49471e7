"""How a hook whose payload comes on stdin runs: read the JSON, find the agent (IB_AGENT_ID, else the
worktree the payload's cwd lies in), hand both on, and never fail the agent's session: a broken payload
is ignored, any other trouble is reported (worker.hooks.trouble) and the hook still exits 0.
Stdlib and fastjson only: it runs on the hooks' path.
"""

from __future__ import annotations

import os
import sys

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Callable


def run_payload_hook(hook: str, handle: Callable[[dict[str, object], str, str], None]) -> int:
    """Read the payload on stdin and call `handle(payload, agent_id, cwd)` for an agent's; exit code 0."""
    agent_id = None
    try:
        raw = sys.stdin.read()
        payload = fastjson.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            return 0
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
        from bus.settings.repo_paths import agent_from_path

        agent_id = os.environ.get("IB_AGENT_ID") or agent_from_path(str(cwd))
        if agent_id:
            handle(payload, agent_id, str(cwd))
    except (ValueError, SystemError):  # not a hook payload (SystemError: see worker.hooks.pre_tool_use)
        return 0
    except Exception as e:  # the agent's session must go on whatever happens here; but say it
        from worker.hooks.trouble import report

        report(hook, str(e) or type(e).__name__, agent_id, os.environ.get("IB_ROOT"))
    return 0
