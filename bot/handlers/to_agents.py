"""What people type and tap reaching agents: text in an agent's topic goes to that agent (`send`), a
reply to a question or a tap on one of its options answers it (`answer`), and the buttons of a finished
agent run diff, merge, kill and look. Every outcome is told: a 👍 when delivered, else why not.

When the agent's worker is down the text is queued on its command stream and the person is told so.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from telegram import CallbackQuery, Message, Update
from telegram.error import TelegramError
from telegram.ext import CallbackQueryHandler, ContextTypes, MessageHandler, filters

from bot.bot_runtime import BotRuntime, runtime
from bot.errors import BotError
from bot.feeds.consumer import QUESTIONS
from bot.handlers import actions
from bot.handlers.actions import Ask
from bot.handlers.chat_commands import command_of
from bot.handlers.command_context import Handler, answering, on_unknown_tap, sender_of, tapping, thread_of
from bot.handlers.plan_handlers import send_changes
from bot.render.callbacks import Action, Callback, pattern
from bot.render.plan_render import ANCHOR_PREFIX
from bot.render.render import escape
from bot.render.review_render import Shown, comment_of, noted, requested
from bot.review import approval
from bot.review.review import replied_picture, stale_note
from bus.commands.worker_commands import Answer, Approve, Command, Deny, Send
from bus.commands.worker_rpc import CommandFailed
from bus.commands.workers import describe_age, seen_ago_ms
from bus.errors import BusError, BusUnavailable, DialogOpen
from bus.inbox.review_comments import ReviewComments
from bus.inbox.review_prompt import changes_prompt
from bus.stores.agent_store import Agent

log = logging.getLogger(__name__)

DELIVERED = "👍"


class _ToAnotherBot(filters.MessageFilter):
    """A command addressed to another bot (`/look@other_bot`): none of ours, and no text for an agent."""

    def filter(self, message: Message) -> bool:
        text = message.text or ""
        addressed = text.startswith("/") and "@" in text.split()[0]
        return addressed and command_of(text, message.get_bot().username) is None


TO_ANOTHER_BOT = _ToAnotherBot(name="to another bot")


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


async def _agent_tapped(ask: Ask, tapped: Callback, query: CallbackQuery) -> Agent | None:
    """The agent a button names; a gone one is said in the tap's popup."""
    agent = await ask.rt.find_agent(tapped.target)
    if agent is None:
        await query.answer(f"{tapped.target} is gone")
    return agent


def _on_agent(act: Callable[[Ask, Agent], Awaitable[None]]) -> Handler:
    """A button of a finished or paused agent: diff, merge, kill, look, a screenshot, raise, continue."""

    async def tap(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
        if agent := await _agent_tapped(ask, tapped, query):
            await query.answer()
            await act(ask, agent)

    return tapping(tap)


async def _tap_approve(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    """Approve: answered with the change's place in the merge queue."""
    if agent := await _agent_tapped(ask, tapped, query):
        await approval.approve(ask, agent, query.answer)


async def _tap_dialog(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    """Allow, always allow or deny an agent's dialog, through its worker: only the dialog the button
    belongs to, so a second answer (here or from the CLI) is told it was already answered."""
    agent = await _agent_tapped(ask, tapped, query)
    if agent is None:
        return
    command: Deny | Approve = (
        Deny(agent=agent.id, prompt=tapped.prompt)
        if tapped.action is Action.DENY
        else Approve(agent=agent.id, prompt=tapped.prompt, always=tapped.action is Action.ALWAYS)
    )
    try:
        done = await ask.rt.command(agent.worker, command, ask.sender)
    except BusError as e:
        await query.answer(str(e)[:200])
        raise
    await query.answer(str(done)[:200])
    ask.rt.say(ask.thread, escape(f"✓ {done}"), ask.reply_to)
    if ask.reply_to is not None:
        await ask.rt.sender.drop_buttons(ask.reply_to)


async def _tap_option(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    """An answer button of a question: that option's text goes to the agent that asked."""
    question, option = await ask.rt.find_question(tapped.target), tapped.option or 0
    if question is None or option >= len(question.options):
        await query.answer("This question was already answered")
        return
    await query.answer(f"Answer: {question.options[option]}"[:200])
    await answer_question(ask, question.id, question.options[option], ask.reply_to)
    if ask.reply_to is not None:
        await _answered(ask.rt, ask.reply_to)


async def _tap_number(ask: Ask, tapped: Callback, query: CallbackQuery) -> None:
    """An option of a dialog: its number goes to the dialog's question (the worker picks the option, or
    says the dialog was answered or has closed)."""
    question, number = await ask.rt.find_question(tapped.target), tapped.option or 0
    if question is None:
        await query.answer("This dialog was already answered (or has closed)")
        return
    labels = question.options  # in the dialog's order, as drawn: option n is the n-th
    await query.answer(f"Answer: {labels[number - 1] if 0 < number <= len(labels) else number}"[:200])
    await answer_question(ask, question.id, str(number), ask.reply_to)
    if ask.reply_to is not None:
        await _answered(ask.rt, ask.reply_to)


RELAY_HANDLERS = (
    CallbackQueryHandler(_on_agent(actions.diff), pattern(Action.DIFF)),
    CallbackQueryHandler(_on_agent(actions.merge), pattern(Action.MERGE)),
    CallbackQueryHandler(_on_agent(actions.kill), pattern(Action.KILL)),
    CallbackQueryHandler(_on_agent(actions.kill_anyway), pattern(Action.KILL_ANYWAY)),
    CallbackQueryHandler(_on_agent(actions.look), pattern(Action.LOOK)),
    CallbackQueryHandler(_on_agent(actions.screenshot), pattern(Action.SHOT)),
    CallbackQueryHandler(_on_agent(actions.raise_budget), pattern(Action.RAISE)),
    CallbackQueryHandler(_on_agent(actions.go_on), pattern(Action.CONTINUE)),
    CallbackQueryHandler(_on_agent(request_changes), pattern(Action.REQUEST_CHANGES)),
    CallbackQueryHandler(tapping(_tap_approve), pattern(Action.APPROVE)),
    CallbackQueryHandler(tapping(_tap_option), pattern(Action.ANSWER)),
    CallbackQueryHandler(tapping(_tap_number), pattern(Action.OPTION)),
    CallbackQueryHandler(tapping(_tap_dialog), pattern(Action.ALLOW, Action.ALWAYS, Action.DENY)),
    CallbackQueryHandler(on_unknown_tap),
    MessageHandler(filters.TEXT & ~TO_ANOTHER_BOT, on_text),
)
