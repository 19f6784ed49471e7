"""Commands on agents: /agents (this topic's project's), /new GOAL, /look, /shot, /diff, /merge, /kill,
/esc (in the project topic: interrupt and pause auto mode), /pause, /resume, /send AGENT TEXT (from any
topic), and /questions (the pending ones, answered by a reply or a button). One async function each.
"""

from __future__ import annotations

import time
from typing import Any, cast

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.errors import BotError, CommandUsage
from bot.handlers import actions
from bot.handlers.chat_commands import LOOK_LINES, parse_new, parse_target, rest_of
from bot.handlers.command_context import answering, asked, words
from bot.handlers.task_handlers import AUTO_TIMEOUT, auto_line
from bot.render.render import escape, shorten
from bus.commands.worker_commands import AutoPause, NewAgent, Pause, Resume, Send
from bus.inbox.questions import QuestionStore
from bus.wire.ids import validate_id

SPAWN_TIMEOUT = 90.0


@answering
async def agents_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List the agents (of this topic's project)."""
    rt, _message, ask = asked(update, context)
    project = await rt.project_of_topic(ask.thread)
    agents = [a for a in await rt.blocking(rt.agents.all) if project is None or a.project == project]
    if not agents:
        rt.say(ask.thread, escape(f"No agents{' in ' + project if project else ''}."), ask.reply_to)
        return
    lines = [
        f"<b>{escape(a.id)}</b> · {escape(a.state)} · {escape(a.cli)}"
        + (f" · task {escape(a.task)}" if a.task else "")
        + f" · {escape(a.worker)}\n  {escape(shorten(a.goal, 80))}"
        for a in agents
    ]
    rt.say(ask.thread, "\n".join(lines), ask.reply_to)


@answering
async def new_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Start an agent on a goal in this project: /new [--cli claude|codex|gemini] GOAL."""
    rt, message, ask = asked(update, context)
    wanted = parse_new(message.text or "")
    project = await rt.project_of_topic(ask.thread)
    worker = wanted.on or await rt.default_worker()
    spawn = NewAgent(goal=wanted.goal, project=project, cli=wanted.cli)
    made = await rt.command(worker, spawn, ask.sender, timeout=SPAWN_TIMEOUT)
    agent = str(cast(dict[str, Any], made).get("id") if isinstance(made, dict) else made)
    rt.say(
        ask.thread,
        escape(f"→ {agent} started on {worker}; its topic opens with its first news."),
        ask.reply_to,
    )


@answering
async def esc_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Press Escape in this topic's agent (in the project topic: interrupt and pause auto mode)."""
    rt, _message, ask = asked(update, context)
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
    rt.say(ask.thread, escape(f"Auto mode: {auto_line(answer)}"), ask.reply_to)


@answering
async def look_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the agent's screen: /look [AGENT] [LINES]."""
    rt, _message, ask = asked(update, context)
    target = parse_target("look", words(update), with_lines=True)
    agent = await rt.agent_for(ask.thread, target.agent)
    await actions.look(ask, agent, target.lines or LOOK_LINES)


@answering
async def shot_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A picture of the agent's screen, in colour: /shot [AGENT]."""
    rt, _message, ask = asked(update, context)
    await actions.screenshot(ask, await rt.agent_for(ask.thread, parse_target("shot", words(update)).agent))


@answering
async def diff_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the agent's changes: /diff [AGENT]."""
    rt, _message, ask = asked(update, context)
    await actions.diff(ask, await rt.agent_for(ask.thread, parse_target("diff", words(update)).agent))


@answering
async def merge_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Merge the agent's branch: /merge [AGENT]."""
    rt, _message, ask = asked(update, context)
    await actions.merge(ask, await rt.agent_for(ask.thread, parse_target("merge", words(update)).agent))


@answering
async def kill_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Kill the agent: /kill [AGENT]."""
    rt, _message, ask = asked(update, context)
    await actions.kill(ask, await rt.agent_for(ask.thread, parse_target("kill", words(update)).agent))


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
    rt, _message, ask = asked(update, context)
    agent = await rt.agent_for(ask.thread, parse_target(verb, words(update)).agent)
    await rt.command(agent.worker, command(agent=agent.id), ask.sender)
    rt.say(ask.thread, escape(f"{done} {agent.id}"), ask.reply_to)


@answering
async def send_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Type text into a named agent from any topic: /send AGENT TEXT."""
    rt, message, ask = asked(update, context)
    name, _, text = rest_of(message.text or "").partition(" ")
    if not name or not text.strip():
        raise CommandUsage("usage: /send AGENT TEXT — e.g. /send agent-1 run the tests again")
    agent = await rt.agent_for(ask.thread, validate_id("agent", name))
    await rt.command(agent.worker, Send(agent=agent.id, text=text.strip()), ask.sender)
    rt.say(ask.thread, escape(f"✓ sent to {agent.id}"), ask.reply_to)


@answering
async def questions_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The questions agents asked that nobody answered yet."""
    rt, _message, ask = asked(update, context)
    pending = await rt.blocking(QuestionStore(rt.sync, rt.keys).pending)
    now = time.time()
    lines = [
        f"{escape(q.id)} · {escape(q.agent)} · {int((now - q.asked_at) // 60)} min ago: "
        + escape(shorten(q.text, 120))
        for q in pending
    ]
    rt.say(ask.thread, "\n".join(lines) or "No pending questions.", ask.reply_to)


AGENT_HANDLERS = (
    CommandHandler("agents", agents_command),
    CommandHandler("new", new_command),
    CommandHandler("esc", esc_command),
    CommandHandler("look", look_command),
    CommandHandler("shot", shot_command),
    CommandHandler("diff", diff_command),
    CommandHandler("merge", merge_command),
    CommandHandler("kill", kill_command),
    CommandHandler("pause", pause_command),
    CommandHandler("resume", resume_command),
    CommandHandler("send", send_command),
    CommandHandler("questions", questions_command),
)
