"""`ib hook session-start` (an agent's SessionStart hook): record the Claude session, its transcript and
its inbox (bus.inbox.session_inbox: other agents' messages go there), and remind the agent who it is. Never
fails the session."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from bus.wire import fastjson
from bus.wire.keys import Keys


def context_for(agent_id: str, role: str, root: str) -> str:
    """The reminder injected at the start of every (also resumed or compacted) session. Pure."""
    worktree = os.path.join(root, ".ib", "agents", agent_id, "repo")
    return (
        f"You are ittybus {role or 'manager'} agent {agent_id}. Work in {worktree}. "
        "End every reply with `I HAVE COMPLETED THE GOAL` on its own line when the goal is done, "
        "or `WAITING` on its own line when you need input."
    )


def _inbox_commands(keys: Keys, agent_id: str, cwd: str, root: str) -> list[tuple[str, ...]]:
    """The commands that record this session's inbox for the agent; none without one (and then an
    inbox of the agent's earlier session is forgotten: it is gone with that session)."""
    from bus.inbox.session_inbox import agent_record_commands, inbox_of

    inbox = inbox_of(os.environ)
    if inbox is None:
        return [("DEL", keys.agent_inbox(agent_id))]
    return agent_record_commands(keys, agent_id, inbox, cwd, os.path.realpath(root) if root else "")


def main(argv: Sequence[str]) -> int:
    try:
        raw = sys.stdin.read()
        payload = fastjson.loads(raw) if raw.strip() else {}
        agent_id = os.environ.get("IB_AGENT_ID")
        if not isinstance(payload, dict) or not agent_id:
            return 0
        from bus.events.publish import open_bus
        from bus.settings.hotconf import read_hotconf

        conf = read_hotconf(cwd=str(payload.get("cwd") or os.getcwd()))
        fields = []
        for ours, theirs in (("claude_session", "session_id"), ("transcript_path", "transcript_path")):
            if isinstance(payload.get(theirs), str) and payload[theirs]:
                fields += [ours, payload[theirs]]
        keys = Keys(conf.namespace)
        commands = [("HSET", keys.agent(agent_id), *fields)] if fields else []
        commands += _inbox_commands(keys, agent_id, str(payload.get("cwd") or ""), conf.root or "")
        if commands:
            with open_bus(conf) as conn:
                conn.pipeline(commands)
        out = {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": context_for(
                    agent_id, os.environ.get("IB_AGENT_ROLE", ""), conf.root or ""
                ),
            }
        }
        print(fastjson.dumps(out))
    except Exception as e:  # never break the agent's session start; a setting that is wrong is said
        from bus.errors import ConfigError

        if isinstance(e, ConfigError):
            from worker.hooks.trouble import report

            report("session-start", str(e), os.environ.get("IB_AGENT_ID"), os.environ.get("IB_ROOT"))
    return 0
