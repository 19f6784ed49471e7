"""What every tool call of one `ib mcp` server shares: the CLI's context (settings, bus, runtime), who
calls (a person, or the agent the server was started inside), and the check of each call against that
agent's allow-list; refusals become tool errors with the CLI's one line."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec

import redis
from mcp.types import CallToolResult, ContentBlock, TextContent
from typer._click.exceptions import ClickException  # typer vendors click

from bus.commands.worker_commands import Command
from bus.errors import BusError
from bus.stores.agent_store import Agent
from worker.boundary import guard
from worker.boundary.identity import AgentCaller
from worker.cli import agent_commands
from worker.cli.app import error_line
from worker.cli.context import Context
from worker.errors import WorkerError
from worker.runtime import Runtime

P = ParamSpec("P")
REFUSALS = (ClickException, BusError, WorkerError, redis.RedisError)
"""What a tool or resource answers with the line `ib` prints for it: every mistake and refusal, a bus that
is down; anything else is a bug, which the SDK reports as such."""


class Session:
    """One server's context; tools run on worker threads, so what is built once is built under a lock."""

    def __init__(self, ctx: Context, caller: AgentCaller | None) -> None:
        self.ctx, self.caller = ctx, caller
        self._lock = threading.Lock()
        self._blocking: redis.Redis | None = None
        self._runtime: Runtime | None = None

    def runtime(self) -> Runtime:
        """The CLI's runtime, its tmux reading through a control client: a server that lives as long as its
        client answers many calls, each without a tmux process for its reads."""
        with self._lock:
            if self._runtime is None:
                self._runtime = self.ctx.runtime
                self._runtime.tmux.keep_control()
            return self._runtime

    def close(self) -> None:
        """End what the calls kept open: the tmux control client."""
        with self._lock:
            if self._runtime is not None:
                self._runtime.tmux.close_control()

    def agents(self) -> list[Agent]:
        """Every agent, or the line `ib list` says while the bus is down."""
        with self._lock:
            return agent_commands.every_agent(self.ctx)

    def blocking(self) -> redis.Redis:
        """A client for BLOCK reads (no socket timeout), shared by the calls that wait."""
        with self._lock:
            if self._blocking is None:
                self._blocking = self.ctx.blocking_redis()
            return self._blocking

    def allow(
        self, command: str, target: str | None = None, acting: str | None = None, options: Iterable[str] = ()
    ) -> None:
        """Refused (the guard's line) unless the caller may run `ib <command>` so; a person always may."""
        if self.caller is None:
            return
        rt = self.runtime()
        request = guard.named_request(
            command,
            target,
            acting,
            frozenset(options),
            functools.partial(guard.manager_in, rt.agents),
            self.caller.id,
        )
        guard.check(self.caller, self.ctx.cwd, request)

    def on_owner(self, command: Command, on: str | None = None) -> Any:
        self.runtime()
        return self.ctx.on_owner(command, on=on)


def one_line_errors(tool: Callable[P, CallToolResult]) -> Callable[P, CallToolResult]:
    """The tool, its refusals turned into MCP tool errors with the line `ib` prints for them (returned,
    not raised: the SDK would put its own words before a raised one)."""

    @functools.wraps(tool)
    def run(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            return tool(*args, **kwargs)
        except REFUSALS as e:
            return CallToolResult(content=[TextContent(type="text", text=error_line(e))], is_error=True)

    return run


def reply(text: str, data: dict[str, Any], *more: ContentBlock) -> CallToolResult:
    """A tool's answer: the short text a model reads, the structured data a program reads."""
    return CallToolResult(content=[TextContent(type="text", text=text), *more], structured_content=data)
