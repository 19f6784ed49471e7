"""`ib task ...`: the task queue from the command line: add, inspect, claim (or wait for) and finish tasks.

The project defaults to the repository folder's name (as agents' projects do); the acting agent is
`--as`, else the agent whose worktree the command runs in, else IB_AGENT_ID, else "user".
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bus.errors import InvalidInput
from bus.settings.repo_paths import agent_from_path
from bus.tasks.task_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_PRIORITY
from bus.tasks.touches import Hold
from bus.wire.ids import folder_project, validate_id
from worker.cli import values
from worker.cli.context import Context

if TYPE_CHECKING:
    from bus.tasks.task_model import Task
    from bus.tasks.task_store import TaskStore
from worker.errors import WorkerError

# What few commands need is imported in them (the agent programs, the agents' views, running a task's
# tests): each `ib` process loads what its one command uses.

NOTHING_READY = 3  # `claim`: no ready task (at once, or within --timeout with --wait)
MAX_FILE_BYTES = 64 * 1024 * 1024  # what --body-file reads at most; the store's own limit is far lower

task_app = typer.Typer(
    help="The task queue: tasks with priorities and dependencies that agents claim and finish.",
    no_args_is_help=True,
)


class FailedTests(WorkerError):
    """`ib task done`: the task's test command failed, so the task was failed instead of done."""


# what every command needs


def _store(ctx: Context) -> TaskStore:
    return ctx.runtime.tasks


def _held(ctx: Context, projects: set[str]) -> dict[str, Hold]:
    """The held ready tasks of these projects (none unless IB_OVERLAP is hold)."""
    claims = ctx.runtime.claims
    if claims.mode != "hold":
        return {}
    return {task: hold for project in sorted(projects) for task, hold in claims.holds(project).items()}


def _held_json(hold: Hold | None) -> dict[str, object] | None:
    return None if hold is None else {"overlaps": hold.running, "files": list(hold.files)}


def _touches(given: list[str] | None) -> list[str]:
    """--touches values; each may also be a comma-separated list. Given but empty is refused."""
    if given is None:
        return []
    paths = [p.strip() for value in given for p in value.split(",")]
    if not any(paths):
        raise InvalidInput("--touches is empty: name the files or directories the task will change")
    return [p for p in paths if p]


def _project(ctx: Context, given: str | None) -> str:
    if given is not None:
        return validate_id("project", given)
    return folder_project(ctx.runtime.root.name)


def _acting(ctx: Context, as_agent: str | None) -> str:
    who = as_agent or agent_from_path(ctx.cwd) or ctx.settings.agent_id or "user"
    return validate_id("agent", who)


def _whole_number(what: str, text: str | None, default: int) -> int:
    """An int from what was typed (the store checks its range)."""
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidInput(f"bad {what} {text!r}: use a whole number") from None


def _priority(text: str) -> int:
    """0-10 from what was typed; "high", 11 and -1 get the store's one message."""
    from bus.tasks.task_model import check_priority

    try:
        value: object = int(text.strip())
    except ValueError:
        value = text
    return check_priority(value)


def _ids(values: list[str] | None) -> list[str]:
    """`--after a,b --after c` → [a, b, c]."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _read_text(option: str, path: str) -> str:
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise InvalidInput(f"cannot read {option} {path}: {e.strerror or e}") from e
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"{option} {path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidInput(f"cannot read {option} {path}: it is not UTF-8 text ({e.reason})") from e


def _body(body: str | None, body_file: str | None) -> str | None:
    if body is not None and body_file is not None:
        raise InvalidInput("give the body with --body or with --body-file, not both")
    return _read_text("--body-file", body_file) if body_file is not None else body


def _print_json(value: object) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _error(message: str) -> None:
    print(f"ib task: {message}", file=sys.stderr)


# commands


@task_app.command()
def add(
    title: str = typer.Argument(..., help="one line saying what to do"),
    task_id: str = typer.Option(None, "--id", help="the task's id (default: a slug of the title)"),
    body: str = typer.Option(None, "--body", help="the details: what, why, where, how to check"),
    body_file: str = typer.Option(None, "--body-file", help="read the body from this file (`-`: stdin)"),
    priority: str = typer.Option(None, "--priority", help=f"0 (lowest) to 10 (default {DEFAULT_PRIORITY})"),
    after: list[str] = typer.Option(None, "--after", help="ids it waits for, comma-separated"),
    project: str = typer.Option(None, "--project", help="project (default: the repository's name)"),
    max_attempts: str = typer.Option(
        None, "--max-attempts", help=f"claims before it fails for good (default {DEFAULT_MAX_ATTEMPTS})"
    ),
    test_cmd: str = typer.Option(None, "--test-cmd", help="shell command `ib task done` runs first"),
    draft: bool = typer.Option(False, "--draft", help="add it as a draft: nobody claims it until published"),
    touches: list[str] = typer.Option(
        None, "--touches", help="files or directories it will change, relative to the repository (repeat)"
    ),
    cli: str = typer.Option(
        None,
        "--cli",
        help="the agent program an agent for it runs: claude, codex or gemini (default: IB_DEFAULT_CLI)",
    ),
    budget: str = typer.Option(None, "--budget", help="what the task may spend: 2.50$ or 400k (tokens)"),
) -> None:
    """Add a task; prints its id. Ready at once unless it waits for unfinished tasks (or is a draft).

    With --touches, a ready task whose files overlap a task in flight waits for that task's merge
    (IB_OVERLAP=hold, the default; warn or ignore).

    Example: ib task add "Design the auth API" --priority 8 --touches auth/ --test-cmd "pytest -q tests/auth"
    """
    task = add_task(
        Context(),
        title,
        task_id=task_id,
        body=_body(body, body_file),
        priority=priority,
        after=after,
        project=project,
        max_attempts=max_attempts,
        test_cmd=test_cmd,
        draft=draft,
        touches=touches,
        cli=cli,
        budget=budget,
    )
    print(task.id)


def add_task(
    ctx: Context,
    title: str,
    *,
    task_id: str | None = None,
    body: str | None = None,
    priority: str | None = None,
    after: list[str] | None = None,
    project: str | None = None,
    max_attempts: str | None = None,
    test_cmd: str | None = None,
    draft: bool = False,
    touches: list[str] | None = None,
    cli: str | None = None,
    budget: str | None = None,
) -> Task:
    """`ib task add` (and the MCP tool `task_add`): the values as typed, checked, then the task stored."""
    from bus.stores import budget_store
    from worker.cli.budget_commands import budget_amount
    from worker.programs.registry import program

    limit = budget_amount(budget, "--budget") if budget is not None else None
    task = _store(ctx).add(
        title,
        project=_project(ctx, project),
        task_id=task_id,
        body=body or "",
        priority=DEFAULT_PRIORITY if priority is None else _priority(priority),
        after=_ids(after),
        max_attempts=_whole_number("max attempts", max_attempts, DEFAULT_MAX_ATTEMPTS),
        test_cmd=test_cmd,
        draft=draft,
        touches=_touches(touches),
        cli=program(cli).name if cli is not None else "",
    )
    if limit is not None:
        budget_store.set_budget(ctx.client, ctx.keys, "task", task.id, limit)
    return task


@task_app.command("list")
def list_cmd(
    project: str = typer.Option(None, "--project", help="project (default: the repository's name)"),
    all_projects: bool = typer.Option(False, "--all", help="every project's tasks"),
    status: str = typer.Option(None, "--status", help="only draft, pending, ready, claimed, done or failed"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """List tasks, highest priority first.

    Example: ib task list --status ready --json
    """
    from worker.tasks import views as task_views

    ctx = Context()
    scope = None if all_projects else _project(ctx, project)
    tasks = task_list(ctx, project, all_projects, status)
    if as_json:
        _print_json(task_rows(ctx, tasks))
        return
    if not tasks:
        elsewhere = len(_store(ctx).list(None, status)) if scope else 0
        print(
            f"no tasks in project {scope!r}; {elsewhere} in other projects (ib task list --all)"
            if elsewhere
            else "no tasks"
        )
        return
    held = _held(ctx, {t.project for t in tasks if t.status == "ready" and t.touches})
    columns = task_views.COLUMNS if scope else ("project", *task_views.COLUMNS)
    rows = [task_views.row(t, held) if scope else (t.project, *task_views.row(t, held)) for t in tasks]
    print("\n".join(task_views.table_lines(columns, rows)))


@task_app.command()
def show(
    task_id: str = typer.Argument(..., help="task id"),
    as_json: bool = typer.Option(False, "--json", help="print JSON (with `deps` and `dependents`)"),
) -> None:
    """One task: its fields, what it waits for and what waits for it, its body and its context notes."""
    from worker.tasks import views as task_views

    ctx = Context()
    if as_json:
        _print_json(task_record(ctx, task_id))
        return
    store = _store(ctx)
    task = store.get(task_id)
    deps = [store.get(d) for d in task.after]
    hold = _held(ctx, {task.project} if task.status == "ready" and task.touches else set()).get(task.id)
    print("\n".join(task_views.show_lines(task, deps, store.dependents(task_id), hold)))


def task_rows(ctx: Context, tasks: list[Task]) -> list[dict[str, object]]:
    """`ib task list --json`: each task's fields and whether it is held."""
    held = _held(ctx, {t.project for t in tasks if t.status == "ready" and t.touches})
    return [{**t.as_dict(), "held": _held_json(held.get(t.id))} for t in tasks]


def task_list(ctx: Context, project: str | None, all_projects: bool, status: str | None) -> list[Task]:
    """The tasks `ib task list` shows: one project's (default: the repository's) or every one's."""
    return _store(ctx).list(None if all_projects else _project(ctx, project), status)


def task_record(ctx: Context, task_id: str) -> dict[str, object]:
    """`ib task show --json`: the task, whether it is held, what it waits for and what waits for it."""
    store = _store(ctx)
    task = store.get(task_id)
    hold = _held(ctx, {task.project} if task.status == "ready" and task.touches else set()).get(task.id)
    return {
        **task.as_dict(),
        "held": _held_json(hold),
        "deps": [{"id": d, "status": store.get(d).status} for d in task.after],
        "dependents": [{"id": d.id, "status": d.status} for d in store.dependents(task_id)],
    }


@task_app.command()
def tree(
    project: str = typer.Option(None, "--project", help="project (default: the repository's name)"),
) -> None:
    """The project's tasks as a dependency tree: each task under what it waits for."""
    from worker.tasks import views as task_views

    ctx = Context()
    lines = task_views.tree_lines(_store(ctx).list(_project(ctx, project)))
    print("\n".join(lines) if lines else "no tasks")


@task_app.command()
def edit(
    task_id: str = typer.Argument(..., help="task id"),
    title: str = typer.Option(None, "--title", help="a new title"),
    body: str = typer.Option(None, "--body", help="a new body"),
    body_file: str = typer.Option(None, "--body-file", help="read the new body from this file (`-`: stdin)"),
    priority: str = typer.Option(None, "--priority", help="0 to 10"),
    after: list[str] = typer.Option(None, "--after", help="more ids it waits for (a cycle is refused)"),
    publish: bool = typer.Option(False, "--publish", help="turn a draft into a pending or ready task"),
) -> None:
    """Change a task not yet finished: title, body, priority, more dependencies; publish a draft.

    Example: ib task edit write-tests --after impl-endpoints --priority 6
    """
    store = _store(Context())
    new_body = _body(body, body_file)
    new_priority = None if priority is None else _priority(priority)
    deps = _ids(after)
    if title is None and new_body is None and new_priority is None and not deps and not publish:
        raise InvalidInput(
            "nothing to change: give --title, --body, --body-file, --priority, --after or --publish"
        )
    if deps:
        store.add_deps(task_id, deps)
    task = store.edit(task_id, title=title, body=new_body, priority=new_priority, publish=publish)
    print(f"{task.id}: {task.status}, priority {task.priority}, after {','.join(task.after) or '-'}")


@task_app.command()
def release(task_id: str = typer.Argument(..., help="task id")) -> None:
    """Give a claimed task back to the ready queue (the attempt does not count)."""
    task = _store(Context()).release(task_id)
    print(f"{task.id}: back to ready")


@task_app.command()
def claim(
    project: str = typer.Option(None, "--project", help="project (default: the repository's name)"),
    as_agent: str = typer.Option(None, "--as", help="claim for this agent (default: the one running this)"),
    wait: bool = typer.Option(False, "--wait", help="block until a task of the project is ready, then claim"),
    timeout: float = typer.Option(
        None, "--timeout", min=0, callback=values.seconds, help="with --wait: give up after S seconds"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the claimed task as JSON, context included"),
) -> None:
    """Claim the project's next ready task (highest priority, then oldest); prints its id.

    With --wait: block on the bus (no polling) until a task of the project is ready, then claim it.

    Two waiting claimers never get the same task.

    Exit codes: 0 claimed; 3 nothing ready (at once, or within --timeout with --wait); 1 error.

    Example: ib task claim --wait --timeout 600 --json
    """
    from bus.tasks.task_wait import claim_wait

    ctx = Context()
    if timeout is not None and not wait:
        raise InvalidInput("--timeout goes with --wait: ib task claim --wait --timeout S")
    where = _project(ctx, project)
    agent = _acting(ctx, as_agent)
    if wait:

        def waiting() -> None:
            limit = f" (up to {timeout:g} s)" if timeout is not None else ""
            _error(f"waiting for a ready task in project {where}{limit}...")

        task = claim_wait(ctx.runtime.claims, ctx.blocking_redis(), ctx.keys, where, agent, timeout, waiting)
    else:
        task = ctx.runtime.claims.claim(where, agent)
    if task is None:
        within = f" within {timeout:g} s" if wait and timeout is not None else ""
        _error(f"nothing ready in project {where}{within} (exit {NOTHING_READY})")
        raise typer.Exit(NOTHING_READY)
    if as_json:
        print(task.to_json())
    else:
        print(task.id)


@task_app.command()
def done(
    task_id: str = typer.Argument(..., help="task id"),
    summary: str = typer.Option("", "--summary", help="one line on what was done (kept as a result note)"),
    as_agent: str = typer.Option(None, "--as", help="the claimer (default: the agent running this)"),
    test_timeout: float = typer.Option(
        None,
        "--test-timeout",
        min=0.001,
        callback=values.seconds,
        help="seconds for the test command (default IB_TASK_TEST_TIMEOUT)",
    ),
) -> None:
    """Finish a task you hold; prints what became ready because of it.

    A task with a test command runs it first, in the agent's worktree, within --test-timeout.

    When the tests fail, the task fails instead (back to ready while attempts remain), the last lines of
    their output become a test_failure note, and the exit code is 1.

    Example: ib task done design-auth --summary "JWT with refresh tokens"
    """
    woken = finish(Context(), task_id, summary, as_agent, test_timeout)
    print(f"{task_id}: done")
    if woken:
        print(f"now ready: {', '.join(t.id for t in woken)}")


def finish(
    ctx: Context, task_id: str, summary: str, as_agent: str | None, test_timeout: float | None
) -> list[Task]:
    """Mark a task done by its claimer, its test command run first (FailedTests when it fails); the tasks
    that became ready because of it."""
    store = _store(ctx)
    agent = _acting(ctx, as_agent)
    task = store.get(task_id)
    if task.test_cmd and task.status == "claimed" and task.claimed_by == agent:
        _run_tests(ctx, store, task, agent, test_timeout or ctx.settings.task_test_timeout)
    return store.done(task_id, agent, summary)


def _test_folder(ctx: Context, agent: str) -> Path:
    """The agent's worktree: the one the command runs in, else the agent's recorded one, else the repo."""
    rt = ctx.runtime
    if agent_from_path(ctx.cwd) == agent:
        from worker.agents.layout import AgentPaths

        return AgentPaths(rt.root, agent).worktree
    record = rt.agents.find(agent)
    if record is not None:
        return Path(record.worktree or record.root or rt.root)
    return rt.root


def _run_tests(ctx: Context, store: TaskStore, task: Task, agent: str, limit: float) -> None:
    from worker.boundary.done_check_box import box_for
    from worker.tasks.done_check import failure_note, outcome, run_test, tail

    folder = _test_folder(ctx, agent)
    if not folder.is_dir():
        raise InvalidInput(f"cannot run the tests of {task.id}: {folder} is not a folder")
    _error(f"running the test command of {task.id} in {folder}: {task.test_cmd}")
    with tempfile.TemporaryDirectory(prefix="ib-test-") as scratch:
        box = box_for(str(task.test_cmd), str(folder), str(ctx.runtime.root), scratch)  # for an agent
        ran = run_test(str(task.test_cmd), folder, limit, box)
    if ran.passed:
        return
    after = store.fail(task.id, agent, failure_note(ran))
    last = tail(ran.output)
    if last:
        print(last, file=sys.stderr)
    fate = (
        f"back to ready (attempt {after.attempt}/{after.max_attempts})"
        if after.status == "ready"
        else f"failed for good (attempt {after.attempt}/{after.max_attempts})"
    )
    raise FailedTests(
        f"tests failed, so {task.id} is not done: {outcome(ran)}; the task is {fate}; "
        f"its last lines are in a test_failure note (`ib task show {task.id}`)"
    )


@task_app.command()
def fail(
    task_id: str = typer.Argument(..., help="task id"),
    reason: str = typer.Option("", "--reason", help="why (kept as a test_failure note)"),
    as_agent: str = typer.Option(None, "--as", help="the claimer (default: the agent running this)"),
) -> None:
    """Give up on a task you hold: back to ready while attempts remain, else failed for good.

    A task that fails for good takes every task waiting on it with it.
    """
    ctx = Context()
    task = _store(ctx).fail(task_id, _acting(ctx, as_agent), reason)
    if task.status == "ready":
        print(f"{task.id}: failed attempt {task.attempt}/{task.max_attempts}, back to ready (will retry)")
    else:
        print(f"{task.id}: failed for good after {task.attempt}/{task.max_attempts} attempts")


def _note_text(words: list[str]) -> str:
    return sys.stdin.read() if words == ["-"] else " ".join(words)


@task_app.command()
def observe(
    task_id: str = typer.Argument(..., help="task id"),
    note: list[str] = typer.Argument(..., help="what you noticed; words are joined; `-` reads stdin"),
) -> None:
    """Add an observation to a task's context (tasks that wait for it inherit it when claimed).

    Example: ib task observe design-auth "the session table has no index on user_id"
    """
    _store(Context()).observe(task_id, _note_text(note))
    print(f"{task_id}: observation noted")


@task_app.command()
def handoff(
    task_id: str = typer.Argument(..., help="task id"),
    note: list[str] = typer.Argument(..., help="what the next one should know; `-` reads stdin"),
) -> None:
    """Add a handoff note: where you stopped and what comes next (inherited like observations)."""
    _store(Context()).handoff(task_id, _note_text(note))
    print(f"{task_id}: handoff noted")


@task_app.command()
def reclaim(
    minutes: float = typer.Option(
        30.0, "--minutes", min=0, callback=values.minutes, help="claims older than this many minutes"
    ),
) -> None:
    """Give stale claims back to the ready queue: older than --minutes, held by no live agent.

    An id that is not an agent (e.g. "user") counts as gone.
    """
    from worker.agents import views

    rt = Context().runtime

    def alive(agent_id: str) -> bool:
        record = rt.agents.find(agent_id)
        return record is not None and views.live_state(rt, record) != "stopped"

    released = rt.tasks.reclaim(minutes * 60, alive)
    print(f"released: {', '.join(released)}" if released else "no stale claims")


@task_app.command()
def delete(task_id: str = typer.Argument(..., help="task id")) -> None:
    """Delete a task that nobody holds and no task waits for."""
    _store(Context()).delete(task_id)
    print(f"{task_id}: deleted")
