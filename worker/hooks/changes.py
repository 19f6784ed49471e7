"""`ib hook changes` (an agent's PostToolUse on Write, Edit, MultiEdit, NotebookEdit and Bash): asks the
agent's worker to check its files against the other agents' (worker.conflicts), and hands the agent the
conflict notes earlier checks left for it, as context Claude reads with the tool's result.

One round trip to Redis: take the notes, add the request. The git work is the worker's; this never waits
for it. Never fails the session: bad stdin, Redis down, anything → exit 0 (the next edit asks again).
"""

from __future__ import annotations

import os
import sys

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


HOOK_EVENT = "PostToolUse"
CHANGING_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit", "Bash")
NOTES_READ = 20
CHECKS_MAXLEN = 1000


def tool_of(text: str) -> str | None:
    """The tool name of a PostToolUse payload, None when the text is not one."""
    try:
        payload = fastjson.loads(text) if text.strip() else None
    except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
        return None
    name = payload.get("tool_name") if isinstance(payload, dict) else None
    return name if isinstance(name, str) and name else None


def context(notes: Sequence[str]) -> str | None:
    """Claude Code's PostToolUse output carrying the notes, None when there are none. Pure."""
    if not notes:
        return None
    return fastjson.dumps(
        {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "additionalContext": "\n\n".join(notes)}}
    )


def commands(
    namespace: str, agent: str, worker: str, tool: str
) -> list[tuple[str | bytes | int | float, ...]]:
    """Take the agent's waiting notes; ask its worker for a check when the tool may have changed files."""
    from bus.wire.keys import Keys

    keys = Keys(namespace)
    out: list[tuple[str | bytes | int | float, ...]] = [("LPOP", keys.conflict_notes(agent), NOTES_READ)]
    if tool in CHANGING_TOOLS and worker:
        out.append(
            (
                "XADD",
                keys.conflict_checks(worker),
                "MAXLEN",
                "~",
                CHECKS_MAXLEN,
                "*",
                "agent",
                agent,
                "tool",
                tool,
            )
        )
    return out


def run(stdin_text: str, env: Mapping[str, str]) -> str | None:
    agent, worker = env.get("IB_AGENT_ID", ""), env.get("IB_WORKER_ID", "")
    tool = tool_of(stdin_text) if agent else None
    if not agent or tool is None:
        return None
    from bus.settings.hotconf import read_hotconf
    from worker.hooks.hold import connect

    conf = read_hotconf(env, cwd=env.get("IB_AGENT_WORKTREE") or os.getcwd())
    with connect(conf) as conn:
        replies = conn.pipeline(commands(conf.namespace, agent, worker, tool))
    taken = replies[0] if isinstance(replies[0], list) else []
    return context([n.decode("utf-8", "replace") for n in taken if isinstance(n, bytes)])


def main(argv: Sequence[str] = ()) -> int:
    try:
        out = run(sys.stdin.read(), os.environ)
        if out:
            print(out)
    except Exception:  # the agent goes on; Redis away means no check this time
        return 0
    return 0
