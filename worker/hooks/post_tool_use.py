"""`ib hook post-tool-use` (PostToolUse and UserPromptSubmit of the primary session): how events reach it.

Records the session's inbox (Claude Code >= 2.1.224; bus.inbox.session_inbox) so the worker pushes events into
it. When agents are active and neither a push nor a live `ib listen` reaches the session, injects the
seed's reminder into Claude's context (saying so when the session has no inbox). Must never fail the
session: bad stdin, Redis down, anything → exit 0 with nothing printed.
"""

from __future__ import annotations

import itertools
import os
import sys

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence

    from bus.wire.keys import Keys

WARNING = (
    "[ib] WARNING: Notification listener is not running. Restart it now:\n"
    'Bash(command: "ib listen", run_in_background: true)'
)
NO_INBOX = (
    "\n[ib] This session has no inbox (Claude Code older than 2.1.224, or CLAUDE_CODE_HARBOR_KITE=0), so "
    "ittybus cannot push events into it: `ib listen` is how it hears the agents."
)


# How long a listener the session has just started counts as running before its own heartbeat shows: its
# start-up (imports, Redis) takes well under a second on an idle machine, seconds on a loaded one.
STARTING_S = 30


def starts_listener(payload: object) -> bool:
    """True when the tool call this hook follows ran `ib listen` (in the background or not). Pure."""
    if not isinstance(payload, dict) or payload.get("tool_name") != "Bash":
        return False
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return False
    for separator in ";&|()\n":
        command = command.replace(separator, " ")
    words = command.split()
    return any(
        (word == "ib" or word.endswith("/ib")) and following == "listen"
        for word, following in itertools.pairwise(words)
    )


def reminder(
    payload: object, agents: int, listener_alive: bool, pushed: bool = False, inbox: bool = True
) -> str | None:
    """The hook's JSON output, or None when there is nothing to say: no agents, a listener alive, or a
    worker pushing into this session's inbox (`pushed`). Pure."""
    if agents <= 0 or listener_alive or pushed:
        return None
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    name = event if event in ("PostToolUse", "UserPromptSubmit") else "PostToolUse"
    text = WARNING if inbox else WARNING + NO_INBOX
    return fastjson.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})


def _record(keys: Keys, payload: object, root: str) -> list[tuple[str, ...]]:
    """The commands that record this session's inbox; none without an inbox or a session id."""
    from bus.inbox.session_inbox import inbox_of, record_commands

    inbox = inbox_of(os.environ)
    session_id = payload.get("session_id") if isinstance(payload, dict) else None
    if inbox is None or not isinstance(session_id, str) or not session_id:
        return []
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    mode = payload.get("permission_mode") if isinstance(payload, dict) else None
    return record_commands(
        keys,
        session_id,
        inbox,
        cwd if isinstance(cwd, str) else root,
        root,
        mode if isinstance(mode, str) else "",
    )


def _payload(text: str) -> object:
    try:
        return fastjson.loads(text) if text.strip() else {}
    except ValueError:
        return {}


def main(argv: Sequence[str]) -> int:
    try:
        payload = _payload(sys.stdin.read())
        from bus.settings.hotconf import read_hotconf
        from bus.settings.repo_paths import agent_from_path

        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        conf = read_hotconf(cwd=cwd)
        if conf.agent_id or agent_from_path(cwd) or not (conf.redis_url or conf.root):
            return 0  # agents have their own hooks; outside a repository without a URL there is no bus
        from bus.events.publish import open_bus
        from bus.inbox.session_inbox import inbox_of, this_host
        from bus.wire.keys import Keys

        keys = Keys(conf.namespace)
        starting = keys.listener_starting(conf.listener_name)
        root = os.path.realpath(conf.root) if conf.root else ""
        record = _record(keys, payload, root) if root else []
        with open_bus(conf, start=False) as conn:
            if starts_listener(payload):  # its heartbeat comes a moment later: no reminder meanwhile
                conn.pipeline([*record, ("SET", starting, "1", "EX", str(STARTING_S))])
                return 0
            *_, count, alive, pusher = conn.pipeline(
                [
                    *record,
                    ("SCARD", keys.agents),
                    ("EXISTS", keys.listener(conf.listener_name), starting),
                    ("EXISTS", keys.session_pusher(this_host(), root)),
                ]
            )
        out = reminder(
            payload,
            count if isinstance(count, int) else 0,
            isinstance(alive, int) and alive > 0,
            pushed=bool(record) and pusher == 1,
            inbox=inbox_of(os.environ) is not None,
        )
        if out:
            print(out)
    except Exception as e:  # never fail the session; Redis away is silent, a wrong setting is said
        from bus.errors import ConfigError

        if isinstance(e, ConfigError):
            from worker.hooks.trouble import report

            report("post-tool-use", str(e))
    return 0
