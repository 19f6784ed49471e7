"""What people do to an agent from Telegram, by command or by button: look, diff, merge, kill, Escape,
status. Each asks the agent's worker over the bus and answers in the topic; errors are the caller's.
Raise and Continue (an agent a budget or the runaway watchdog paused) change the budget's records on the
bus and lift the pause, so the agent's next tool call goes through.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from telegram.error import TelegramError

from bot.bot_runtime import BotRuntime
from bot.errors import BotError
from bot.handlers.chat_commands import LOOK_LINES
from bot.render.callbacks import Action, Callback
from bot.render.render import Button, escape
from bot.review import review
from bus.commands.worker_commands import Kill, Look, Merge, PressKeys, Send, Status, TakeScreenshot
from bus.commands.worker_rpc import CommandFailed
from bus.costs.budgets import CONTINUE_NOTE, TURN_OVER, raised_note
from bus.errors import BusError, UnmergedWork
from bus.stores import budget_store
from bus.stores.agent_store import Agent

MERGE_TIMEOUT = 120.0


@dataclass(frozen=True)
class Ask:
    """Who asks, where the answer goes, and which message it answers."""

    rt: BotRuntime
    thread: int | None
    reply_to: int | None
    sender: str


def _pre(text: str, language: str = "") -> str:
    opener = f'<pre><code class="language-{language}">' if language else "<pre>"
    closer = "</code></pre>" if language else "</pre>"
    return f"{opener}{escape(text)}{closer}"


async def look(ask: Ask, agent: Agent, lines: int = LOOK_LINES) -> None:
    screen = str(await ask.rt.command(agent.worker, Look(agent=agent.id, lines=lines), ask.sender))
    body = screen.rstrip() or "(the screen is empty)"
    ask.rt.say(ask.thread, f"<b>{escape(agent.id)}</b>\n{_pre(body)}", ask.reply_to)


async def screenshot(ask: Ask, agent: Agent) -> None:
    """A picture of the agent's terminal, taken by its worker (the bot never touches tmux)."""
    answer = await ask.rt.command(agent.worker, TakeScreenshot(agent=agent.id), ask.sender)
    try:
        png = base64.b64decode(str(answer["png"]) if isinstance(answer, dict) else "", validate=True)
        if not png:
            raise ValueError("empty")
    except (KeyError, ValueError, binascii.Error) as e:
        raise BotError(f"{agent.worker} sent no picture of {agent.id}") from e
    caption = f"<b>{escape(agent.id)}</b> · {answer.get('width')}×{answer.get('height')}"
    ask.rt.send_file(ask.thread, f"{agent.id}.png", png, caption, photo=True, reply_to=ask.reply_to)


async def diff(ask: Ask, agent: Agent) -> None:
    """The agent's change as a file list and a picture per file (bot.review.review)."""
    await review.diff(ask, agent)


async def merge(ask: Ask, agent: Agent) -> None:
    """One message, as for Kill: the merge's and the teardown's events of the agent fold into it (the
    merge was told three times in the agent's topic: the answer, `merged` and `stopped`). The merge goes
    on beside the handlers, which take updates one at a time: a merge may take minutes (its checks, a
    busy queue), and every tap and message of the chat waited behind it."""
    notes = ask.rt.notes
    try:
        await notes.open(agent.id, ask.thread, ask.reply_to, escape(f"⇢ Merging {agent.id}…"))
    except TelegramError:  # shown the usual way, after the merge
        ask.rt.in_background(_merge_said(ask, agent), f"merge-{agent.id}")
        return
    ask.rt.in_background(_merge_noted(ask, agent), f"merge-{agent.id}")


async def _merge_said(ask: Ask, agent: Agent) -> None:
    try:
        said = await _merged(ask, agent)
    except (BotError, BusError) as e:
        said = f"⚠ {e}"
    ask.rt.say(ask.thread, escape(said), ask.reply_to)


async def _merge_noted(ask: Ask, agent: Agent) -> None:
    notes = ask.rt.notes
    try:
        said = await _merged(ask, agent)
    except Exception as e:  # said as a handler's refusal is (bot.handlers.command_context.answering)
        await notes.close(agent.id, escape(f"⇢ Merging {agent.id}… not done (the reason follows)"))
        ask.rt.say(ask.thread, escape(f"⚠ {e}"), ask.reply_to)
        if not isinstance(e, BotError | BusError):
            raise  # a bug: logged with its traceback too
        return
    await notes.close(agent.id, escape(said))


async def _merged(ask: Ask, agent: Agent) -> str:
    done: Any = await ask.rt.command(agent.worker, Merge(agent=agent.id), ask.sender, timeout=MERGE_TIMEOUT)
    info = done if isinstance(done, dict) else {}
    target, sha = str(info.get("target") or "?"), str(info.get("sha") or "")[:7]
    return f"✓ Merged {agent.id} → {target}" + (f" ({sha})" if sha else "")


async def kill(ask: Ask, agent: Agent, force: bool = False) -> None:
    """One message, edited as the teardown goes (bot.delivery.teardown_note); the agent's events fold into
    it. An agent holding work nobody merged is not stopped: the person is asked whether to throw that work
    away."""
    notes = ask.rt.notes
    try:
        await notes.open(agent.id, ask.thread, ask.reply_to, escape(f"✗ Killing {agent.id}…"))
    except TelegramError:  # shown the usual way, after the kill
        await ask.rt.command(agent.worker, Kill(agent=agent.id, force=force), ask.sender)
        ask.rt.say(ask.thread, escape(f"✗ Killed {agent.id}"), ask.reply_to)
        return
    try:
        await ask.rt.command(agent.worker, Kill(agent=agent.id, force=force), ask.sender)
    except CommandFailed as e:
        if e.reason != UnmergedWork.reason:
            await notes.close(agent.id, escape(f"✗ Killing {agent.id}… not done (the reason follows)"))
            raise
        await notes.close(agent.id, escape(f"✗ Killing {agent.id}… not done: its work is not merged"))
        confirm, diff = (Callback(a, agent.id).encode() for a in (Action.KILL_ANYWAY, Action.DIFF))
        buttons = ((Button("Stop anyway", confirm), Button("Diff", diff)),) if confirm and diff else ()
        question = f"⚠ {e}\nStop it anyway and throw that work away?"
        ask.rt.say(ask.thread, escape(question), ask.reply_to, buttons)
        return
    except Exception:
        await notes.close(agent.id, escape(f"✗ Killing {agent.id}… not done (the reason follows)"))
        raise
    await notes.close(agent.id, escape(f"✗ Killed {agent.id}"))


async def kill_anyway(ask: Ask, agent: Agent) -> None:
    """The person confirmed: stop the agent and throw away the work nobody merged."""
    if ask.reply_to is not None:
        await ask.rt.sender.drop_buttons(ask.reply_to)
    await kill(ask, agent, force=True)


async def press_escape(ask: Ask, agent: Agent) -> None:
    await ask.rt.command(agent.worker, PressKeys(agent=agent.id, keys=("Escape",)), ask.sender)
    ask.rt.say(ask.thread, escape(f"Escape sent to {agent.id}"), ask.reply_to)


async def status(ask: Ask, agent: Agent) -> None:
    text = str(await ask.rt.command(agent.worker, Status(agent=agent.id), ask.sender))
    ask.rt.say(ask.thread, _pre(text.rstrip() or agent.state), ask.reply_to)


async def raise_budget(ask: Ask, agent: Agent) -> None:
    """Raise the budget that paused the agent by its step (what the button says); the pause is lifted
    when the budget is no longer used up, and an agent whose turn ended is told to go on."""
    rt = ask.rt
    raised, going = await rt.blocking(
        budget_store.raise_hold, rt.sync, rt.keys, agent.id, None, rt.day_budget
    )
    spent = raised.spent.shown(raised.limit.unit)
    after = "goes on" if going else "stays paused: the budget is still used up (raise it again)"
    rt.say(
        ask.thread,
        escape(f"✓ The {raised.name} budget is now {raised.limit} ({spent} spent); {agent.id} {after}"),
        ask.reply_to,
    )
    if going:
        await _go_on_told(ask, agent, raised_note(raised))


async def go_on(ask: Ask, agent: Agent) -> None:
    """Lift the runaway watchdog's pause (the watchdog forgets the calls that made it); an agent whose
    turn ended is told to go on."""
    rt = ask.rt
    held = await rt.blocking(budget_store.go_on, rt.sync, rt.keys, agent.id, agent.worker)
    rt.say(
        ask.thread, escape(f"▶ {agent.id} goes on" if held else f"{agent.id} was not paused"), ask.reply_to
    )
    if held:
        await _go_on_told(ask, agent, CONTINUE_NOTE)


async def _go_on_told(ask: Ask, agent: Agent, note: str) -> None:
    """The pause's buttons go; an agent that ended its turn on the refused call gets `note` typed in."""
    if ask.reply_to is not None:
        await ask.rt.sender.drop_buttons(ask.reply_to)
    now = await ask.rt.find_agent(agent.id)
    if now is not None and now.state in TURN_OVER:
        await ask.rt.command(now.worker, Send(agent=now.id, text=note), ask.sender)
