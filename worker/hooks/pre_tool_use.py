"""`ib hook pre-tool-use` (an agent's PreToolUse): path isolation and the deny list, before every tool call;
then the pause of a budget used up or of the runaway watchdog (worker.hooks.hold, one Redis round trip).

A denial is printed as Claude Code's `permissionDecision: deny` and logged to the agent's agent.log.
Runs on every tool call: stdlib only; bad stdin, a missing settings file, anything → exit 0 quietly.
"""

from __future__ import annotations

import os
import sys

from bus.wire import fastjson
from worker.permissions.policy import (
    MANDATORY_DENY,
    Decision,
    Permissions,
    decide,
    mandatory_allow,
    sandbox_writable,
)

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

HOOK_EVENT = "PreToolUse"
_ID_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_ID_REST = _ID_FIRST | frozenset(".-")


def denial(reason: str) -> str:
    """Claude Code's hook output that blocks the tool call and tells Claude why."""
    return fastjson.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": HOOK_EVENT,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    )


def read_payload(text: str) -> tuple[str, dict[str, object], str | None] | None:
    """(tool_name, tool_input, cwd) from the hook's stdin, or None when it is not a tool call."""
    try:
        payload = fastjson.loads(text) if text.strip() else None
    except (ValueError, SystemError):  # SystemError: see read_permissions
        return None
    if not isinstance(payload, dict):
        return None
    name, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
    if not isinstance(name, str) or not name:
        return None
    return name, tool_input if isinstance(tool_input, dict) else {}, cwd if isinstance(cwd, str) else None


def _agent_id_ok(agent_id: str) -> bool:
    """An agent id names one folder: ASCII letters, digits, `_`, and `.` / `-` after the first."""
    return bool(agent_id) and agent_id[0] in _ID_FIRST and all(c in _ID_REST for c in agent_id)


def agent_dir(env: Mapping[str, str]) -> str | None:
    """R/.ib/agents/<id> of the agent this process runs as, or None when it is not an agent."""
    agent_id, root = env.get("IB_AGENT_ID", ""), env.get("IB_ROOT", "")
    if not root or not _agent_id_ok(agent_id):
        return None
    return os.path.join(root, ".ib", "agents", agent_id)


def read_permissions(settings_path: str) -> Permissions:
    """The rules of the agent's generated settings.json; the mandatory ones when it is unreadable."""
    fallback = Permissions(mandatory_allow(), MANDATORY_DENY)
    from bus.errors import ConfigError
    from bus.settings.settings_file import read_text

    try:  # through the settings-file reader: a FIFO or a device in its place never blocks the agent
        settings = fastjson.loads(read_text(settings_path) or "")
        rules = settings.get("permissions", {})
        allow, deny = rules.get("allow", []), rules.get("deny", [])
    except (ConfigError, ValueError, AttributeError, SystemError):
        # SystemError: CPython's C scanner (bus.wire.fastjson) raises it for some malformed objects (`{nope`)
        # while json.decoder is not loaded; a broken file must still leave the mandatory rules in force.
        return fallback
    if not (isinstance(allow, list) and isinstance(deny, list)):
        return fallback
    strings = (rule for rule in deny if isinstance(rule, str))
    return Permissions(
        tuple(r for r in allow if isinstance(r, str)),
        tuple(dict.fromkeys([*MANDATORY_DENY, *strings])),
        sandbox_writes(settings.get("sandbox")),
    )


def sandbox_writes(sandbox: object) -> tuple[str, ...] | None:
    """Where the agent's sandbox (the `sandbox` section of its settings.json, which Claude Code obeys)
    lets Bash commands write besides the worktree; None when it is off or unreadable."""
    if not isinstance(sandbox, dict) or sandbox.get("enabled") is not True:
        return None
    filesystem = sandbox.get("filesystem")
    allowed = filesystem.get("allowWrite") if isinstance(filesystem, dict) else None
    places = [p for p in allowed if isinstance(p, str)] if isinstance(allowed, list) else []
    return sandbox_writable(places, os.getuid())


def log_line(reason: str) -> str:
    """The agent.log line of a denial: `[<ISO time>] [PreToolUse] <reason>`, always one line."""
    from datetime import datetime

    one_line = reason.replace("\r", "\\r").replace("\n", "\\n")
    return f"[{datetime.now().astimezone().isoformat(timespec='seconds')}] [{HOOK_EVENT}] {one_line}\n"


def check(stdin_text: str, env: Mapping[str, str]) -> str | None:
    """The hook's output for one tool call (None: say nothing); logs a denial to agent.log."""
    folder = agent_dir(env)
    call = read_payload(stdin_text) if folder else None
    if folder is None or call is None:
        return None
    tool_name, tool_input, _cwd = call
    root = env["IB_ROOT"]
    decision: Decision = decide(
        tool_name,
        tool_input,
        worktree=env.get("IB_AGENT_WORKTREE") or os.path.join(folder, "repo"),
        root=root,
        permissions=read_permissions(os.path.join(folder, "settings.json")),
        home=env.get("HOME") or os.path.expanduser("~"),
    )
    reason = decision.reason if decision.verdict == "deny" else None
    if reason is None:
        from worker.hooks.hold import pause_reason
        from worker.hooks.transcript_lines import call_input

        # a budget used up, the runaway watchdog (which tells calls apart by their arguments)
        reason = pause_reason(env, tool_name, call_input(stdin_text, tool_input))
    if reason is None:
        return None
    try:
        with open(os.path.join(folder, "agent.log"), "a", encoding="utf-8") as log:
            log.write(log_line(reason))
    except OSError:
        pass  # an unwritable log must not let the call through: the denial is still printed
    return denial(reason)


def main(argv: Sequence[str] = ()) -> int:
    """`ib hook pre-tool-use`: the payload on stdin, identity from IB_AGENT_ID / IB_ROOT."""
    try:
        out = check(sys.stdin.read(), os.environ)
        if out:
            print(out)
    except Exception:
        return 0
    return 0
