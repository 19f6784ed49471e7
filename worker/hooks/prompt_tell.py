"""The hook's side of telling a dialog once: record the dialog a hook tells in `prompt:<agent>` (so
`ib approve` / `ib deny` / an answer can find it and answer it once), or adopt the pane watcher's record
of it when the watcher saw it first.

Both may tell one dialog at the same instant: the record is set only if it is still the one read
(bus.inbox.prompt_record, the script both share), and the one that loses reads it again. A hook that runs
late, after the watcher told its dialog and that dialog was answered or closed, tells nothing: the watcher
remembers a dialog it saw close for `prompt_record.TOLD_LATE` seconds (`prompt-closed:<agent>`).
Runs on the light client, on the hooks' path.
"""

from __future__ import annotations

import os
import time

from bus.inbox import prompt_record
from bus.wire import fastjson
from bus.wire.keys import Keys
from worker.markers import FROM_PANE

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from bus.wire.resp import Connection

RECORDED, DRAWN, OVER = "recorded", "drawn", "over"
_READ = ("id", "tool", "kind", "question", "at")  # what `_drawn_first` compares


def texts(reply: object, count: int) -> list[str]:
    """The `count` strings of an HMGET's reply ("" for a field not set)."""
    values = [v.decode() if isinstance(v, bytes) else "" for v in (reply if isinstance(reply, list) else [])]
    return [*values, *[""] * count][:count]


def tell(
    conn: Connection, keys: Keys, agent_id: str, project: str, kind: str, data: dict[str, object]
) -> tuple[str, str]:
    """(the dialog's id, how it stands): RECORDED by this hook, which tells it; DRAWN: the pane watcher
    recorded it first and its event told it, this hook adds the tool and detail to its record; OVER: the
    watcher told it and it was answered or closed since, nothing to tell; ("", "") when the record would
    not settle."""
    for _ in range(prompt_record.TRIES):
        read = texts(conn.call("HMGET", keys.prompt(agent_id), *_READ), len(_READ))
        prompt_id = read[0]
        how = _drawn_first(conn, keys, agent_id, read, kind, data)
        if how == OVER:
            return prompt_id, OVER
        if how == DRAWN:
            detail = str(data.get("detail") or data.get("plan") or "")
            added = {"tool": str(data.get("tool") or kind), "detail": detail}
            if _set(conn, keys, agent_id, prompt_id, "add", added):
                return prompt_id, DRAWN
            continue
        new_id = _record(conn, keys, agent_id, project, kind, data, prompt_id)
        if new_id:
            return new_id, RECORDED
    return "", ""


def told_late(conn: Connection, keys: Keys, agent_id: str, kind: str, data: dict[str, object]) -> bool:
    """Whether the dialog a hook tells was told by the pane watcher and is over (answered or closed)."""
    read = texts(conn.call("HMGET", keys.prompt(agent_id), *_READ), len(_READ))
    return _drawn_first(conn, keys, agent_id, read, kind, data) == OVER


def _drawn_first(
    conn: Connection, keys: Keys, agent_id: str, read: list[str], kind: str, data: dict[str, object]
) -> str:
    """Claude Code may draw a dialog before its PermissionRequest hook has run: whether the record `read`
    (id, tool, kind, question, when) is this dialog as the pane watcher recorded and published it: DRAWN
    while it waits (adopted: the buttons people have keep answering it), OVER when it was answered moments
    ago or closed (this hook ran late); "" when this dialog is a new one."""
    prompt_id, tool, recorded_kind, question, at = read
    if not prompt_id:  # none open: perhaps the watcher saw this one close before this hook ran
        closed = texts(conn.call("HMGET", keys.prompt_closed(agent_id), "kind", "question"), 2)
        return OVER if _same(kind, data, closed[0], closed[1]) else ""
    if tool != FROM_PANE or not _same(kind, data, recorded_kind, question):
        return ""
    if conn.call("EXISTS", keys.prompt_answered(prompt_id)) != 1:
        return DRAWN
    try:  # answered: the same dialog when it was drawn moments ago, else the next one
        late = time.time() - float(at) < prompt_record.TOLD_LATE
    except ValueError:
        late = False
    return OVER if late else ""


def _same(kind: str, data: dict[str, object], recorded_kind: str, question: str) -> bool:
    """Whether a dialog the pane watcher recorded (`recorded_kind`, `question`) is the one a hook tells."""
    return recorded_kind == kind and (kind != "ask" or question == str(data.get("question") or ""))


def _set(conn: Connection, keys: Keys, agent_id: str, read_id: str, how: str, fields: dict[str, str]) -> bool:
    """Set `fields` in the agent's record if it is still `read_id` (bus.inbox.prompt_record)."""
    told = prompt_record.command(keys, agent_id, read_id, how, fields)
    return prompt_record.outcome(conn.call(*told))[0]


def drop_prompt(conn: Connection, keys: Keys, agent_id: str) -> None:
    """The agent's dialog is over: forget it, and the question it opened."""
    question = conn.call("HGET", keys.prompt(agent_id), "question_id")
    commands: list[tuple[str | bytes | int | float, ...]] = [("DEL", keys.prompt(agent_id))]
    if isinstance(question, bytes) and question:
        commands += [("DEL", keys.question(question.decode())), ("ZREM", keys.questions, question)]
    conn.pipeline(commands)


def _labels(options: object) -> list[str]:
    """The labels the stores keep (bus.inbox.questions, bus.inbox.prompts) of the event's options."""
    from bus.events.event_options import options_of

    return [label for _number, label in options_of(options) or []]


def _record(
    conn: Connection,
    keys: Keys,
    agent_id: str,
    project: str,
    kind: str,
    data: dict[str, object],
    replacing: str,
) -> str:
    """Store the open dialog (and, for AskUserQuestion, a question people can answer, its id added to
    `data`) if the agent's record is still `replacing`; the dialog's id, "" when another recorded first."""
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
    question_id = ""
    if kind == "ask":
        question_id = fields["question_id"] = "q-" + os.urandom(4).hex()
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
    if not _set(conn, keys, agent_id, replacing, "record", fields):
        if question_id:  # another recorded it first: its question is the one people answer
            conn.pipeline([("DEL", keys.question(question_id)), ("ZREM", keys.questions, question_id)])
        return ""
    if question_id:
        data["question_id"] = question_id
    return prompt_id
