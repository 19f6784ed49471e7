"""`ib hook event` (an agent's Notification, PermissionRequest, StopFailure, SessionEnd, PreCompact and
UserPromptSubmit hooks): the agent's state as Claude Code itself reports it, and the event a person needs.

A state set here is marked `state_by=hook`: the pane watcher leaves it alone unless it sees stronger
evidence (worker/service/pane_watch.py). A dialog that waits for a person (permission, plan,
AskUserQuestion) is recorded in `prompt:<agent>` so `ib approve` / `ib deny` / an answer can find it and
answer it once.
Runs on the light client and never fails the session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

import os
import time

from bus import fastjson
from bus.keys import Keys
from worker.hooks.payload_hook import run_payload_hook

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence

    from bus.envelope import Envelope
    from bus.hotconf import HotConf
    from bus.resp import Connection
    from worker.hooks.payloads import Outcome

PROMPT_TTL = 86400


def handle(payload: dict[str, object], agent_id: str, cwd: str) -> None:
    from worker.hooks.payloads import outcome

    found = outcome(payload, agent_id)
    if found is not None:
        handle_outcome(payload, agent_id, cwd, found)


def handle_outcome(payload: dict[str, object], agent_id: str, cwd: str, found: Outcome) -> None:
    """Publish what a hook payload decided (Claude Code's, or another program's read by its own reader)."""
    from bus.errors import BusError, ConfigError
    from bus.hotconf import read_hotconf
    from bus.publish import keep, open_bus

    conf = read_hotconf(cwd=cwd)
    try:
        with open_bus(conf) as conn:
            apply(conn, conf, agent_id, payload, found)
    except ConfigError:
        raise  # said on stderr and in agent.log by main()
    except BusError as e:  # Redis away: what a person must see waits in the spool (states are the pane's)
        if found.event_type not in ("state", ""):
            keep(conf, _event(found.event_type, found.message, agent_id, "", "", found.data), e)


def apply(conn: Connection, conf: HotConf, agent_id: str, payload: dict[str, object], found: Outcome) -> None:
    from worker.hooks.payloads import says_nothing_new

    keys = Keys(conf.namespace)
    record = conn.call("HMGET", keys.agent(agent_id), "state", "project", "task", "ending", "account")
    replies = record if isinstance(record, list) else []
    values = [v.decode() if isinstance(v, bytes) else "" for v in replies]
    if not any(values):
        return  # not one of our agents (or already torn down)
    previous, project, task, ending, account = [*values, "", "", "", "", ""][:5]
    if says_nothing_new(payload.get("hook_event_name"), found.state, previous):
        return
    if found.state:
        conn.call(
            "HSET", keys.agent(agent_id), "state", found.state, "state_at", f"{time.time():.3f}",
            "state_by", "hook",
        )  # fmt: skip
    if found.state in ("running", "stopped"):
        drop_prompt(conn, keys, agent_id)
    data = dict(found.data)
    if found.prompt == "plan" and not data.get("plan"):
        data["plan"] = _plan_when_written(payload.get("transcript_path"))
    if found.prompt:
        drawn = _drawn_first(conn, keys, agent_id, found.prompt, data)
        if drawn and found.prompt == "ask":
            return  # the watcher's event told it, with the options as drawn and the question to answer
        data["prompt_id"] = drawn or _record_prompt(conn, keys, agent_id, project, found.prompt, data)
    event_type, message = found.event_type, found.message
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
    from bus.publish import publish

    publish(conf, _event(event_type, message, agent_id, project, task, data), conn)
    if found.state == "stopped":  # as the pane watcher does when it sees the session gone first
        from worker.hooks.claims import fail_claims

        fail_claims(conn, conf, agent_id)


def _event(
    event_type: str, message: str, agent_id: str, project: str, task: str, data: dict[str, object]
) -> Envelope:
    from bus.envelope import make_event

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
    if not isinstance(path, str) or not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - TRANSCRIPT_TAIL))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
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


def _drawn_first(conn: Connection, keys: Keys, agent_id: str, kind: str, data: dict[str, object]) -> str:
    """Claude Code may draw a dialog before its PermissionRequest hook has run: when the pane watcher
    already recorded (and published) this dialog, its record is adopted (the buttons people have keep
    answering it) and given the tool and detail; its id, or "" when the dialog is new."""
    from worker.markers import FROM_PANE

    found = conn.call("HMGET", keys.prompt(agent_id), "id", "tool", "kind", "question")
    values = [v.decode() if isinstance(v, bytes) else "" for v in (found if isinstance(found, list) else [])]
    prompt_id, tool, recorded_kind, question = [*values, "", "", "", ""][:4]
    same = kind != "ask" or question == str(data.get("question") or "")
    if not prompt_id or tool != FROM_PANE or recorded_kind != kind or not same:
        return ""
    if conn.call("EXISTS", keys.prompt_answered(prompt_id)) == 1:
        return ""  # that appearance was answered: this is the next one
    detail = str(data.get("detail") or data.get("plan") or "")
    conn.call("HSET", keys.prompt(agent_id), "tool", str(data.get("tool") or kind), "detail", detail)
    return prompt_id


def drop_prompt(conn: Connection, keys: Keys, agent_id: str) -> None:
    """The agent's dialog is over: forget it, and the question it opened."""
    question = conn.call("HGET", keys.prompt(agent_id), "question_id")
    commands: list[tuple[str | bytes | int | float, ...]] = [("DEL", keys.prompt(agent_id))]
    if isinstance(question, bytes) and question:
        commands += [("DEL", keys.question(question.decode())), ("ZREM", keys.questions, question)]
    conn.pipeline(commands)


def _labels(options: object) -> list[str]:
    """The labels the stores keep (bus.questions, bus.prompts) of the event's options."""
    from bus.event_options import options_of

    return [label for _number, label in options_of(options) or []]


def _record_prompt(
    conn: Connection, keys: Keys, agent_id: str, project: str, kind: str, data: dict[str, object]
) -> str:
    """Store the open dialog (and, for AskUserQuestion, a question people can answer, its id added to
    `data`); the dialog's id."""
    prompt_id = "p-" + os.urandom(4).hex()
    fields = {
        "id": prompt_id,
        "kind": kind,
        "tool": str(data.get("tool") or ""),
        "detail": str(data.get("detail") or data.get("plan") or ""),
        "question": str(data.get("question") or ""),
        "options": fastjson.dumps(_labels(data.get("options"))),
        "at": f"{time.time():.3f}",
    }
    if kind == "ask":
        question_id = "q-" + os.urandom(4).hex()
        fields["question_id"] = question_id
        data["question_id"] = question_id
        asked = fields["at"]
        conn.pipeline(
            [
                (
                    "HSET", keys.question(question_id), "id", question_id, "agent", agent_id,
                    "text", fields["question"], "asked_at", asked, "project", project,
                    "options", fields["options"], "dialog", prompt_id,
                ),
                ("ZADD", keys.questions, asked, question_id),
            ]
        )  # fmt: skip
    flat = [x for kv in fields.items() for x in kv]
    drop_prompt(conn, keys, agent_id)
    conn.pipeline(
        [
            ("HSET", keys.prompt(agent_id), *flat),
            ("EXPIRE", keys.prompt(agent_id), PROMPT_TTL),
        ]
    )
    return prompt_id


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("event", handle)
