"""A click on the page into the worker command `ib approve` / `ib deny` / `ib answer` send: the same
models (bus.commands.worker_commands), sent to the agent's worker on its command stream and waited for.
A dialog answered, closed or replaced meanwhile is the worker's to tell ("already answered", "the dialog
closed; nothing was sent"); its one line is what the page shows.
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass

import redis

from bus.commands.worker_commands import (
    Answer,
    Approve,
    Choose,
    Command,
    Deny,
    Diff,
    Kill,
    Look,
    Merge,
    QueueMerge,
    Resume,
    Send,
    TakeScreenshot,
)
from bus.commands.worker_rpc import CommandFailed, request
from bus.costs.budgets import CONTINUE_NOTE, TURN_OVER, Amount, raised_note
from bus.errors import BusError, DialogOpen, InvalidInput, NotFound
from bus.inbox.questions import QuestionStore
from bus.inbox.review_comments import ReviewComments
from bus.inbox.review_prompt import Comment, changes_prompt
from bus.stores import budget_store
from bus.stores.agent_store import AgentStore
from bus.wire.keys import Keys
from bus.wire.names import name_problem
from web.board import ACTIONS
from web.errors import Refused

log = logging.getLogger(__name__)

SENDER = "web"  # the owner's clicks; a person's are `web:NAME`, as the bot's are `telegram:ID`
MAX_OPTION = 99


def sender_of(person: str) -> str:
    """Who a click is from on the bus: the owner (no name) as `web`, a person let in as `web:NAME`. Pure."""
    return f"{SENDER}:{person}" if person else SENDER


@dataclass(frozen=True)
class Reach:
    """Where a click goes and who makes it: the bus, and the sender its commands carry."""

    client: redis.Redis
    keys: Keys
    sender: str


@dataclass(frozen=True)
class Click:
    """What a dialog's button sends: the agent, the dialog's prompt id, and `approve`, `always`, `deny` or
    `choose:N`."""

    agent: str
    prompt: str
    choice: str


def command_of(click: Click) -> Approve | Deny | Choose:
    """The worker command a click stands for; Refused for one no button of the page sends. Pure."""
    if name_problem("agent", click.agent):
        raise Refused("no such agent; nothing was sent")
    if not click.prompt or len(click.prompt) > 64:
        raise Refused("the click names no dialog; nothing was sent")
    action, _, option = click.choice.partition(":")
    if action not in ACTIONS:
        raise Refused("no such button; nothing was sent")
    if action == "choose":
        if not option.isdigit() or not 0 < int(option) <= MAX_OPTION:
            raise Refused("no such option; nothing was sent")
        return Choose(agent=click.agent, answer=str(int(option)), prompt=click.prompt)
    if action == "deny":
        return Deny(agent=click.agent, prompt=click.prompt)
    return Approve(agent=click.agent, prompt=click.prompt, always=action == "always")


def answer(reach: Reach, click: Click) -> str:
    """Send the click's command to the agent's worker and wait for its one line. Blocking."""
    return on_agent(reach, click.agent, command_of(click))


AGENT_ACTIONS = ("kill", "resume")  # the buttons of an agent's page (and "merge": merge_now)
PAUSE_ACTIONS = ("raise", "continue")  # a paused agent's: on the bus, no worker command
REVIEW_ACTIONS = ("comment", "request-changes")  # the review's: comments kept on the bus, then sent as one
MAX_LINE = 1_000_000


def agent_command(agent: str, action: str, text: str = "") -> Command:
    """The command of an agent page's form: send (its text), kill or resume. Pure."""
    if name_problem("agent", agent):
        raise Refused("no such agent; nothing was sent")
    if action == "send":
        if not text.strip():
            raise Refused("nothing to send: type the message first")
        return Send(agent=agent, text=text)  # the person's own words, as `ib send` types them
    if action not in AGENT_ACTIONS:
        raise Refused("no such button; nothing was sent")
    return Kill(agent=agent) if action == "kill" else Resume(agent=agent)


def diff(reach: Reach, agent: str) -> str:
    """The agent's change as `ib diff` prints it, from its worker. Blocking."""
    return on_agent(reach, agent, Diff(agent=agent), quiet=True)


def approve_change(reach: Reach, agent: str) -> str:
    """Review's Approve: the agent's branch into its project's merge queue, as the bot's Approve does."""
    if name_problem("agent", agent):
        raise Refused("no such agent; nothing was sent")
    queued = on_agent_result(reach, agent, QueueMerge(agent=agent))
    info = queued if isinstance(queued, dict) else {}
    place = info.get("position")
    where = f"{info.get('project') or '?'} → {info.get('target') or '?'}"
    return f"{agent} is in the merge queue ({where})" + (f", place {place}" if place else "")


def answer_question(reach: Reach, question_id: str, text: str) -> str:
    """An answer to a question an agent asked (`ib ask`), sent to the asker's worker as `ib reply` does."""
    if not text.strip():
        raise Refused("nothing to answer: type the answer first")
    try:
        question = QuestionStore(reach.client, reach.keys).get(question_id)
    except (NotFound, InvalidInput) as e:
        raise Refused("that question was already answered; nothing was sent") from e
    on_agent(reach, question.agent, Answer(question=question.id, text=text))
    return f"✓ answered {question.agent}"


def lift_pause(reach: Reach, agent_id: str, how: str, day_limit: Amount | None) -> str:
    """Raise the budget that paused the agent by its step, or let it go on past the runaway watchdog, as
    the bot's Raise and Continue do; an agent whose turn ended is told to go on."""
    agent = AgentStore(reach.client, reach.keys).find(agent_id)
    if agent is None:
        raise Refused(f"no agent {agent_id} on the bus; nothing was changed")
    try:
        if how == "raise":
            raised, going = budget_store.raise_hold(reach.client, reach.keys, agent.id, None, day_limit)
            spent = raised.spent.shown(raised.limit.unit)
            after = "goes on" if going else "stays paused: the budget is still used up (raise it again)"
            said, note = (
                f"✓ the {raised.name} budget is now {raised.limit} ({spent} spent); {agent.id} {after}",
                (raised_note(raised) if going else ""),
            )
        else:
            held = budget_store.go_on(reach.client, reach.keys, agent.id, agent.worker)
            said, note = (
                (f"▶ {agent.id} goes on", CONTINUE_NOTE) if held else (f"{agent.id} was not paused", "")
            )
    except BusError as e:
        raise Refused(str(e)) from e
    if note and agent.state in TURN_OVER:
        on_agent(reach, agent.id, Send(agent=agent.id, text=note))
    return said


def merge_now(reach: Reach, agent: str) -> str:
    """`ib merge`: the agent's branch merged into its target now, by its worker. Blocking."""
    done = on_agent_result(reach, agent, Merge(agent=agent))
    info = done if isinstance(done, dict) else {}
    return f"✓ merged {agent} into {info.get('target', '?')} ({str(info.get('sha', ''))[:8]})"


def screenshot(reach: Reach, agent: str) -> bytes:
    """The agent's screen as a PNG (`ib look --png`), painted by its worker. Blocking."""
    answer = on_agent_result(reach, agent, TakeScreenshot(agent=agent))
    try:
        return base64.b64decode(str(answer["png"]) if isinstance(answer, dict) else "", validate=True)
    except (KeyError, binascii.Error) as e:
        raise Refused(f"{agent}'s worker sent no picture") from e


def screen(reach: Reach, agent: str, lines: int) -> str:
    """The agent's screen as `ib look` prints it, from its worker. Blocking."""
    return on_agent(reach, agent, Look(agent=agent, lines=lines), quiet=True)


def on_agent(reach: Reach, agent_id: str, command: Command, quiet: bool = False) -> str:
    """Run `command` on the agent's worker and wait for its one line; Refused with the worker's reason."""
    done = on_agent_result(reach, agent_id, command)
    if not quiet:
        log.info("%s on %s by %s: %s", command.op, agent_id, reach.sender, done)
    return str(done)


def on_agent_result(reach: Reach, agent_id: str, command: Command) -> object:
    """Run `command` on the agent's worker and wait for its result; Refused with the worker's reason."""
    agent = AgentStore(reach.client, reach.keys).find(agent_id)
    if agent is None:
        raise Refused(f"no agent {agent_id} on the bus; nothing was sent")
    if not agent.worker:
        raise Refused(f"{agent.id} has no worker on record; nothing was sent")
    try:
        done = request(reach.client, reach.keys, agent.worker, command, sender=reach.sender)
    except CommandFailed as e:
        if e.reason == DialogOpen.reason:
            raise Refused(f"{agent.id} shows a dialog: answer it first; nothing was typed") from e
        log.info("%s on %s by %s refused: %s", command.op, agent.id, reach.sender, e)
        raise Refused(str(e)) from e
    except BusError as e:
        log.info("%s on %s by %s refused: %s", command.op, agent.id, reach.sender, e)
        raise Refused(str(e)) from e
    return done


def lines_of(text: str) -> tuple[int, int]:
    """`12` or `12-14` (a dash or an en dash) as (first, last); Refused for anything else. Pure."""
    first, dash, last = text.strip().replace("–", "-").partition("-")
    parts = [first, last] if dash else [first]
    if not all(part.isascii() and part.isdigit() for part in parts):
        raise Refused("lines are a number or a range like 12-14; the comment was not kept")
    low, high = int(first), int(parts[-1])
    if not 1 <= low <= high <= MAX_LINE:
        raise Refused("lines are a number or a range like 12-14; the comment was not kept")
    return low, high


def add_comment(reach: Reach, agent_id: str, path: str, lines: str, text: str) -> str:
    """A comment on lines of a file of the agent's change, kept on the bus until Request changes (as a
    reply under a /diff picture in Telegram, or `ib review --comment`). Blocking."""
    if name_problem("agent", agent_id) or AgentStore(reach.client, reach.keys).find(agent_id) is None:
        raise Refused(f"no agent {agent_id} on the bus; the comment was not kept")
    if not path.strip():
        raise Refused("name the file the comment is about; the comment was not kept")
    if not text.strip():
        raise Refused("nothing to keep: write the comment first")
    first, last = lines_of(lines)
    waiting = ReviewComments(reach.client, reach.keys).add(
        agent_id, Comment(path.strip(), first, last, text.strip())
    )
    return f"✓ comment kept for {agent_id}: {waiting} waiting for Request changes"


def request_changes(reach: Reach, agent_id: str) -> str:
    """The comments waiting for the agent's change go to it as one prompt, typed as the person's words;
    they stay waiting until its worker took it. Blocking."""
    store = ReviewComments(reach.client, reach.keys)
    comments, read = store.waiting(agent_id)
    if not comments:
        raise Refused(f"no comments on {agent_id}'s change to send: keep one first; nothing was sent")
    on_agent(reach, agent_id, Send(agent=agent_id, text=changes_prompt(comments)))
    store.sent(agent_id, read)
    count = f"{len(comments)} comment" + ("" if len(comments) == 1 else "s")
    return f"✓ changes requested: {count} sent to {agent_id}"
