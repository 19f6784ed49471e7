"""What a program's hook payload decided (an `Outcome`, read by the program: worker.programs.hook_outcome),
stored and published: the agent's state as its program itself reports it, and the event a person needs.
`ib hook event` is Claude Code's (Notification, PermissionRequest, StopFailure, SessionEnd, PreCompact and
UserPromptSubmit hooks; read by worker.programs.claude.hook); Codex CLI's and Gemini CLI's hooks act here
too.

A state set here is marked `state_by=hook`: the pane watcher leaves it alone unless it sees stronger
evidence (worker/service/pane_watch.py). A dialog that waits for a person (permission, plan,
AskUserQuestion) is recorded in `prompt:<agent>` so `ib approve` / `ib deny` / an answer can find it and
answer it once.
Runs on the light client.
"""

from __future__ import annotations

import time

from bus.wire import fastjson
from bus.wire.agent_update import update_if_whole
from bus.wire.keys import Keys
from worker.hooks.prompt_tell import texts

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from bus.events.envelope import Envelope
    from bus.settings.hotconf import HotConf
    from bus.wire.resp import Connection
    from worker.programs.hook_outcome import Outcome


def handle_outcome(found: Outcome, agent_id: str, cwd: str) -> None:
    """Store and publish what a program's hook payload decided (read by the program's own reader)."""
    from bus.errors import BusError, ConfigError
    from bus.events.publish import keep, open_bus
    from bus.settings.hotconf import read_hotconf

    conf = read_hotconf(cwd=cwd)
    try:
        with open_bus(conf) as conn:
            apply(conn, conf, agent_id, found)
    except ConfigError:
        raise  # said on stderr and in agent.log (worker.hooks.trouble)
    except BusError as e:  # Redis away: what a person must see waits in the spool (states are the pane's)
        if found.event_type not in ("state", ""):
            keep(conf, _event(found.event_type, found.message, agent_id, "", "", found.data), e)


def apply(conn: Connection, conf: HotConf, agent_id: str, found: Outcome) -> None:
    from worker.programs.hook_outcome import says_nothing_new

    keys = Keys(conf.namespace)
    fields = ("state", "project", "task", "ending", "account")
    values = texts(conn.call("HMGET", keys.agent(agent_id), *fields), len(fields))
    if not any(values):
        return  # not one of our agents (or already torn down)
    previous, project, task, ending, account = values
    if says_nothing_new(found, previous) or _late(conn, keys, agent_id, found):
        return
    if found.state:
        written = {"state": found.state, "state_at": f"{time.time():.3f}", "state_by": "hook"}
        conn.call(*update_if_whole(keys.agent(agent_id), written))  # not once the agent is removed
    if found.state in ("running", "stopped"):
        from worker.hooks.prompt_tell import drop_prompt

        drop_prompt(conn, keys, agent_id)
    data = dict(found.data)
    if found.prompt == "plan" and not data.get("plan"):
        data["plan"] = _plan_when_written(found.log)
    event_type, message = found.event_type, found.message
    if found.prompt:
        event_type = _told_as(conn, keys, agent_id, project, found, data)
        if not event_type:
            return
    if found.state == "limited":
        from worker.hooks import limit_park

        data = limit_park.park(conn, keys, agent_id, account, data)
        message = limit_park.message(agent_id, data)
    if event_type == "stopped" and ending:  # ittybus's own teardown (ib kill, a merge), not a crash
        message, data = f"{agent_id} stopped: {ending}", {**data, "ending": ending}
    if event_type == "state":
        if previous == found.state:
            return
        data = {**data, "from_state": previous, "to_state": found.state}
        message = f"{agent_id}: {previous} → {found.state}"
    from bus.events.publish import publish

    publish(conf, _event(event_type, message, agent_id, project, task, data), conn)
    if found.state == "stopped":  # as the pane watcher does when it sees the session gone first
        from worker.hooks.claims import fail_claims

        fail_claims(conn, conf, agent_id)


def _event(
    event_type: str, message: str, agent_id: str, project: str, task: str, data: dict[str, object]
) -> Envelope:
    from bus.events.envelope import make_event

    return make_event(
        event_type,
        message,
        sender=agent_id,
        agent=agent_id,
        project=project or None,
        task=task or None,
        data=data,
    )


TRANSCRIPT_TAIL = 262144  # bytes of the transcript read back for the plan ExitPlanMode proposes


def plan_from_transcript(path: object) -> str:
    """The plan of the ExitPlanMode call now waiting for a person, from the agent's transcript (Claude
    Code 2.1.332 leaves it out of the PermissionRequest payload, and names no tool_use_id there); "" when
    the transcript holds no such call yet. A call that already has its tool_result is an earlier plan
    (kept planning), never the one the dialog shows."""
    from worker.hooks.transcript_lines import tail

    lines = tail(path, TRANSCRIPT_TAIL)
    answered: set[str] = set()
    for line in reversed(lines):
        if '"ExitPlanMode"' not in line and '"tool_result"' not in line:
            continue
        for block in _content_blocks(line):
            if block.get("type") == "tool_result":
                answered.add(str(block.get("tool_use_id")))
            elif block.get("name") == "ExitPlanMode" and str(block.get("id")) not in answered:
                given = block.get("input")
                plan = given.get("plan") if isinstance(given, dict) else None
                if isinstance(plan, str):
                    return plan[:2000]
    return ""


def _content_blocks(line: str) -> list[dict[str, object]]:
    """The content blocks of one transcript line (a message's tool uses and tool results)."""
    try:
        entry = fastjson.loads(line)
    except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
        return []
    message = entry.get("message") if isinstance(entry, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _plan_when_written(path: object) -> str:
    """The plan from the transcript; Claude Code may run the hook before it has written the ExitPlanMode
    call there, so it is read again for up to PLAN_WAIT seconds."""
    import time

    deadline = time.monotonic() + PLAN_WAIT
    plan = plan_from_transcript(path)
    while not plan and time.monotonic() < deadline:
        time.sleep(0.05)
        plan = plan_from_transcript(path)
    return plan


PLAN_WAIT = 5.0


def _late(conn: Connection, keys: Keys, agent_id: str, found: Outcome) -> bool:
    """Whether `found` tells a dialog the pane watcher told that is over already (this hook ran after a
    person answered it): nothing to tell, and no `permission` state to set."""
    from worker.hooks.prompt_tell import told_late

    return bool(found.prompt) and told_late(conn, keys, agent_id, found.prompt, found.data)


def _told_as(
    conn: Connection, keys: Keys, agent_id: str, project: str, found: Outcome, data: dict[str, object]
) -> str:
    """The event that tells the dialog `found` is about, its id put in `data`: the hook's own when it
    recorded the dialog first; `dialog_detail` (the tool and its command) when the pane watcher's event
    told it; "" when nothing is left to tell (an AskUserQuestion the watcher told with the options as
    drawn and the question to answer, a dialog the watcher told that is over already, or a record that
    would not settle)."""
    from worker.hooks.prompt_tell import tell

    prompt_id, how = tell(conn, keys, agent_id, project, found.prompt, data)
    if how not in ("recorded", "drawn") or (how == "drawn" and found.prompt == "ask"):
        return ""
    data["prompt_id"] = prompt_id
    return found.event_type if how == "recorded" else "dialog_detail"
