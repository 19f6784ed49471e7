"""`ib task schedule ...`: tasks added by a cron expression (add, list, delete); the workers fire them."""

from __future__ import annotations

import json

import typer

from bus.tasks.task_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_PRIORITY
from worker.cli.context import Context

schedule_app = typer.Typer(
    help="Scheduled tasks: a cron expression (UTC) adds a task each time it fires.", no_args_is_help=True
)


@schedule_app.command()
def add(
    expression: str = typer.Argument(..., help="5-field cron in UTC, e.g. '0 9 * * mon-fri', or @daily"),
    title: str = typer.Argument(..., help="the title of the task each firing adds"),
    schedule_id: str = typer.Option(None, "--id", help="the schedule's id (default: sched-N)"),
    body: str = typer.Option(None, "--body", help="the task's body"),
    body_file: str = typer.Option(None, "--body-file", help="read the body from this file (`-`: stdin)"),
    priority: str = typer.Option(None, "--priority", help=f"0 to 10 (default {DEFAULT_PRIORITY})"),
    after: list[str] = typer.Option(None, "--after", help="ids each task waits for, comma-separated"),
    project: str = typer.Option(None, "--project", help="project (default: the repository's name)"),
    max_attempts: str = typer.Option(None, "--max-attempts", help=f"default {DEFAULT_MAX_ATTEMPTS}"),
    test_cmd: str = typer.Option(None, "--test-cmd", help="shell command `ib task done` runs first"),
) -> None:
    """Add a schedule; prints its id and next firing. A running worker adds the task when it is due.

    Example: ib task schedule add "0 3 * * *" "Update the dependencies" --priority 3
    """
    from bus.tasks.schedules import TaskTemplate
    from worker.cli import task_commands as tasks

    ctx = Context()
    template = TaskTemplate(
        title=title,
        project=tasks._project(ctx, project),
        body=tasks._body(body, body_file) or "",
        priority=DEFAULT_PRIORITY if priority is None else tasks._priority(priority),
        after=tuple(tasks._ids(after)),
        max_attempts=tasks._whole_number("max attempts", max_attempts, DEFAULT_MAX_ATTEMPTS),
        test_cmd=test_cmd,
    )
    schedule = ctx.runtime.schedules.add(expression, template, schedule_id)
    print(schedule.line())


@schedule_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="one JSON array")) -> None:
    """The schedules, soonest first."""
    found = Context().runtime.schedules.list()
    if as_json:
        print(json.dumps([s.as_dict() for s in found], indent=2, ensure_ascii=False))
        return
    for schedule in found:
        print(schedule.line())
    if not found:
        print('no schedules; add one with ib task schedule add "0 9 * * *" TITLE')


@schedule_app.command()
def delete(schedule_id: str = typer.Argument(..., help="schedule id (see `ib task schedule list`)")) -> None:
    """Delete a schedule; the tasks it already added stay."""
    Context().runtime.schedules.delete(schedule_id)
    print(f"deleted {schedule_id}")
