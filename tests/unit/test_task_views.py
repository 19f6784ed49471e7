"""What `ib task list / show / tree` print, from plain tasks."""

from __future__ import annotations

from bus.tasks.task_model import Note, Task
from worker.tasks.views import row, show_lines, table_lines, tree_lines

T = 1_700_000_000_000


def task(
    task_id: str, status: str = "ready", after: tuple[str, ...] = (), created: int = 0, **more: object
) -> Task:
    fields: dict[str, object] = {
        "id": task_id,
        "project": "backend",
        "title": f"Title of {task_id}",
        "body": "",
        "priority": 5,
        "status": status,
        "attempt": 0,
        "max_attempts": 3,
        "created_at": created,
        "after": after,
    }
    fields.update(more)
    return Task(**fields)


def test_tree_puts_each_task_under_what_it_waits_for() -> None:
    tasks = [
        task("tests", "pending", ("auth", "api"), created=3),
        task("auth", "done", created=1),
        task("api", "claimed", ("auth",), created=2, claimed_by="agent-1"),
        task("docs", "failed", ("elsewhere",), created=4),
    ]
    assert tree_lines(tasks) == [
        "✓ auth [done] p5 Title of auth",
        "├─ ● api [claimed agent-1] p5 Title of api",
        "│  └─ · tests [pending] p5 Title of tests",
        "└─ ↑ tests",
        "✗ docs [failed] p5 Title of docs",
    ]


def test_tree_of_nothing_is_empty() -> None:
    assert tree_lines([]) == []


def test_table_pads_columns_and_cuts_nothing() -> None:
    lines = table_lines(("id", "status"), [("a-very-long-task-id", "ready"), ("b", "done")])
    assert lines == ["id                   status", "a-very-long-task-id  ready", "b                    done"]


def test_row_shows_attempts_holder_and_deps() -> None:
    shown = row(task("api", "claimed", ("auth", "db"), attempt=2, claimed_by="agent-1"))
    assert shown == ("api", "● claimed", "5", "2/3", "agent-1", "auth,db", "Title of api")


def test_show_lists_deps_dependents_body_and_context() -> None:
    notes = (
        Note(kind="result", text="schema is in db/schema.sql", ts=T, source_task="db"),
        Note(kind="observation", text="slow\nvery", ts=T, source_task="api"),
    )
    lines = show_lines(
        task("api", "ready", ("auth", "db"), body="Build it.\nWith tests.", notes=notes, test_cmd="pytest"),
        [task("db", "done")],
        [task("tests", "pending")],
    )
    text = "\n".join(lines)
    assert lines[0] == "api: Title of api"
    assert "  after:     db (done) (gone: auth)" in lines
    assert "  before:    tests (pending)" in lines
    assert "  test:      pytest" in lines
    assert "body:\n  Build it.\n  With tests." in text
    assert "context (2 notes):" in text
    assert "[result from db, 2023-11-14 22:13:20 UTC] schema is in db/schema.sql" in text
    assert "[observation, 2023-11-14 22:13:20 UTC] slow\n    very" in text
