"""The read-only resources a client can pin: the agents list, one agent's screen, and a project's task
graph. Each reads what the tool or `ib` command beside it reads, under the same check; a refusal is a
resource error with the CLI's one line."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, ParamSpec

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from bus.commands.worker_commands import Look
from bus.errors import NotFound
from worker.cli import agent_commands, task_commands
from worker.cli.app import error_line
from worker.mcp.session import REFUSALS, Session
from worker.tasks import views as task_views

P = ParamSpec("P")
AGENTS = "ittybus://agents"
SCREEN = "ittybus://agents/{agent}/screen"
TASKS = "ittybus://tasks"
PROJECT_TASKS = "ittybus://projects/{project}/tasks"


class Resources:
    def __init__(self, session: Session) -> None:
        self.session = session

    def agents(self) -> str:
        """Every agent with its state, role, program, manager, goal and task (as `ib list --json`)."""
        self.session.allow("list")
        agents = self.session.agents()
        return _json({"agents": agent_commands.agent_rows(self.session.runtime(), agents)})

    def screen(self, agent: str) -> str:
        """What the agent's terminal shows now (as `ib look`)."""
        self.session.allow("look", target=agent)
        return str(self.session.on_owner(Look(agent=agent)))

    def tasks(self) -> str:
        """The task graph of the repository's project: each task with what it waits for, and the tree."""
        return self.project_tasks(None)

    def project_tasks(self, project: str | None) -> str:
        """One project's task graph: each task (as `ib task list --json`) and the tree of `ib task tree`."""
        self.session.allow("task tree")
        ctx = self.session.ctx
        tasks = task_commands.task_list(ctx, project, False, None)
        tree = task_views.tree_lines(tasks)
        return _json({"tasks": task_commands.task_rows(ctx, tasks), "tree": tree})


def add_resources(server: MCPServer, session: Session) -> None:
    """Register the resources on the server, each with the CLI's refusals as resource errors."""
    reads = Resources(session)
    json_type = "application/json"
    server.resource(AGENTS, name="agents", mime_type=json_type)(one_line(reads.agents))
    server.resource(SCREEN, name="screen", mime_type="text/plain")(one_line(reads.screen))
    server.resource(TASKS, name="tasks", mime_type=json_type)(one_line(reads.tasks))
    server.resource(PROJECT_TASKS, name="project-tasks", mime_type=json_type)(one_line(reads.project_tasks))


def one_line(read: Callable[P, str]) -> Callable[P, str]:
    """The read, its refusals raised as the SDK's resource errors with the line `ib` prints for them (a
    missing agent or task as not found)."""

    @functools.wraps(read)
    def run(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return read(*args, **kwargs)
        except NotFound as e:
            raise ResourceNotFoundError(error_line(e)) from e
        except REFUSALS as e:
            raise ResourceError(error_line(e)) from e

    return run


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)
