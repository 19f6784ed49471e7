"""What `ib task list / show / tree` print: tasks as table rows, one task with its context, the graph.

Pure: takes `Task`s, returns text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from bus.tasks.task_model import Task
from bus.tasks.touches import Hold
from worker.terminal_text import printable

MARKS = {"draft": "✎", "pending": "·", "ready": "○", "claimed": "●", "done": "✓", "failed": "✗"}
COLUMNS = ("id", "status", "pri", "tries", "claimed by", "after", "title")


def _line(text: str, width: int) -> str:
    first = printable(text.strip().splitlines()[0]) if text.strip() else ""
    return first if len(first) <= width else first[: width - 1] + "…"


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _status(task: Task, held: Mapping[str, Hold]) -> str:
    hold = held.get(task.id) if task.status == "ready" else None
    return f"{MARKS['pending']} {hold.status()}" if hold else f"{MARKS.get(task.status, '?')} {task.status}"


def row(task: Task, held: Mapping[str, Hold] | None = None) -> tuple[str, ...]:
    """One row of `ib task list`, in the order of COLUMNS; a held ready task says what it waits for."""
    return (
        task.id,
        _status(task, held or {}),
        str(task.priority),
        f"{task.attempt}/{task.max_attempts}",
        task.claimed_by or "-",
        ",".join(task.after) or "-",
        _line(task.title, 60),
    )


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell, nothing cut (ids stay whole in a pipe). Pure."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]
    ]


def _with_status(tasks: Sequence[Task]) -> str:
    return ", ".join(f"{t.id} ({t.status})" for t in tasks) or "-"


def show_lines(
    task: Task, deps: Sequence[Task], dependents: Sequence[Task], hold: Hold | None = None
) -> list[str]:
    """Everything about one task: its fields, what it waits for and what waits for it, body, context."""
    holder = f" by {task.claimed_by} since {_when(task.claimed_at)}" if task.claimed_by else ""
    missing = [d for d in task.after if d not in {t.id for t in deps}]
    lines = [
        f"{task.id}: {task.title}",
        f"  project:   {task.project}",
        f"  status:    {_status(task, {task.id: hold} if hold else {})}{holder}",
        f"  priority:  {task.priority}",
        f"  attempts:  {task.attempt}/{task.max_attempts}",
        f"  created:   {_when(task.created_at)}",
        f"  after:     {_with_status(deps)}" + (f" (gone: {', '.join(missing)})" if missing else ""),
        f"  before:    {_with_status(dependents)}",
        f"  test:      {task.test_cmd or '-'}",
        f"  touches:   {', '.join(task.touches) or '-'}",
    ]
    if hold is not None and task.status == "ready":
        lines.append(f"  held:      until {hold.running} is merged (both change {', '.join(hold.files)})")
    if task.status == "done":
        lines.append(f"  done:      {_when(task.done_at)}")
    if task.summary:
        lines.append(f"  summary:   {task.summary}")
    lines += ["", "body:", *(f"  {line}" for line in (task.body.strip() or "(empty)").splitlines())]
    lines += ["", f"context ({len(task.notes)} note{'s' if len(task.notes) != 1 else ''}):"]
    if not task.notes:
        lines.append("  (none)")
    for note in task.notes:
        source = "" if note.source_task == task.id else f" from {note.source_task}"
        text = note.text.strip().splitlines() or [""]
        lines.append(f"  [{note.kind}{source}, {_when(note.ts)}] {text[0]}")
        lines += [f"    {more}" for more in text[1:]]
    return [printable(line) for line in lines]


def tree_lines(tasks: Sequence[Task]) -> list[str]:
    """The dependency graph, each task under the tasks it waits for (oldest first). A task that waits for
    several shows in full under the first and as `↑ id` under the others; tasks whose dependencies are all
    outside `tasks` are roots."""
    ordered = sorted(tasks, key=lambda t: t.created_at)
    known = {t.id for t in ordered}
    below: dict[str, list[Task]] = {t.id: [] for t in ordered}
    roots = []
    for t in ordered:
        inside = [d for d in t.after if d in known]
        if not inside:
            roots.append(t)
        for dep in inside:
            below[dep].append(t)
    lines: list[str] = []
    shown: set[str] = set()

    def walk(task: Task, prefix: str, branch: str, child_prefix: str) -> None:
        if task.id in shown:
            lines.append(f"{prefix}{branch}↑ {task.id}")
            return
        shown.add(task.id)
        mark = MARKS.get(task.status, "?")
        holder = f" {task.claimed_by}" if task.claimed_by and task.status == "claimed" else ""
        title = _line(task.title, 50)
        lines.append(f"{prefix}{branch}{mark} {task.id} [{task.status}{holder}] p{task.priority} {title}")
        kids = below[task.id]
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            walk(kid, child_prefix, "└─ " if last else "├─ ", child_prefix + ("   " if last else "│  "))

    for root in roots:
        walk(root, "", "", "")
    return lines
