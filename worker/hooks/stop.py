"""A turn's end (`TurnEnd`, read by the agent's program from its own signal): complete or waiting, published
once per turn; the task finished, the manager told. `ib hook stop` is Claude Code's Stop hook (its payload
read by worker.programs.claude.hook, run by worker.hooks.claude_stop); Codex CLI's and Gemini CLI's
hooks end their turns here too.

Runs at the end of every turn of every agent, so it stays on the light client.
"""

from __future__ import annotations

import os
import time
import zlib

from bus.wire import fastjson
from bus.wire.agent_update import update_if_whole
from bus.wire.keys import Keys

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from bus.events.envelope import Envelope
    from bus.settings.hotconf import HotConf
    from bus.wire.resp import Connection
    from worker.programs.hook_outcome import TurnEnd, UsageRead

FIELDS = ("manager", "project", "task", "role", "session")
SUMMARY_CHARS = 500  # of the first line, when the hook finishes the agent's task


def event_message(decision: str, agent_id: str, manager: str, role: str) -> str:
    """The seed's notification texts. Pure."""
    if decision == "complete":
        if manager:
            return f"Agent {agent_id} completed (worker of {manager})"
        return (
            f"Manager {agent_id} completed its goal"
            if role == "manager"
            else f"Agent {agent_id} completed its goal"
        )
    if manager:
        return f"Agent {agent_id} is waiting for input"
    return f"Manager {agent_id} is waiting" if role == "manager" else f"Agent {agent_id} is waiting"


def manager_note(decision: str, agent_id: str) -> str:
    if decision == "complete":
        return f"[hook]: Your subtask {agent_id} just completed"
    return f"[hook]: Your subtask {agent_id} is now waiting for input"


def turn_key(found: TurnEnd) -> str:
    """Identifies one turn: the id a program that names its turns gives (Codex CLI's `turn_id`, the same
    in its Stop hook and its notify), else the session and how long its log was when the turn ended."""
    if found.turn:
        return f"turn:{found.turn}"
    size = -1
    if found.log:
        try:
            size = os.stat(found.log).st_size
        except OSError:
            size = -1
    tail = found.last_message[-64:]
    return f"{found.session}:{size}:{zlib.crc32(tail.encode('utf-8', 'replace')):08x}"


def end_turn(found: TurnEnd, agent_id: str, cwd: str) -> None:
    """complete or waiting, published once per turn: the agent's state, the event, its task finished when
    it completed, its manager told; through the spool when Redis is away."""
    from bus.errors import BusError, ConfigError
    from bus.events.publish import keep, open_bus
    from bus.settings.hotconf import read_hotconf

    conf = read_hotconf(cwd=cwd)
    try:
        conn = open_bus(conf)
    except ConfigError:
        raise  # said on stderr and in agent.log (worker.hooks.trouble)
    except BusError as e:  # Redis away: the event waits in the spool, with what the agent's folder knows
        record = _local_record(conf.root, agent_id)
        keep(conf, _event(agent_id, record, found, conf.prices), e)
        _tell_manager(None, conf, record.get("manager", ""), found.state, agent_id)
        return
    with conn:
        _publish_turn(conn, conf, agent_id, found)


def _publish_turn(conn: Connection, conf: HotConf, agent_id: str, found: TurnEnd) -> None:
    from bus.errors import BusError
    from bus.events.publish import keep, publish

    decision, keys, turn = found.state, Keys(conf.namespace), turn_key(found)
    record: dict[str, str] = {}
    event = None
    try:
        stored, previous = conn.pipeline(
            [
                ("HMGET", keys.agent(agent_id), *FIELDS),
                ("SET", keys.stop_turn(agent_id), turn, "GET", "EX", 86400),
            ]
        )
        if previous == turn.encode():
            return  # this turn was already published
        stored = stored if isinstance(stored, list) else []
        values = [v.decode() if isinstance(v, bytes) else "" for v in stored]
        record = dict(zip(FIELDS, values, strict=False))
        event = _event(agent_id, record, found, conf.prices)
        fields = {"state": decision, "state_at": f"{time.time():.3f}", "state_by": "hook"}
        if found.log:
            fields["transcript_path"] = found.log
        if any(values):  # else not our agent, or torn down (and the write is refused if it is by now)
            conn.call(*update_if_whole(keys.agent(agent_id), fields))
        from worker.hooks.prompt_tell import drop_prompt

        drop_prompt(conn, keys, agent_id)  # the turn ended: no dialog is open any more
        if decision == "complete" and record.get("task"):
            _finish_task(conn, conf, agent_id, record["task"], found.last_message)
    except BusError as e:  # Redis went away half way: the event still goes out, through the spool
        record = record or _local_record(conf.root, agent_id)
        keep(conf, event or _event(agent_id, record, found, conf.prices), e)
        _tell_manager(None, conf, record.get("manager", ""), decision, agent_id)
        return
    publish(conf, event, conn)
    _tell_manager(conn, conf, record.get("manager", ""), decision, agent_id)


def _event(agent_id: str, record: Mapping[str, str], found: TurnEnd, prices: str = "") -> Envelope:
    from bus.events.envelope import make_event

    decision, last = found.state, found.last_message
    data: dict[str, object] = {"last_message": last[-2000:]}
    if decision == "complete":
        if found.log:
            wait_for_last_words(found.log, last)
        usage = session_usage(found.log, prices, found.read_usage)
        if usage is not None:
            data["usage"] = usage
    return make_event(
        decision,
        event_message(decision, agent_id, record.get("manager", ""), record.get("role", "")),
        sender=agent_id,
        agent=agent_id,
        project=record.get("project") or None,
        task=record.get("task") or None,
        data=data,
    )


# bytes of transcript the hook reads for the event's total (bench/cost_bench.py: 17-60 ms a MB on a
# loaded machine); a longer session's complete event has no total (`ib cost` has it)
USAGE_READ_LIMIT = 8 << 20


# seconds the hook waits for the turn's last answer to reach the transcript: Claude Code may run the Stop
# hook a moment before it writes that entry (seen: 50-100 ms), and a total read then misses that answer
LAST_WORDS_WAIT = 2.0
_TAIL_BYTES = 256 << 10


def wait_for_last_words(path: str, last: str) -> bool:
    """Whether the transcript at `path` holds the end of `last` (the turn's last answer), read again for
    up to LAST_WORDS_WAIT seconds until it does; an empty answer or an unreadable file is not waited for."""
    words = last.strip()[-60:]
    if not words:
        return True
    wanted = fastjson.dumps(words)[1:-1].encode()  # as a JSON string inside the transcript's line
    deadline = time.monotonic() + LAST_WORDS_WAIT
    while True:
        try:
            with open(path, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - _TAIL_BYTES))
                if wanted in f.read():
                    return True
        except OSError:
            return False
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def session_usage(path: str, prices: str, read_usage: UsageRead) -> dict[str, object] | None:
    """The tokens and cost of the agent's session so far, from its log at `path` read as its program writes
    it (`read_usage`), as `bus.costs.usage`'s JSON; None when there is no log, or one too long to read
    within a hook's time."""
    if not path:
        return None
    try:
        if os.stat(path).st_size > USAGE_READ_LIMIT:
            return None
    except OSError:
        return None
    from bus.costs.prices import parse_prices
    from bus.costs.usage import spend, spend_data

    try:
        overrides = parse_prices(prices)
    except ValueError:
        overrides = {}  # the settings refuse it at start; a hook never fails the turn for it
    records, unreadable = read_usage(path)
    return {**spend_data(spend(records, overrides)), "unreadable_lines": unreadable}


def _local_record(root: str | None, agent_id: str) -> dict[str, str]:
    """The agent's facts from its `meta.json` (written at spawn), for when Redis cannot be asked."""
    if not root:
        return {}
    try:
        with open(os.path.join(root, ".ib", "agents", agent_id, "meta.json"), encoding="utf-8") as f:
            meta = fastjson.loads(f.read())
    except (OSError, ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
        return {}
    if not isinstance(meta, dict):
        return {}
    return {name: str(meta[name]) for name in FIELDS if isinstance(meta.get(name), str)}


def task_summary(last_message: str) -> str:
    """The summary of a task the hook finishes: the last message's first line (none when that line is
    the completion marker itself). Pure."""
    from worker.markers import COMPLETION_MARKER

    for line in last_message.splitlines():
        if line.strip():
            first = line.strip()
            return "" if first == COMPLETION_MARKER else first[:SUMMARY_CHARS]
    return ""


def _finish_task(conn: Connection, conf: HotConf, agent_id: str, task_id: str, last_message: str) -> None:
    """The agent completed without `ib task done`: finish its task for it while it still holds it. A task
    with a test command is left to `ib task done`, which runs the tests (too slow for a hook)."""
    from bus.tasks.task_lua import done_call
    from bus.wire.resp import ServerError

    keys = Keys(conf.namespace)
    found = conn.call("HMGET", keys.task(task_id), "status", "claimed_by", "test_cmd")
    status, holder, test_cmd = found if isinstance(found, list) and len(found) == 3 else (None, None, None)
    if status != b"claimed" or holder != agent_id.encode() or test_cmd:
        return
    script, script_keys, args = done_call(
        keys, conf.events_maxlen, task_id, agent_id, task_summary(last_message)
    )
    from bus.events.confirmed_call import confirmed_call

    wait = (conf.wait_replicas, conf.wait_ms)  # a `done` the failover lost would be done and merged again
    try:  # noqa: SIM105 - contextlib costs this hook 2.7 ms at import
        confirmed_call(
            conn, ("EVAL", script, len(script_keys), *script_keys, *args), wait, "the task change (done)"
        )
    except ServerError:
        pass  # finished or released in the meantime: the script refused and changed nothing


def _tell_manager(conn: Connection | None, conf: HotConf, manager: str, decision: str, agent_id: str) -> None:
    """The note for the agent's manager, through the worker that owns the manager (it may run on another
    machine): a command on that worker's stream, or kept for later when Redis is away (`conn` None).
    Notes kept earlier go out first, with or without a manager of this agent's."""
    from worker.hooks.manager_notes import tell

    tell(conn, conf, manager or None, manager_note(decision, agent_id), sender=agent_id)
