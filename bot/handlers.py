"""The bot's commands, one async function each. They run only for allowed people in the configured chat
(`bot.gate` stops everything else first); a mistake or a refusal is answered in the topic.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any, cast

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot import actions
from bot.actions import Ask
from bot.chat_commands import (
    LOOK_LINES,
    help_text,
    parse_add,
    parse_auto_options,
    parse_new,
    parse_project,
    parse_target,
    rest_of,
)
from bot.errors import BotError
from bot.render import escape, shorten
from bot.runtime import BotRuntime, runtime
from bot.topics import TopicInfo
from bus.auto_state import AutoState
from bus.errors import BusError
from bus.task_model import STATUSES
from bus.worker_commands import AutoPause, AutoStart, AutoStop, NewAgent

log = logging.getLogger(__name__)

Handler = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]
AUTO_TIMEOUT = 120.0  # the worker answers /auto once the first task's agent is started
SPAWN_TIMEOUT = 90.0
TASK_ICONS = {"draft": "✎", "pending": "…", "ready": "→", "claimed": "⚙", "done": "✓", "failed": "✗"}


def thread_of(message: Message) -> int | None:
    """The topic a message is in; None for General (whose messages carry no thread id)."""
    return message.message_thread_id if message.is_topic_message else None


def sender_of(update: Update) -> str:
    user = update.effective_user
    return f"telegram:{user.id}" if user is not None else "telegram"


def words(update: Update) -> list[str]:
    """What follows the command, split on spaces."""
    message = update.effective_message
    return rest_of(message.text or "").split() if message is not None else []


def _ask(update: Update, context: ContextTypes.DEFAULT_TYPE) -> tuple[BotRuntime, Message, Ask]:
    message = update.effective_message
    if message is None:
        raise BotError("a command without a message")
    rt = runtime(context)
    return rt, message, Ask(rt, thread_of(message), message.message_id, sender_of(update))


def answering(handler: Handler) -> Handler:
    """Say a person's mistake, or why the bus refused, in the topic instead of failing silently."""

    @functools.wraps(handler)
    async def run(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        where = thread_of(message) if message is not None else None
        log.info("%s from %s in topic %s", handler.__name__, sender_of(update), where)
        try:
            await handler(update, context)
        except (BotError, BusError) as e:
            message = update.effective_message
            log.info("%s: %s", handler.__name__, e)
            if message is not None:
                runtime(context).say(thread_of(message), escape(f"⚠ {e}"), message.message_id)

    return run


@answering
async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the commands."""
    rt, _message, ask = _ask(update, context)
    rt.say(ask.thread, escape(help_text()), ask.reply_to)


@answering
async def project_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Make this topic the project's topic: /project NAME."""
    rt, message, ask = _ask(update, context)
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
    rt, _message, ask = _ask(update, context)
    gone = await rt.registry.unbind(ask.thread) if ask.thread is not None else []
    what = ", ".join(f"{kind} {key}" for kind, key in gone)
    rt.say(
        ask.thread, escape(f"Detached from {what}." if gone else "This topic was not bound."), ask.reply_to
    )


@answering
async def agents_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List the agents (of this topic's project)."""
    rt, _message, ask = _ask(update, context)
    project = await rt.project_of_topic(ask.thread)
    agents = [a for a in await rt.blocking(rt.agents.all) if project is None or a.project == project]
    if not agents:
        rt.say(ask.thread, escape(f"No agents{' in ' + project if project else ''}."), ask.reply_to)
        return
    lines = [
        f"<b>{escape(a.id)}</b> · {escape(a.state)}"
        + (f" · task {escape(a.task)}" if a.task else "")
        + f" · {escape(a.worker)}\n  {escape(shorten(a.goal, 80))}"
        for a in agents
    ]
    rt.say(ask.thread, "\n".join(lines), ask.reply_to)


@answering
async def tasks_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the project's task queue."""
    rt, _message, ask = _ask(update, context)
    project = await rt.project_for(ask.thread)
    tasks = await rt.blocking(rt.tasks.list, project)
    counts = {status: sum(1 for t in tasks if t.status == status) for status in STATUSES}
    head = (
        f"<b>{escape(project)}</b>: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) if tasks else ""
    )
    lines = [
        f"{TASK_ICONS.get(t.status, '•')} {escape(t.id)} (p{t.priority}) {escape(shorten(t.title, 80))}"
        + (f" — {escape(t.claimed_by)}" if t.status == "claimed" and t.claimed_by else "")
        for t in tasks
    ]
    text = "\n".join([head, *lines]) if tasks else escape(f"No tasks in {project}: add one with /add TITLE")
    rt.say(ask.thread, text, ask.reply_to)


@answering
async def add_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Add a task to the project: /add TITLE [-p PRIORITY]."""
    rt, message, ask = _ask(update, context)
    project = await rt.project_for(ask.thread)
    new = parse_add(message.text or "")
    task = await rt.blocking(rt.tasks.add, new.title, project=project, priority=new.priority)
    rt.say(ask.thread, escape(f"+ {task.id} added (priority {task.priority}, {task.status})"), ask.reply_to)


@answering
async def new_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Start an agent on a goal in this project: /new GOAL."""
    rt, message, ask = _ask(update, context)
    wanted = parse_new(message.text or "")
    project = await rt.project_of_topic(ask.thread)
    worker = wanted.on or await rt.default_worker()
    spawn = NewAgent(goal=wanted.goal, project=project)
    made = await rt.command(worker, spawn, ask.sender, timeout=SPAWN_TIMEOUT)
    agent = str(cast(dict[str, Any], made).get("id") if isinstance(made, dict) else made)
    rt.say(
        ask.thread,
        escape(f"→ {agent} started on {worker}; its topic opens with its first news."),
        ask.reply_to,
    )


@answering
async def auto_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Work through the project's ready tasks: /auto [--worktrees]."""
    rt, _message, ask = _ask(update, context)
    options = parse_auto_options(words(update))
    project = await rt.project_for(ask.thread)
    worker = options.on or await rt.default_worker()
    start = AutoStart(project=project, worktrees=options.worktrees)
    answer = await rt.command(worker, start, ask.sender, timeout=AUTO_TIMEOUT)
    rt.say(ask.thread, escape(f"Auto mode on {worker}: {_auto_line(answer)}"), ask.reply_to)


@answering
async def stop_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Stop auto mode; the current task stays claimed."""
    rt, _message, ask = _ask(update, context)
    project = await rt.project_for(ask.thread)
    loop = await rt.auto_state(project)
    if loop is None:
        raise BotError(f"no auto loop runs for {project}; start one with /auto")
    answer = await rt.command(loop.worker, AutoStop(project=project), ask.sender, timeout=AUTO_TIMEOUT)
    rt.say(ask.thread, escape(f"Auto mode: {_auto_line(answer)}"), ask.reply_to)


@answering
async def esc_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Press Escape in this topic's agent (in the project topic: interrupt and pause auto mode)."""
    rt, _message, ask = _ask(update, context)
    named = parse_target("esc", words(update)).agent
    agent = await rt.agent_for(ask.thread, named) if named else await rt.agent_of_topic(ask.thread)
    if agent is not None:
        await actions.press_escape(ask, agent)
        return
    project = await rt.project_for(ask.thread)
    loop = await rt.auto_state(project)
    if loop is None or loop.status != "running":
        raise BotError("no agent in this topic and no auto loop running: nothing to interrupt")
    pause = AutoPause(project=project, interrupt=True, reason="interrupted from Telegram")
    answer = await rt.command(loop.worker, pause, ask.sender, timeout=AUTO_TIMEOUT)
    rt.say(ask.thread, escape(f"Auto mode: {_auto_line(answer)}"), ask.reply_to)


def _auto_line(answer: object) -> str:
    """What a worker's answer about an auto loop says: its status, phase and count of tasks done."""
    if not isinstance(answer, dict):
        return str(answer or "asked")
    loop = AutoState.from_dict({str(k): v for k, v in answer.items()}, source="the worker's answer")
    task = f"; task {loop.task}" if loop.task else ""
    reason = f" ({loop.reason})" if loop.reason else ""
    return f"{loop.status}, {loop.phase}{reason} — {loop.summary}{task}"


@answering
async def look_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the agent's screen: /look [AGENT] [LINES]."""
    rt, _message, ask = _ask(update, context)
    target = parse_target("look", words(update), with_lines=True)
    agent = await rt.agent_for(ask.thread, target.agent)
    await actions.look(ask, agent, target.lines or LOOK_LINES)


@answering
async def shot_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A picture of the agent's screen, in colour: /shot [AGENT]."""
    rt, _message, ask = _ask(update, context)
    await actions.screenshot(ask, await rt.agent_for(ask.thread, parse_target("shot", words(update)).agent))


@answering
async def diff_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the agent's changes: /diff [AGENT]."""
    rt, _message, ask = _ask(update, context)
    await actions.diff(ask, await rt.agent_for(ask.thread, parse_target("diff", words(update)).agent))


@answering
async def merge_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Merge the agent's branch: /merge [AGENT]."""
    rt, _message, ask = _ask(update, context)
    await actions.merge(ask, await rt.agent_for(ask.thread, parse_target("merge", words(update)).agent))


@answering
async def kill_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Kill the agent: /kill [AGENT]."""
    rt, _message, ask = _ask(update, context)
    await actions.kill(ask, await rt.agent_for(ask.thread, parse_target("kill", words(update)).agent))


@answering
async def status_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Status of this topic's agent, or of the project."""
    rt, _message, ask = _ask(update, context)
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
        "Auto mode: " + (escape(_auto_line(loop.as_dict())) if loop else "off"),
        "Workers running: " + (escape(", ".join(live)) or "none"),
    ]
    rt.say(ask.thread, "\n".join(lines), ask.reply_to)


COMMAND_HANDLERS: dict[str, Handler] = {
    "help": help_command,
    "start": help_command,
    "project": project_command,
    "unbind": unbind_command,
    "agents": agents_command,
    "tasks": tasks_command,
    "add": add_command,
    "new": new_command,
    "auto": auto_command,
    "stop": stop_command,
    "esc": esc_command,
    "look": look_command,
    "shot": shot_command,
    "diff": diff_command,
    "merge": merge_command,
    "kill": kill_command,
    "status": status_command,
}
