"""The scheduled-task commands: /schedules, /schedule CRON TITLE, /unschedule ID (as `ib task schedule`).

Schedules live on the bus (bus/tasks/schedules.py); the workers fire them, so the bot only reads and writes
the store, in a thread.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.errors import CommandUsage
from bot.handlers.chat_commands import parse_schedule, rest_of
from bot.handlers.command_context import answering, asked, words
from bot.render.render import escape
from bus.tasks.schedules import TaskTemplate
from bus.wire.ids import validate_id


@answering
async def schedules_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List the scheduled tasks (of this topic's project)."""
    rt, _message, ask = asked(update, context)
    project = await rt.project_of_topic(ask.thread)
    found = [s for s in await rt.blocking(rt.schedules.list) if project is None or s.task.project == project]
    if not found:
        where = f" for {project}" if project else ""
        rt.say(ask.thread, escape(f"No schedules{where}: add one with /schedule CRON TITLE"), ask.reply_to)
        return
    rt.say(ask.thread, "\n".join(escape(s.line()) for s in found), ask.reply_to)


@answering
async def schedule_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Add a scheduled task to the project: /schedule CRON TITLE [-p N]."""
    rt, message, ask = asked(update, context)
    project = await rt.project_for(ask.thread)
    new = parse_schedule(message.text or "")
    template = TaskTemplate(title=new.task.title, project=project, priority=new.task.priority)
    schedule = await rt.blocking(rt.schedules.add, new.cron, template)
    rt.say(ask.thread, escape(f"+ {schedule.line()}"), ask.reply_to)


@answering
async def unschedule_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Delete a schedule: /unschedule ID."""
    rt, message, ask = asked(update, context)
    args = words(update)
    if len(args) != 1:
        raise CommandUsage("usage: /unschedule ID — see the ids with /schedules")
    schedule_id = validate_id("schedule", rest_of(message.text or ""))
    await rt.blocking(rt.schedules.delete, schedule_id)
    rt.say(ask.thread, escape(f"✗ deleted {schedule_id}; the tasks it added stay"), ask.reply_to)


SCHEDULE_HANDLERS = (
    CommandHandler("schedules", schedules_command),
    CommandHandler("schedule", schedule_command),
    CommandHandler("unschedule", unschedule_command),
)
