"""Plans from Telegram: /plan GOAL starts a planner on this project's worker, /plans lists them, and the
Approve / Edit / Discard buttons (or a reply to the plan) act on one through the worker that owns its
planner. The plan itself shows up as a `plan_ready` or `plan_failed` event in the project topic.
"""

from __future__ import annotations

from typing import Any

from telegram import CallbackQuery, Update
from telegram.ext import CallbackQueryHandler, CommandHandler, ContextTypes

from bot.errors import BotError, CommandUsage
from bot.handlers.actions import Ask
from bot.handlers.chat_commands import rest_of
from bot.handlers.command_context import answering, asked, tapping
from bot.render.callbacks import Action, Callback, pattern
from bot.render.render import escape, shorten
from bus.commands.worker_commands import PlanApprove, PlanDiscard, PlanEdit, PlanStart
from bus.tasks.plan_store import PlanDraft, PlanStore

PLAN_TIMEOUT = 90.0  # the worker answers once the planner agent is started


@answering
async def plan_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Ask a planner agent for a task graph for this project: /plan GOAL."""
    rt, message, ask = asked(update, context)
    goal = rest_of(message.text or "")
    if not goal:
        raise CommandUsage("usage: /plan GOAL — e.g. /plan Add rate limiting to the login endpoint")
    project = await rt.project_for(ask.thread)
    worker = await rt.default_worker()
    started = await rt.command(
        worker, PlanStart(goal=goal, project=project), ask.sender, timeout=PLAN_TIMEOUT
    )
    info: dict[str, Any] = started if isinstance(started, dict) else {}
    rt.say(
        ask.thread,
        escape(f"🗺 {info.get('id')}: planner {info.get('agent')} is at work; the plan shows here when done"),
        ask.reply_to,
    )


@answering
async def plans_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List the plans (of this topic's project)."""
    rt, _message, ask = asked(update, context)
    project = await rt.project_of_topic(ask.thread)
    found = [d for d in await rt.blocking(PlanStore(rt.sync, rt.keys).list) if project in (None, d.project)]
    lines = [f"{escape(d.id)} · {escape(d.status)} · {escape(shorten(d.goal, 80))}" for d in found]
    rt.say(ask.thread, "\n".join(lines) or escape("No plans: start one with /plan GOAL"), ask.reply_to)


async def _draft(ask: Ask, plan_id: str) -> PlanDraft:
    return await ask.rt.blocking(PlanStore(ask.rt.sync, ask.rt.keys).get, plan_id)


async def approve(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    await query.answer()
    draft = await _draft(ask, tapped.target)
    await ask.rt.command(draft.worker, PlanApprove(plan=draft.id), ask.sender)


async def discard(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    await query.answer()
    draft = await _draft(ask, tapped.target)
    await ask.rt.command(draft.worker, PlanDiscard(plan=draft.id), ask.sender)


async def ask_for_changes(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    await query.answer()
    draft = await _draft(ask, tapped.target)
    if draft.status not in ("ready", "failed"):
        raise BotError(f"{draft.id} is {draft.status}: only a ready or failed plan can be edited")
    ask.rt.say(ask.thread, escape(f"✎ Reply to the plan message of {draft.id} with the changes you want."))


async def send_changes(ask: Ask, plan_id: str, changes: str) -> None:
    """A reply to a plan: the changes go to its planner, which writes a new plan."""
    draft = await _draft(ask, plan_id)
    await ask.rt.command(draft.worker, PlanEdit(plan=plan_id, changes=changes), ask.sender)
    ask.rt.say(ask.thread, escape(f"✎ sent to {draft.agent}; the new plan shows here"), ask.reply_to)


PLAN_HANDLERS = (
    CommandHandler("plan", plan_command),
    CommandHandler("plans", plans_command),
    CallbackQueryHandler(tapping(approve), pattern(Action.PLAN_APPROVE)),
    CallbackQueryHandler(tapping(ask_for_changes), pattern(Action.PLAN_EDIT)),
    CallbackQueryHandler(tapping(discard), pattern(Action.PLAN_DISCARD)),
)
