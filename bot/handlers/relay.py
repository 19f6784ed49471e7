"""What people type and tap reaching agents: text in an agent's topic goes to that agent (`send`), a
reply to a question or a tap on one of its options answers it (`answer`), and the buttons of a finished
agent run diff, merge, kill and look. Every outcome is told: a 👍 when delivered, else why not.

When the agent's worker is down the text is queued on its command stream and the person is told so.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Message, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.errors import BotError
from bot.feeds.consumer import QUESTIONS
from bot.handlers import actions
from bot.handlers.actions import Ask
from bot.handlers.command_context import answering, sender_of, thread_of
from bot.handlers.plan_handlers import PLAN_TAPS, send_changes
from bot.render.callbacks import DIALOG_ACTIONS, Action, Callback, parse_callback
from bot.render.plan_render import ANCHOR_PREFIX
from bot.render.render import escape
from bot.render.review_render import Shown, comment_of, noted, requested
from bot.review import approval
from bot.review.review import replied_picture, stale_note
from bot.runtime import BotRuntime, runtime
from bus.commands.worker_commands import Answer, Approve, Command, Deny, Send
from bus.commands.worker_rpc import CommandFailed
from bus.commands.workers import describe_age, seen_ago_ms
from bus.errors import BusError, BusUnavailable, DialogOpen
from bus.inbox.review_comments import ReviewComments
from bus.inbox.review_prompt import changes_prompt
from bus.stores.agent_store import Agent

log = logging.getLogger(__name__)

DELIVERED = "👍"


async def _confirm(ask: Ask, message_id: int | None, note: str) -> None:
    """A reaction on the person's message; a short reply when reactions are refused."""
    if message_id is not None:
        try:
            await ask.rt.forum.react(message_id, DELIVERED)
            return
        except TelegramError as e:
            log.info("reaction refused (%s): replying instead", e)
    ask.rt.say(ask.thread, escape(note), message_id)


async def _to_worker(ask: Ask, agent: Agent, command: Command, message_id: int | None) -> None:
    """Run `command` on the agent's worker; if the worker is down, queue it and say so. Nothing is lost."""
    if not agent.worker:
        raise BotError(f"{agent.id} has no worker on record, so nothing could be sent")
    if await ask.rt.worker_alive(agent.worker):
        try:
            await ask.rt.command(agent.worker, command, ask.sender)
        except CommandFailed as e:
            if e.reason != DialogOpen.reason:
                raise
            said = f"⚠ {agent.id} shows a dialog, so nothing was typed: answer it with its buttons above"
            ask.rt.say(ask.thread, escape(said), message_id)
            return
        except BusUnavailable as e:
            if "did not answer" not in str(e):  # not yet submitted: it died just now
                raise
            ask.rt.say(ask.thread, escape(f"⚠ {e}. It stays queued for the worker."), message_id)
            return
        await _confirm(ask, message_id, f"✓ sent to {agent.id}")
        return
    await ask.rt.queue_command(agent.worker, command, ask.sender)
    log.info("worker %s down: %s for %s queued", agent.worker, command.op, agent.id)
    ago = await ask.rt.blocking(seen_ago_ms, ask.rt.sync, ask.rt.keys, agent.worker)
    seen = f" (last seen {describe_age(ago)} ago)" if ago is not None else ""
    ask.rt.say(
        ask.thread,
        escape(
            f"⚠ Worker {agent.worker} is not running{seen}, so {agent.id} has not got this yet. It is "
            "queued and will be delivered when the worker is back (start it with `ib worker`)."
        ),
        message_id,
    )


async def answer_question(ask: Ask, question_id: str, text: str, message_id: int | None) -> None:
    """Send the answer to the agent that asked; the worker acknowledges the question."""
    question = await ask.rt.find_question(question_id)
    if question is None:
        raise BotError("that question was already answered; nothing was sent")
    agent = await ask.rt.find_agent(question.agent)
    if agent is None:
        raise BotError(f"{question.agent}, who asked, is gone; the answer was not sent")
    await _to_worker(ask, agent, Answer(question=question.id, text=text), message_id)


async def _question_replied(rt: BotRuntime, message: Message) -> tuple[str, int] | None:
    """(question id, question message id) when `message` replies to a question the bot showed."""
    replied = message.reply_to_message
    if replied is None:
        return None
    found = await rt.client.hget(rt.keys.topics(QUESTIONS), str(replied.message_id))
    return (str(found), replied.message_id) if found else None


async def _answered(rt: BotRuntime, question_message: int) -> None:
    """The question is answered: its buttons go. Its message stays known as a question, so a second
    reply to it is told it was answered instead of going to the agent as new text."""
    await rt.sender.drop_buttons(question_message)


@answering
async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Typed text: the answer to a question it replies to, else a message for the topic's agent."""
    message = update.effective_message
    if message is None or not message.text:
        return
    rt = runtime(context)
    ask = Ask(rt, thread_of(message), message.message_id, sender_of(update))
    shown = await replied_picture(rt, message)
    if shown is not None:
        await _comment(ask, shown, message.text, message.message_id)
        return
    replied = await _question_replied(rt, message)
    if replied is not None and replied[0].startswith(ANCHOR_PREFIX):
        await send_changes(ask, replied[0].removeprefix(ANCHOR_PREFIX), message.text)
        return
    if replied is not None:
        question_id, question_message = replied
        await answer_question(ask, question_id, message.text, message.message_id)
        await _answered(rt, question_message)
        return
    if ask.thread is None:
        return  # General is for people; nothing typed there goes to an agent
    agent = await rt.agent_of_topic(ask.thread) or await _auto_agent(rt, ask.thread)
    if agent is None:
        if rt.registry.bound_to(ask.thread):
            raise BotError(
                "no agent works in this topic: type in an agent's topic, or start one with /new GOAL"
            )
        return
    await _to_worker(ask, agent, Send(agent=agent.id, text=message.text), message.message_id)


async def _comment(ask: Ask, shown: Shown, text: str, message_id: int | None) -> None:
    """A reply to a /diff picture: a comment on that file and its lines, kept until Request changes; a file
    that changed since the picture was sent is said, and the comment kept about the lines shown."""
    agent = await ask.rt.find_agent(shown.agent)
    if agent is None:
        raise BotError(f"{shown.agent}, whose change that picture shows, is gone; the comment was not sent")
    stale = await stale_note(ask, agent, shown)
    store = ReviewComments(ask.rt.sync, ask.rt.keys)
    waiting = await ask.rt.blocking(store.add, agent.id, comment_of(shown, text, stale))
    log.info("comment on %s of %s kept (%d waiting)", shown.path, agent.id, waiting)
    ask.rt.say(ask.thread, escape(noted(agent.id, waiting, stale)), message_id)


async def request_changes(ask: Ask, agent: Agent) -> None:
    """The comments waiting for the agent's change go to it as one prompt; none waiting is said, and
    nothing is sent. They stay waiting until the worker took the prompt (or queued it, when it is down)."""
    store = ReviewComments(ask.rt.sync, ask.rt.keys)
    comments, read = await ask.rt.blocking(store.waiting, agent.id)
    if not comments:
        raise BotError(
            f"no comments on {agent.id}'s change to send: reply to a file's picture of /diff with what to "
            "change, then press Request changes again. Nothing was sent."
        )
    await _to_worker(ask, agent, Send(agent=agent.id, text=changes_prompt(comments)), ask.reply_to)
    await ask.rt.blocking(store.sent, agent.id, read)
    ask.rt.say(ask.thread, escape(requested(agent.id, len(comments))), ask.reply_to)


async def _auto_agent(rt: BotRuntime, thread: int) -> Agent | None:
    """In a project topic while /auto runs: the agent at work, so what people type guides it."""
    project = next((key for kind, key in rt.registry.bound_to(thread) if kind == "project"), None)
    loop = await rt.auto_state(project) if project else None
    if loop is None or loop.status != "running":
        return None
    busy = loop.merge_agent or loop.task_agent or loop.agent
    return await rt.find_agent(busy) if busy else None


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A tap on a button: an option of a question or a dialog, or diff, merge, kill, look on a finished
    agent."""
    query = update.callback_query
    if query is None:
        return
    rt = runtime(context)
    tapped = parse_callback(query.data or "")
    source = query.message if isinstance(query.message, Message) else None
    thread = thread_of(source) if source is not None else None
    ask = Ask(rt, thread, source.message_id if source else None, sender_of(update))
    if tapped is None:
        log.warning("ignored button with data %r from user %s", query.data, query.from_user.id)
        await query.answer()
        return
    try:
        if tapped.action in PLAN_TAPS:
            await query.answer()
            await PLAN_TAPS[tapped.action](ask, tapped.target)
        elif tapped.action is Action.ANSWER:
            await _tap_option(ask, tapped.target, tapped.option or 0, query.answer)
        elif tapped.action is Action.OPTION:
            await _tap_number(ask, tapped.target, tapped.option or 0, query.answer)
        elif tapped.action in DIALOG_ACTIONS:
            await _tap_dialog(ask, tapped, query.answer)
        else:
            agent = await rt.find_agent(tapped.target)
            if agent is None:
                await query.answer(f"{tapped.target} is gone")
                return
            if tapped.action is Action.APPROVE:  # answered with the change's place in the merge queue
                await approval.approve(ask, agent, query.answer)
                return
            await query.answer()
            await (
                request_changes if tapped.action is Action.REQUEST_CHANGES else actions.BUTTONS[tapped.action]
            )(ask, agent)
    except (BotError, BusError) as e:
        rt.say(thread, escape(f"⚠ {e}"), ask.reply_to)


async def _tap_dialog(ask: Ask, tapped: Callback, answer: Any) -> None:
    """Allow, always allow or deny an agent's dialog, through its worker: only the dialog the button
    belongs to, so a second answer (here or from the CLI) is told it was already answered."""
    agent = await ask.rt.find_agent(tapped.target)
    if agent is None:
        await answer(f"{tapped.target} is gone")
        return
    command: Deny | Approve = (
        Deny(agent=agent.id, prompt=tapped.prompt)
        if tapped.action is Action.DENY
        else Approve(agent=agent.id, prompt=tapped.prompt, always=tapped.action is Action.ALWAYS)
    )
    try:
        done = await ask.rt.command(agent.worker, command, ask.sender)
    except BusError as e:
        await answer(str(e)[:200])
        raise
    await answer(str(done)[:200])
    ask.rt.say(ask.thread, escape(f"✓ {done}"), ask.reply_to)
    if ask.reply_to is not None:
        await ask.rt.sender.drop_buttons(ask.reply_to)


async def _tap_option(ask: Ask, question_id: str, option: int, answer: Any) -> None:
    question = await ask.rt.find_question(question_id)
    if question is None or option >= len(question.options):
        await answer("This question was already answered")
        return
    await answer(f"Answer: {question.options[option]}"[:200])
    await answer_question(ask, question.id, question.options[option], ask.reply_to)
    if ask.reply_to is not None:
        await _answered(ask.rt, ask.reply_to)


async def _tap_number(ask: Ask, question_id: str, number: int, answer: Any) -> None:
    """An option of a dialog: its number goes to the dialog's question (the worker picks the option, or
    says the dialog was answered or has closed)."""
    question = await ask.rt.find_question(question_id)
    if question is None:
        await answer("This dialog was already answered (or has closed)")
        return
    labels = question.options  # in the dialog's order, as drawn: option n is the n-th
    await answer(f"Answer: {labels[number - 1] if 0 < number <= len(labels) else number}"[:200])
    await answer_question(ask, question_id, str(number), ask.reply_to)
    if ask.reply_to is not None:
        await _answered(ask.rt, ask.reply_to)
