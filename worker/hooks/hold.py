"""The PreToolUse hook's one round trip to Redis: refuse the call when the agent is paused (a budget used
up, the watchdog), else record it on its worker's tool-call stream for the runaway watchdog.

One script, so a refused call is never recorded (the watchdog would count the retries of a paused agent
as a loop). Redis away or slow: the call goes through, unrecorded (a hook never blocks an agent for the bus).
"""

from __future__ import annotations

import time
import zlib

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from bus.settings.hotconf import HotConf
    from bus.wire.resp import Connection

CALLS_MAXLEN = 10_000
SUMMARY_WIDTH = 160

# KEYS[1] the agent's hold, KEYS[2] its worker's tool-call stream; ARGV: maxlen, then the entry's fields.
# Answers the hold's reason, or nothing when the call was recorded.
SCRIPT = """
local reason = redis.call('HGET', KEYS[1], 'reason')
if reason then return reason end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, 2))
return false
"""


def digest(tool: str, tool_input: Mapping[str, object]) -> str:
    """Names a call by its tool and arguments: the same call twice has the same digest."""
    try:
        text = fastjson.dumps([tool, tool_input])
    except (TypeError, ValueError):
        text = f"{tool} {tool_input!r}"
    return f"{zlib.crc32(text.encode('utf-8', 'replace')):08x}{len(text):x}"


def summary(tool: str, tool_input: Mapping[str, object]) -> str:
    """`Bash: pytest -q`, `Read: src/app.py`: one line a person reads in the `runaway` event."""
    main = next(
        (
            tool_input[k]
            for k in ("command", "file_path", "path", "pattern", "url", "prompt", "plan")
            if k in tool_input
        ),
        None,
    )
    said = main if isinstance(main, str) else (fastjson.dumps(tool_input) if tool_input else "")
    line = f"{tool}: {said}" if said else tool
    one_line = " ".join(line.split())
    return one_line if len(one_line) <= SUMMARY_WIDTH else one_line[: SUMMARY_WIDTH - 1] + "…"


def arguments(
    namespace: str, agent: str, worker: str, tool: str, tool_input: Mapping[str, object]
) -> tuple[str | int, ...]:
    """The EVAL command's keys and arguments for one call (after the script and the key count)."""
    from bus.wire.keys import Keys

    keys = Keys(namespace)
    said, at = summary(tool, tool_input), f"{time.time():.3f}"
    fields = ("agent", agent, "tool", tool, "digest", digest(tool, tool_input), "summary", said, "at", at)
    return (keys.hold(agent), keys.tool_calls(worker), CALLS_MAXLEN, *fields)


def held(
    conn: Connection, namespace: str, agent: str, worker: str, tool: str, tool_input: Mapping[str, object]
) -> str | None:
    """The reason the agent is paused, or None (the call was recorded and may go on)."""
    reply = conn.call("EVAL", SCRIPT, 2, *arguments(namespace, agent, worker, tool, tool_input))
    return reply.decode("utf-8", "replace") if isinstance(reply, bytes) else None


def connect(conf: HotConf) -> Connection:
    """The light client on the bus for an agent's hooks; with IB_REDIS_URL set, straight there (the embedded
    bus's lookup costs a hook ~25 ms of imports; the spool is the event hooks' to send, not these)."""
    if not conf.redis_url:
        from bus.events.publish import open_bus

        return open_bus(conf, start=False)
    from bus.wire.address import Address
    from bus.wire.resp import Connection

    return Connection(Address.from_url(conf.redis_url), conf.connect_timeout)


def pause_reason(env: Mapping[str, str], tool: str, tool_input: Mapping[str, object]) -> str | None:
    """Why this agent's call must not run now (it is paused), or None; Redis away → None."""
    agent, worker = env.get("IB_AGENT_ID", ""), env.get("IB_WORKER_ID", "")
    if not agent or not worker:
        return None
    import os

    from bus.settings.hotconf import read_hotconf

    try:
        conf = read_hotconf(env, cwd=env.get("IB_AGENT_WORKTREE") or os.getcwd())
        with connect(conf) as conn:
            return held(conn, conf.namespace, agent, worker, tool, tool_input)
    except Exception:  # the bus away, a bad setting: never block the agent for it
        return None
