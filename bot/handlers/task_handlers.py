"""Commands on a project's tasks and its auto mode: /tasks, /add TITLE, /auto (work through the ready
tasks on a worker), /stop and /merges (the merge queue in merge order). One async function each.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.errors import BotError
from bot.handlers.chat_commands import parse_add, parse_auto_options
from bot.handlers.command_context import answering, asked, words
from bot.render.render import escape, shorten
from bus.commands.worker_commands import AutoStart, AutoStop
from bus.stores.auto_state import AutoState
from bus.tasks.merge_order import Placed
from bus.tasks.merges import MergeStore
from bus.tasks.task_model import STATUSES

AUTO_TIMEOUT = 120.0  # the worker answers /auto once the first task's agent is started
TASK_ICONS = {"draft": "✎", "pending": "…", "ready": "→", "claimed": "⚙", "done": "✓", "failed": "✗"}


@answering
async def tasks_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the project's task queue."""
    rt, _message, ask = asked(update, context)
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
    rt, message, ask = asked(update, context)
    project = await rt.project_for(ask.thread)
    new = parse_add(message.text or "")
    task = await rt.blocking(rt.tasks.add, new.title, project=project, priority=new.priority)
    rt.say(ask.thread, escape(f"+ {task.id} added (priority {task.priority}, {task.status})"), ask.reply_to)


@answering
async def auto_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Work through the project's ready tasks: /auto [--worktrees]."""
    rt, _message, ask = asked(update, context)
    options = parse_auto_options(words(update))
    project = await rt.project_for(ask.thread)
    worker = options.on or await rt.default_worker()
    start = AutoStart(project=project, worktrees=options.worktrees)
    answer = await rt.command(worker, start, ask.sender, timeout=AUTO_TIMEOUT)
    rt.say(ask.thread, escape(f"Auto mode on {worker}: {auto_line(answer)}"), ask.reply_to)


@answering
async def stop_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Stop auto mode; the current task stays claimed."""
    rt, _message, ask = asked(update, context)
    project = await rt.project_for(ask.thread)
    loop = await rt.auto_state(project)
    if loop is None:
        raise BotError(f"no auto loop runs for {project}; start one with /auto")
    answer = await rt.command(loop.worker, AutoStop(project=project), ask.sender, timeout=AUTO_TIMEOUT)
    rt.say(ask.thread, escape(f"Auto mode: {auto_line(answer)}"), ask.reply_to)


@answering
async def merges_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the project's merge queue in merge order, and why a smaller change goes first."""
    rt, _message, ask = asked(update, context)
    project = await rt.project_for(ask.thread)
    order = await rt.blocking(MergeStore(rt.sync, rt.keys, rt.events_maxlen).ordered, project)
    rt.say(ask.thread, merge_queue_text(project, order), ask.reply_to)


def merge_queue_text(project: str, order: list[Placed]) -> str:
    """The merge queue as a message (HTML): next first, each request's size, and why one jumped ahead."""
    if not order:
        return escape(f"The merge queue of {project} is empty.")
    lines = [f"<b>{escape(project)}</b>: {len(order)} in the merge queue"]
    for n, place in enumerate(order, 1):
        req = place.request
        size = f"{req.size} lines" if req.changed else "size unknown"
        lines.append(escape(f"{n}. {req.agent} ({req.branch} → {req.target}, {req.status}, {size})"))
        if place.reason:
            lines.append(escape(f"   ↑ {place.reason}"))
    return "\n".join(lines)


def auto_line(answer: object) -> str:
    """What a worker's answer about an auto loop says: its status, phase and count of tasks done."""
    if not isinstance(answer, dict):
        return str(answer or "asked")
    loop = AutoState.from_dict({str(k): v for k, v in answer.items()}, source="the worker's answer")
    task = f"; task {loop.task}" if loop.task else ""
    reason = f" ({loop.reason})" if loop.reason else ""
    return f"{loop.status}, {loop.phase}{reason} — {loop.summary}{task}"


TASK_HANDLERS = (
    CommandHandler("tasks", tasks_command),
    CommandHandler("add", add_command),
    CommandHandler("auto", auto_command),
    CommandHandler("stop", stop_command),
    CommandHandler("merges", merges_command),
)
