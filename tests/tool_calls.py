"""An agent's tool call driven through the real PreToolUse hook entry point (`ib hook pre-tool-use`), as
Claude Code runs it: the payload on stdin, the agent's identity in the environment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import IbRunner


def pre_tool_use(ib: IbRunner, root: Path, agent: str, tool: str, **tool_input: object) -> str | None:
    """Run the hook for one call; the reason it refused the call, or None when it let it through."""
    payload = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(root)}
    env = {"IB_AGENT_ID": agent, "IB_ROOT": str(root), "IB_AGENT_ROLE": "worker"}
    done = ib.run("hook", "pre-tool-use", stdin=json.dumps(payload), env=env)
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return None
    said = json.loads(done.stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    return str(said["permissionDecisionReason"])
