"""`ib hook post-tool-use` (PostToolUse and UserPromptSubmit of the primary session): listener liveness.

When agents are active and no `ib listen` is alive, inject the seed's reminder into Claude's context.
Must never fail the session: bad stdin, Redis down, anything → exit 0 with nothing printed.
"""

from __future__ import annotations

import os
import sys

from bus import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence

WARNING = (
    "[ib] WARNING: Notification listener is not running. Restart it now:\n"
    'Bash(command: "ib listen", run_in_background: true)'
)


def reminder(payload: object, agents: int, listener_alive: bool) -> str | None:
    """The hook's JSON output, or None when there is nothing to say. Pure."""
    if agents <= 0 or listener_alive:
        return None
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    name = event if event in ("PostToolUse", "UserPromptSubmit") else "PostToolUse"
    return fastjson.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": WARNING}})


def _payload(text: str) -> object:
    try:
        return fastjson.loads(text) if text.strip() else {}
    except ValueError:
        return {}


def main(argv: Sequence[str]) -> int:
    try:
        payload = _payload(sys.stdin.read())
        from bus.hotconf import read_hotconf
        from bus.repo_paths import agent_from_path

        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        conf = read_hotconf(cwd=cwd)
        if conf.agent_id or agent_from_path(cwd) or not (conf.redis_url or conf.root):
            return 0  # agents have their own hooks; outside a repository without a URL there is no bus
        from bus.keys import Keys
        from bus.publish import open_bus

        keys = Keys(conf.namespace)
        with open_bus(conf, start=False) as conn:
            count, alive = conn.pipeline(
                [
                    ("SCARD", keys.agents),
                    ("EXISTS", keys.listener(conf.listener_name)),
                ]
            )
        out = reminder(payload, count if isinstance(count, int) else 0, alive == 1)
        if out:
            print(out)
    except Exception as e:  # never fail the session; Redis away is silent, a wrong setting is said
        from bus.errors import ConfigError

        if isinstance(e, ConfigError):
            from worker.hooks.trouble import report

            report("post-tool-use", str(e))
    return 0
