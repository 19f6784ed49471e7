"""`ib cost`: the tokens and dollars of an agent, a task, a project or everything, from the usage the
worker read out of the agents' transcripts."""

from __future__ import annotations

import json
import time

import typer

from bus.costs.cost_report import report, report_json, report_lines, since_seconds
from bus.costs.usage import Spend
from bus.errors import InvalidInput, NotFound
from worker.cli.context import Context


def cost(
    agent: str = typer.Argument(None, help="one agent's cost (default: every agent's)"),
    task: str = typer.Option(None, "--task", help="the cost of one task (the answers given while on it)"),
    project: str = typer.Option(None, "--project", help="the cost of one project's agents"),
    since: str = typer.Option(None, "--since", help="only the last span: 30m, 2h, 1d, 1w"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object, for scripts"),
) -> None:
    """Tokens (input, output, cache write, cache read) and cost per agent and model.

    Prices: Anthropic's list prices per model family, over which IB_PRICES may set others.
    Example: ib cost --project backend --since 1d
    """
    spends, named = cost_report(Context(), agent, task, project, since)
    if as_json:
        print(json.dumps(report_json(spends, named), ensure_ascii=False))
        return
    title = " ".join(f"{k} {v}" for k, v in named.items()) or "all agents"
    for line in report_lines(spends, f"cost of {title}"):
        print(line)


def cost_report(
    ctx: Context, agent: str | None, task: str | None, project: str | None, since: str | None
) -> tuple[dict[str, Spend], dict[str, str]]:
    """What was spent in one scope (every agent's when none is named), and the scope's names."""
    from bus.stores import usage_store

    scopes = (("AGENT", agent), ("--task", task), ("--project", project))
    if empty := next((name for name, value in scopes if value is not None and not value.strip()), None):
        raise InvalidInput(f"{empty} is empty: name the {empty.strip('-').lower()} to count, or leave it out")
    chosen = [name for name, value in scopes if value]
    if len(chosen) > 1:
        raise InvalidInput(
            f"give one of {', '.join(chosen)}: ib cost counts one agent, task or project at a time"
        )
    try:
        span = since_seconds(since) if since is not None else None
    except ValueError as e:
        raise InvalidInput(str(e)) from e
    scope = usage_store.Scope(agent or "", task or "", project or "", time.time() - span if span else 0.0)
    found = usage_store.records(ctx.client, ctx.keys, scope)
    problem = usage_store.scope_problem(ctx.client, ctx.keys, scope, found)
    if problem:
        raise NotFound(problem)
    named = {"agent": agent, "task": task, "project": project, "since": since}
    return report(found, ctx.settings.prices), {k: v for k, v in named.items() if v}
