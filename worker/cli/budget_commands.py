"""`ib budget`: set, list and raise the budgets of agents, tasks and days, and let an agent the runaway
watchdog paused go on. The worker acts on them (worker.budgets); these only change the records on the bus.
"""

from __future__ import annotations

import json

import typer

from bus.costs.budgets import CONTINUE_NOTE, TURN_OVER, Amount, Budget, parse_amount, raised_note
from bus.errors import InvalidInput, NotFound
from worker.cli.context import Context

budget_app = typer.Typer(no_args_is_help=True, help="Budgets per agent, task and day, and paused agents.")


def budget_amount(text: str, given_as: str) -> Amount:
    """An amount a person typed, or a usage error (one line, exit 2) saying what to write."""
    try:
        return parse_amount(text)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint=given_as) from e


def _scope(agent: str | None, task: str | None, day: bool) -> tuple[str, str]:
    chosen = [(s, t) for s, t in (("agent", agent), ("task", task)) if t] + ([("day", "")] if day else [])
    if len(chosen) != 1:
        raise InvalidInput("give one of --agent AGENT, --task TASK and --day: a budget covers one of them")
    return chosen[0][0], chosen[0][1] or ""


def _exists(ctx: Context, scope: str, target: str) -> None:
    key = ctx.keys.agent(target) if scope == "agent" else ctx.keys.task(target)
    if scope != "day" and not ctx.client.exists(key):
        listing = "ib list" if scope == "agent" else "ib task list"
        raise NotFound(f"no {scope} {target!r}: see `{listing}` for the {scope}s there are")


NEGATIVE_OK = {"ignore_unknown_options": True}  # `-5` is a (bad) amount, refused as one, not an option


@budget_app.command("set", context_settings=NEGATIVE_OK)
def set_budget(
    amount: str = typer.Argument(..., help="dollars (2.50$, $2.50) or tokens (400k, 1.5M, 250000)"),
    agent: str = typer.Option(None, "--agent", help="one agent's budget"),
    task: str = typer.Option(None, "--task", help="one task's budget (whoever works on it)"),
    day: bool = typer.Option(False, "--day", help="what all agents together may spend a day (UTC)"),
) -> None:
    """Set a budget: at 80 % a warning, at 100 % the agent is paused at its next tool call.

    Example: ib budget set --agent agent-1 2.50$ (or --task design-auth 400k, or --day 20$)
    """
    from bus.stores import budget_store

    limit = budget_amount(amount, "AMOUNT")
    scope, target = _scope(agent, task, day)
    ctx = Context()
    _exists(ctx, scope, target)
    budget_store.set_budget(ctx.client, ctx.keys, scope, target, limit)
    print(f"{scope} {target or '(every day)'} budget: {limit}".replace("  ", " "))


@budget_app.command("clear")
def clear(
    agent: str = typer.Option(None, "--agent", help="the agent's budget"),
    task: str = typer.Option(None, "--task", help="the task's budget"),
    day: bool = typer.Option(False, "--day", help="the standing day budget (IB_DAY_BUDGET still applies)"),
) -> None:
    """Remove a budget (a pause it caused is lifted at the worker's next look)."""
    from bus.stores import budget_store

    scope, target = _scope(agent, task, day)
    ctx = Context()
    if not budget_store.remove_budget(ctx.client, ctx.keys, scope, target):
        raise NotFound(f"no {scope} budget {target!r} is set: see `ib budget list`")
    print(f"removed the {scope} budget {target}".rstrip())


@budget_app.command("list")
def list_budgets(as_json: bool = typer.Option(False, "--json", help="one JSON object, for scripts")) -> None:
    """Every budget with its limit, what is spent and the share; today's day budget among them."""
    from bus.stores import budget_store

    ctx = Context()
    found = budget_store.listed(ctx.client, ctx.keys, ctx.settings.day_limit)
    if as_json:
        print(json.dumps([_data(b) for b in found], ensure_ascii=False))
        return
    if not found:
        print("no budgets: set one with ib budget set (or IB_DAY_BUDGET)")
        return
    for b in found:
        spent = b.spent.shown(b.limit.unit)
        print(f"{b.scope:<6} {b.target:<28} {spent:>14} of {b.limit!s:<14} {b.share:>5.0%}")


def _data(b: Budget) -> dict[str, object]:
    unit = b.limit.unit
    return {
        "scope": b.scope,
        "target": b.target,
        "unit": unit,
        "limit": b.limit.value,
        "spent": b.spent.of(unit),
    }


@budget_app.command("raise")
def raise_budget(
    agent: str = typer.Argument(..., help="the paused agent"),
    by: str = typer.Argument(None, help="how much more: 1$ or 200k (default: its limit once more)"),
) -> None:
    """Raise the budget that paused AGENT, so its next tool call goes through.

    Example: ib budget raise agent-1 1.50$
    """
    from bus.stores import budget_store

    step = budget_amount(by, "BY") if by is not None else None
    ctx = Context()
    raised, going = budget_store.raise_hold(ctx.client, ctx.keys, agent, step, ctx.settings.day_limit)
    spent = raised.spent.shown(raised.limit.unit)
    after = "goes on" if going else "stays paused: the budget is still used up, raise it more"
    print(f"the {raised.name} budget is now {raised.limit} ({spent} spent); {agent} {after}")
    if going:
        _tell(ctx, agent, raised_note(raised))


@budget_app.command("continue")
def go_on(agent: str = typer.Argument(..., help="the agent the runaway watchdog paused")) -> None:
    """Let an agent the runaway watchdog paused go on (its calls so far are forgotten).

    Example: ib budget continue agent-1
    """
    from bus.stores import budget_store

    ctx = Context()
    found = ctx.runtime.agents.find(agent)
    if found is None:
        raise NotFound(f"no agent {agent!r}: see `ib list` for the agents there are")
    if not budget_store.go_on(ctx.client, ctx.keys, agent, found.worker):
        raise NotFound(f"{agent} is not paused")
    print(f"{agent} goes on")
    _tell(ctx, agent, CONTINUE_NOTE)


def _tell(ctx: Context, agent: str, note: str) -> None:
    """An agent that ended its turn on the refused call gets `note` typed in: no next call comes by itself."""
    from bus.commands.worker_commands import Send

    found = ctx.runtime.agents.find(agent)
    if found is not None and found.state in TURN_OVER:
        ctx.on_owner(Send(agent=agent, text=note))
        print(f"told {agent} to go on (its turn had ended)")
