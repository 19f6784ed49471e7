"""The tools about the work around the agents: the task queue, what waits on the person, what was spent,
and `wait_for_events`, which lets a program without an inbox listen to the bus between its calls."""

from __future__ import annotations

import time
from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field

from bus.costs.cost_report import report_json, report_lines
from bus.costs.usage_limits import limit_lines
from bus.errors import InvalidInput
from bus.events.envelope import LISTEN_TYPES, Envelope
from bus.inbox.attention import listing
from bus.readers.event_cursor import newest, read_after
from bus.tasks.task_model import Task
from worker.cli import attention_commands, auto_commands, cost_commands, limit_commands, task_commands
from worker.mcp.session import Session, reply
from worker.programs.mcp_registration import MAX_WAIT


class BoardTools:
    def __init__(self, session: Session) -> None:
        self.session = session

    def task_add(
        self,
        title: str,
        body: str | None = None,
        priority: int | None = None,
        after: list[str] | None = None,
        project: str | None = None,
        task_id: str | None = None,
        touches: list[str] | None = None,
        draft: bool = False,
        program: str | None = None,
    ) -> CallToolResult:
        """Add a task to the queue (as `ib task add`); ready at once unless it waits for unfinished tasks
        (`after`) or is a draft."""
        self.session.allow("task add")
        task = task_commands.add_task(
            self.session.ctx,
            title,
            task_id=task_id,
            body=body,
            priority=None if priority is None else str(priority),
            after=after,
            project=project,
            draft=draft,
            touches=touches,
            cli=program,
        )
        return reply(f"added task {task.id} ({task.status})", {"task": task.as_dict()})

    def task_list(
        self, project: str | None = None, all_projects: bool = False, status: str | None = None
    ) -> CallToolResult:
        """The tasks of the repository's project (or of every project), highest priority first."""
        self.session.allow("task list")
        ctx = self.session.ctx
        tasks = task_commands.task_list(ctx, project, all_projects, status)
        return reply(_task_lines(tasks), {"tasks": task_commands.task_rows(ctx, tasks)})

    def task_show(self, task: str) -> CallToolResult:
        """One task: its fields, what it waits for and what waits for it."""
        self.session.allow("task show", target=task)
        record = task_commands.task_record(self.session.ctx, task)
        text = f"{record['id']} ({record['status']}): {record['title']}\n{record['body']}"
        return reply(text.rstrip(), record)

    def task_done(
        self,
        task: str,
        summary: str = "",
        as_agent: str | None = None,
        test_timeout: Annotated[float, Field(gt=0)] | None = None,
    ) -> CallToolResult:
        """Finish a task you hold (as `ib task done`); its test command runs first, and when the tests fail
        the task fails instead (a tool error saying so). What became ready because of it."""
        options = {"--test-timeout"} if test_timeout is not None else set()
        self.session.allow("task done", acting=as_agent, options=options)
        woken = task_commands.finish(self.session.ctx, task, summary, as_agent, test_timeout)
        ready = [t.id for t in woken]
        text = f"{task}: done" + (f"\nnow ready: {', '.join(ready)}" if ready else "")
        return reply(text, {"task": task, "done": True, "now_ready": ready})

    def auto_start(
        self,
        project: str,
        worktrees: bool = False,
        max_tasks: Annotated[int, Field(ge=0)] = 0,
        agent: str | None = None,
        on: str | None = None,
    ) -> CallToolResult:
        """Start (or resume) a project's /auto loop on a worker (as `ib auto --detach`): it claims the
        project's tasks one after another and gives each to an agent (`worktrees`: a new agent and worktree
        per task, merged when done; else the project's `agent`). Follow it with auto_status and
        wait_for_events."""
        self.session.allow("auto", acting=agent, options={"--on"} if on else ())
        ctx, client = self.session.ctx, self.session.blocking()
        state = auto_commands.start_loop(ctx, client, project, worktrees, max_tasks, agent, on)
        return reply(auto_commands.started_line(state), state.as_dict())

    def auto_status(self, project: str | None = None) -> CallToolResult:
        """The /auto loops (or one project's): status, phase, the task in hand, how many tasks are done."""
        self.session.allow("auto status")
        states = auto_commands.loop_states(self.session.ctx, project)
        text = "\n".join(auto_commands.status_line(s) for s in states)
        empty = f"no auto loop for {project}" if project else "no auto loops"
        return reply(text or empty, {"loops": [s.as_dict() for s in states]})

    def limits(self) -> CallToolResult:
        """Accounts held by their plan's usage limit: until when, since when, the agents parked on it (the
        worker resumes them at the reset)."""
        self.session.allow("limits")
        found = limit_commands.limited(self.session.ctx)
        now = time.time()
        text = "\n".join(line for limit in found for line in limit_lines(limit, now))
        records = [limit_commands.limit_record(limit) for limit in found]
        return reply(text or "no account is limited", {"limits": records})

    def attention(self) -> CallToolResult:
        """What waits on the person (permissions, questions, waiting and stuck agents), oldest first."""
        self.session.allow("attention")
        rt = self.session.runtime()
        items, now = rt.attention.open_items(), rt.attention.now()
        rows = attention_commands.attention_rows(items, now)
        return reply("\n".join(listing(items, now)) or "nothing waits on you", {"items": rows})

    def cost(
        self,
        agent: str | None = None,
        task: str | None = None,
        project: str | None = None,
        since: str | None = None,
    ) -> CallToolResult:
        """Tokens and dollars per agent and model: one agent's, task's or project's, or everything's;
        `since` is a span such as 30m, 2h, 1d."""
        self.session.allow("cost", target=agent)
        spends, named = cost_commands.cost_report(self.session.ctx, agent, task, project, since)
        title = " ".join(f"{k} {v}" for k, v in named.items()) or "all agents"
        return reply("\n".join(report_lines(spends, f"cost of {title}")), report_json(spends, named))

    def wait_for_events(
        self,
        types: list[str] | None = None,
        agents: list[str] | None = None,
        cursor: str | None = None,
        timeout: float = 60.0,
    ) -> CallToolResult:
        """Wait up to `timeout` seconds (0 to 600) for events after `cursor` and return them with the
        next cursor: pass that cursor to the next call, so nothing is lost between calls and nothing comes
        twice. Without a cursor it starts from now. `types` defaults to what `ib listen` wakes for."""
        self.session.allow("events")
        if not 0 <= timeout <= MAX_WAIT:
            raise InvalidInput(
                f"timeout {timeout:g} is out of range: wait 0 to {MAX_WAIT:g} seconds a call, "
                "and call again with the cursor to wait longer"
            )
        wanted_types = frozenset(types or LISTEN_TYPES)
        wanted_agents = frozenset(agents or ())

        def wanted(event: Envelope) -> bool:
            if event.get("type") not in wanted_types:
                return False
            return not wanted_agents or bool({event.get("agent"), event.get("from")} & wanted_agents)

        client, keys = self.session.blocking(), self.session.runtime().keys
        batch = read_after(client, keys, cursor or newest(client, keys), wanted, timeout)
        text = "\n".join(_event_line(e) for e in batch.events) or "no events"
        if batch.missed:
            text = f"some events after cursor {cursor} were trimmed from the stream before this read\n{text}"
        text += f"\nnext cursor: {batch.cursor}"  # for a client that shows its model the text alone
        return reply(text, {"events": batch.events, "cursor": batch.cursor, "missed": batch.missed})


def _task_lines(tasks: list[Task]) -> str:
    return "\n".join(f"{t.id}  {t.status}  p{t.priority}  {t.title}" for t in tasks) or "no tasks"


def _event_line(event: Envelope) -> str:
    who = event.get("agent") or event.get("from") or "-"
    return f"{event.get('id')}  {event.get('type')}  {who}  {event.get('msg', '')}".rstrip()
