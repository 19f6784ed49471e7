"""/cost: the tokens and dollars of the topic's agent, of the topic's project, or of everything (in
General), read from the usage streams the workers keep (`bus.stores.usage_store`), as `ib cost` reads them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.errors import CommandUsage
from bot.handlers.chat_commands import parse_cost
from bot.handlers.command_context import answering, asked, words
from bot.render.render import escape
from bus.costs.cost_report import report, since_seconds
from bus.costs.usage import Spend, kilo_tokens, spend_line
from bus.errors import NotFound
from bus.stores import usage_store


def cost_text(spends: Mapping[str, Spend], title: str) -> str:
    """The message: a head line with the total, then one line per agent (HTML)."""
    total = spends[""]
    if not total.models:
        return escape(f"{title}: no model answers recorded yet.")
    lines = [f"<b>{escape(title)}</b>: {escape(spend_line(total))}"]
    for agent, spend in spends.items():
        if agent:
            c = spend.counts()
            detail = (
                f"in {kilo_tokens(c['input'])}, out {kilo_tokens(c['output'])}, "
                f"cache write {kilo_tokens(c['cache_write'])}, read {kilo_tokens(c['cache_read'])}"
            )
            lines.append(f"{escape(agent)} · {escape(spend_line(spend))} ({detail})")
    if total.unpriced:
        lines.append(escape(f"No price for {', '.join(total.unpriced)}: set IB_PRICES."))
    return "\n".join(lines)


@answering
async def cost_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Tokens and cost of this topic's agent or project, or of all agents: /cost [AGENT] [--since 1d]."""
    rt, _message, ask = asked(update, context)
    named, since = parse_cost(words(update))
    try:
        span = since_seconds(since) if since is not None else 0.0
    except ValueError as e:
        raise CommandUsage(str(e)) from e
    agent = await rt.agent_for(ask.thread, named) if named else await rt.agent_of_topic(ask.thread)
    project = None if agent is not None else await rt.project_of_topic(ask.thread)
    scope = usage_store.Scope(
        agent.id if agent is not None else "",
        project=project or "",
        since=time.time() - span if span else 0.0,
    )
    found = await rt.blocking(usage_store.records, rt.sync, rt.keys, scope)
    problem = await rt.blocking(usage_store.scope_problem, rt.sync, rt.keys, scope, found)
    if problem:
        raise NotFound(problem)
    which = f"agent {agent.id}" if agent is not None else f"project {project}" if project else "all agents"
    title = f"Cost of {which}" + (f" in the last {since}" if since else "")
    rt.say(ask.thread, cost_text(report(found, rt.prices), title), ask.reply_to)


COST_HANDLERS = (CommandHandler("cost", cost_command),)
