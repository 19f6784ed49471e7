"""Commands on one agent and on questions that the CLI has and handlers.py does not: /pause, /resume,
/send AGENT TEXT (from any topic), and /questions (the pending ones, answered by a reply or a button).
"""

from __future__ import annotations

import time

from telegram import Update
from telegram.ext import ContextTypes

from bot.chat_commands import parse_target, rest_of
from bot.errors import CommandUsage
from bot.handlers import Handler, _ask, answering, words
from bot.render import escape, shorten
from bus.ids import validate_id
from bus.questions import QuestionStore
from bus.worker_commands import Pause, Resume, Send


@answering
async def pause_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Interrupt the agent and leave it waiting: /pause [AGENT]."""
    await _on_agent(update, context, "pause", Pause, "⏸ paused")


@answering
async def resume_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Let a paused agent go on, or restart a stopped one with its conversation: /resume [AGENT]."""
    await _on_agent(update, context, "resume", Resume, "▶ resumed")


async def _on_agent(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    verb: str,
    command: type[Pause] | type[Resume],
    done: str,
) -> None:
    """Run `command` on the agent the message names (or its topic's), then say `done AGENT`."""
    rt, _message, ask = _ask(update, context)
    agent = await rt.agent_for(ask.thread, parse_target(verb, words(update)).agent)
    await rt.command(agent.worker, command(agent=agent.id), ask.sender)
    rt.say(ask.thread, escape(f"{done} {agent.id}"), ask.reply_to)


@answering
async def send_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Type text into a named agent from any topic: /send AGENT TEXT."""
    rt, message, ask = _ask(update, context)
    name, _, text = rest_of(message.text or "").partition(" ")
    if not name or not text.strip():
        raise CommandUsage("usage: /send AGENT TEXT — e.g. /send agent-1 run the tests again")
    agent = await rt.agent_for(ask.thread, validate_id("agent", name))
    await rt.command(agent.worker, Send(agent=agent.id, text=text.strip()), ask.sender)
    rt.say(ask.thread, escape(f"✓ sent to {agent.id}"), ask.reply_to)


@answering
async def questions_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The questions agents asked that nobody answered yet."""
    rt, _message, ask = _ask(update, context)
    pending = await rt.blocking(QuestionStore(rt.sync, rt.keys).pending)
    now = time.time()
    lines = [
        f"{escape(q.id)} · {escape(q.agent)} · {int((now - q.asked_at) // 60)} min ago: "
        + escape(shorten(q.text, 120))
        for q in pending
    ]
    rt.say(ask.thread, "\n".join(lines) or "No pending questions.", ask.reply_to)


AGENT_HANDLERS: dict[str, Handler] = {
    "pause": pause_command,
    "resume": resume_command,
    "send": send_command,
    "questions": questions_command,
}
