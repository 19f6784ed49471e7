"""The task scripts as text and their calling convention (KEYS / ARGV), one definition for every caller.

`bus.tasks.task_store.TaskStore` runs them through redis-py; the Stop hook runs the done script through the
light client (`bus.wire.resp`), so this module imports only `os`: no redis, no typing, nothing slow.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # keep `typing` off the hooks' path; the checker still reads the imports below
if TYPE_CHECKING:
    from bus.wire.keys import Keys

SCRIPTS = ("add", "claim", "done", "fail", "release", "note", "edit", "delete", "depend")
MARK = "\x01"  # where a template from Keys takes the id (see bus/lua/task_prelude.lua)
_LUA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lua")  # bus/lua
_texts: dict[str, str] = {}


def script_text(name: str) -> str:
    """The full text of one task script: the shared prelude, then `bus/lua/task_<name>.lua`."""
    if name not in SCRIPTS:
        raise ValueError(f"no task script {name!r}: one of {', '.join(SCRIPTS)}")
    text = _texts.get(name)
    if text is None:
        with open(os.path.join(_LUA, "task_prelude.lua"), encoding="utf-8") as prelude:
            head = prelude.read()
        with open(os.path.join(_LUA, f"task_{name}.lua"), encoding="utf-8") as body:
            text = _texts[name] = head + "\n" + body.read()
    return text


def fixed_keys(keys: Keys) -> list[str]:
    """KEYS[1..4] of every script: events stream, all tasks, id sequence, claims."""
    return [keys.events, keys.tasks, keys.task_seq, keys.task_claims]


def fixed_args(keys: Keys, events_maxlen: int) -> list[str | int]:
    """ARGV[1..7] of every script: the key templates, then the events stream's approximate MAXLEN."""
    return [
        keys.task(MARK),
        keys.task_deps(MARK),
        keys.task_dependents(MARK),
        keys.task_notes(MARK),
        keys.ready(MARK),
        keys.project_tasks(MARK),
        events_maxlen,
    ]


def task_keys(keys: Keys, task_id: str) -> list[str]:
    """KEYS[5..8] of the scripts that act on one task: its hash, deps, dependents and notes."""
    return [
        keys.task(task_id),
        keys.task_deps(task_id),
        keys.task_dependents(task_id),
        keys.task_notes(task_id),
    ]


def done_call(
    keys: Keys, events_maxlen: int, task_id: str, agent: str, summary: str
) -> tuple[str, list[str], list[str | int]]:
    """(script text, KEYS, ARGV) that finish `task_id` for `agent`: `EVAL text len(KEYS) *KEYS *ARGV`.

    The script refuses (`IB_CONFLICT ...`, before any write) unless `agent` holds the task; it returns
    the ids that became ready. No checks here: callers validate ids and the summary's size.
    """
    return (
        script_text("done"),
        fixed_keys(keys) + task_keys(keys, task_id),
        [*fixed_args(keys, events_maxlen), task_id, agent, summary],
    )


def fail_call(
    keys: Keys, events_maxlen: int, task_id: str, agent: str, reason: str
) -> tuple[str, list[str], list[str | int]]:
    """(script text, KEYS, ARGV) that fail `agent`'s attempt at `task_id`, as `done_call`; the script
    refuses (`IB_CONFLICT ...`) unless `agent` holds the task, so two callers fail it once."""
    return (
        script_text("fail"),
        fixed_keys(keys) + task_keys(keys, task_id),
        [*fixed_args(keys, events_maxlen), task_id, agent, reason],
    )
