"""Commands on the chat and its topics: /help, /project (bind a topic to a project), /unbind, and
/status (of this topic's agent, or of the project). One async function each; they run only for allowed
people in the configured chat (`bot.handlers.gate` stops everything else first).
"""

from __future__ import annotations

from typing import cast

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.errors import BotError
from bot.handlers import actions
from bot.handlers.chat_commands import help_text, parse_project, parse_target
from bot.handlers.command_context import answering, asked, words
from bot.handlers.task_handlers import auto_line
from bot.render.render import escape
from bot.topics.topics import TopicInfo


@answering
async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the commands."""
    rt, _message, ask = asked(update, context)
    rt.say(ask.thread, escape(help_text()), ask.reply_to)


@answering
async def project_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Make this topic the project's topic: /project NAME."""
    rt, message, ask = asked(update, context)
    project = parse_project(words(update))
    if ask.thread is None:
        raise BotError("use /project inside a topic: open a topic for the project, then send it there")
    opened = message.reply_to_message.forum_topic_created if message.reply_to_message else None
    await rt.registry.bind(
        "project", project, ask.thread, TopicInfo(opened.name if opened else project, project)
    )
    rt.say(
        ask.thread, f"This is project <b>{escape(project)}</b>'s topic now: its tasks and merges show here."
    )


@answering
async def unbind_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Detach this topic from its project, task or agent."""
    rt, _message, ask = asked(update, context)
    gone = await rt.registry.unbind(ask.thread) if ask.thread is not None else []
    what = ", ".join(f"{kind} {key}" for kind, key in gone)
    rt.say(
        ask.thread, escape(f"Detached from {what}." if gone else "This topic was not bound."), ask.reply_to
    )


@answering
async def status_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Status of this topic's agent, or of the project."""
    rt, _message, ask = asked(update, context)
    named = parse_target("status", words(update)).agent
    agent = await rt.agent_for(ask.thread, named) if named else await rt.agent_of_topic(ask.thread)
    if agent is not None:
        await actions.status(ask, agent)
        return
    project = await rt.project_for(ask.thread)
    counts = await rt.blocking(rt.tasks.counts, project)
    agents = [a for a in await rt.blocking(rt.agents.all) if a.project == project]
    loop = await rt.auto_state(project)
    workers = sorted(cast(set[str], await rt.client.smembers(rt.keys.workers)))
    live = [w for w in workers if await rt.worker_alive(w)]
    lines = [
        f"<b>{escape(project)}</b>",
        "Tasks: " + (", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"),
        "Agents: " + (", ".join(f"{escape(a.id)} ({escape(a.state)})" for a in agents) or "none"),
        "Auto mode: " + (escape(auto_line(loop.as_dict())) if loop else "off"),
        "Workers running: " + (escape(", ".join(live)) or "none"),
    ]
    rt.say(ask.thread, "\n".join(lines), ask.reply_to)


TOPIC_HANDLERS = (
    CommandHandler(("help", "start"), help_command),
    CommandHandler("project", project_command),
    CommandHandler("unbind", unbind_command),
    CommandHandler("status", status_command),
)
