"""Answering the dialogs agents show: `ib approve`, `ib deny`, `ib answer` and the Telegram buttons.

The dialog on the pane is the truth: the recorded prompt (bus/prompts.py) only makes the answer happen
once. A dialog that went away before the answer lands gets a clear message and nothing is typed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress

from bus.agent_store import Agent
from bus.errors import Conflict, NotFound
from bus.poll import wait_until
from bus.prompts import Prompt
from bus.questions import Question
from worker.agents import talk
from worker.agents.ownership import AgentRef, owned
from worker.agents.talk import look, send
from worker.errors import WorkerError
from worker.markers import FROM_PANE
from worker.programs.registry import program_of
from worker.runtime import Runtime
from worker.tmux.dialogs import (
    DRAW_WAIT,
    STILL_CLOSING,
    Dialog,
    DialogError,
    recorded_as,
)

GONE_WAIT = STILL_CLOSING  # seconds an answered dialog may take to close (and a reason waits for it)


class NoDialog(WorkerError):
    """The agent shows no dialog (any more)."""


class AlreadyAnswered(Conflict):
    """Someone else answered the dialog first."""


class DialogClosed(NoDialog):
    """The dialog an answer was meant for closed before it landed."""


class BadAnswer(WorkerError):
    """The answer does not fit the dialog on screen."""


def approve(rt: Runtime, agent: AgentRef, always: bool = False, prompt_id: str | None = None) -> str:
    """Allow the tool call (once, or `always`), trust the folder, or accept the plan."""
    record = owned(rt, agent)
    dialog, label = _answer(
        rt, record, prompt_id, lambda d: program_of(record).pick(d, "always" if always else "approve")
    )
    return f"approved {dialog.describe()} of {record.id}: {label}"


def deny(rt: Runtime, agent: AgentRef, reason: str = "", prompt_id: str | None = None) -> str:
    """Refuse the tool call (telling the agent why, when given), refuse the folder, or keep planning."""
    record = owned(rt, agent)
    dialog, label = _answer(rt, record, prompt_id, lambda d: program_of(record).pick(d, "deny"))
    if reason.strip() and dialog.kind != "trust":
        _wait_until_gone(rt, record)
        send(rt, record, reason)
    elif dialog.kind in ("permission", "plan"):
        _tell_the_turn_ended(rt, record, dialog)
    return f"denied {dialog.describe()} of {record.id}: {label}"


def _tell_the_turn_ended(rt: Runtime, agent: Agent, dialog: Dialog) -> None:
    """A refused tool call or plan with no reason ends the turn (Claude Code tells the model it was
    interrupted) and no Stop hook runs for an interrupted turn: the agent waits for the person, and its
    `waiting` event says so (the `idle_prompt` that follows a minute later repeats it and is dropped)."""
    if not _wait_until_gone(rt, agent):
        return  # still drawn: the turn did not end (the pane watcher reads what happens next)
    rt.publish(
        "waiting",
        f"Agent {agent.id} is waiting for input ({dialog.describe()} was denied)",
        sender=agent.id,
        **agent.event_fields(),
        data={"last_message": "", "denied": dialog.title},
    )


def choose(rt: Runtime, agent: AgentRef, answer: str, prompt_id: str | None = None) -> str:
    """Pick an option of any dialog by its number or its label (as drawn, any case); for a permission,
    plan or trust dialog also by what it means: approve, always, deny."""
    record = owned(rt, agent)
    dialog, label = _answer(rt, record, prompt_id, lambda d: program_of(record).choose(d, answer))
    return f"answered {dialog.describe()} of {record.id}: {label}"


def answer(rt: Runtime, question_id: str, text: str, sender: str | None = None) -> Question:
    """Answer a question people see (`ib questions`, Telegram): a dialog (AskUserQuestion, or any dialog
    the pane watcher saw) by picking the option `text` names, any other question by sending the text."""
    try:
        question = rt.questions.get(question_id)
    except NotFound as e:
        raise AlreadyAnswered(f"question {question_id} was already answered (or its dialog closed)") from e
    if not question.dialog:
        return talk.answer(rt, question_id, text, sender)
    choose(rt, question.agent, text, question.dialog)
    return question


def open_dialog(rt: Runtime, agent: AgentRef) -> Dialog | None:
    """The dialog the agent's pane shows now, if any."""
    return program_of(owned(rt, agent)).read_dialog(look(rt, agent))


def _answer(
    rt: Runtime, agent: Agent, prompt_id: str | None, choose_option: Callable[[Dialog], int]
) -> tuple[Dialog, str]:
    """Type the keys of the option `choose_option` picks, once: the first answer claims the recorded
    prompt (kept until the dialog leaves the screen), every later one is told it was answered."""
    prompt = rt.prompts.get(agent.id)
    if prompt_id and rt.prompts.answered(prompt_id):
        raise AlreadyAnswered(f"that dialog of {agent.id} was already answered")
    if prompt_id and (prompt is None or prompt.id != prompt_id):
        raise DialogClosed(f"{agent.id}: the dialog closed; nothing was sent")
    if prompt is not None and rt.prompts.answered(prompt.id):
        _after_an_answer(rt, agent, prompt)
        prompt = None
    dialog = open_dialog(rt, agent) or _being_drawn(rt, agent, prompt)
    if dialog is None:
        if prompt is not None and rt.prompts.answered(prompt.id):  # another answer closed it meanwhile
            raise AlreadyAnswered(f"that dialog of {agent.id} was already answered")
        if prompt is not None:
            rt.prompts.clear(agent.id, prompt.id)
            raise DialogClosed(f"{agent.id}: the dialog closed; nothing was sent")
        if rt.prompts.answered_lately(agent.id):
            raise AlreadyAnswered(f"that dialog of {agent.id} was already answered")
        raise NoDialog(f"{agent.id} shows no dialog; nothing to answer (see ib look {agent.id})")
    try:
        index = choose_option(dialog)
    except DialogError as e:
        raise BadAnswer(f"{agent.id}: {e}") from e
    claimed = prompt or _record(rt, agent.id, dialog)
    if not rt.prompts.claim(claimed.id, agent.id):
        raise AlreadyAnswered(f"that dialog of {agent.id} was already answered")
    rt.tmux.send_keys(agent.session, *program_of(agent).option_keys(dialog, index))
    if claimed.question_id:
        with suppress(NotFound):  # answered; the prompt stays (a second answer is refused) until it closes
            rt.questions.acknowledge(claimed.question_id)
    rt.agents.update(agent.id, state_by="")  # the pane tells what happens next
    return dialog, dialog.options[index].label


def _after_an_answer(rt: Runtime, agent: Agent, prompt: Prompt) -> None:
    """The recorded dialog was answered: this answer came second when that dialog now leaves the screen
    and none follows it; one still there after GONE_WAIT is a new appearance (or the keys were lost)
    and is answered afresh, as is another dialog."""

    def gone() -> bool:
        shown = open_dialog(rt, agent)
        return shown is None or not recorded_as(prompt, shown)

    if wait_until(gone, GONE_WAIT) and open_dialog(rt, agent) is None:
        raise AlreadyAnswered(f"that dialog of {agent.id} was already answered")
    rt.prompts.clear(agent.id, prompt.id)


def _record(rt: Runtime, agent_id: str, dialog: Dialog) -> Prompt:
    """A record for a dialog answered before the watcher or a hook recorded it."""
    labels = tuple(o.label for o in dialog.options)
    title = dialog.title
    return rt.prompts.record(agent_id, dialog.kind, dialog.folder, labels, tool=FROM_PANE, question=title)


def _being_drawn(rt: Runtime, agent: Agent, prompt: Prompt | None) -> Dialog | None:
    """A hook tells of a dialog before Claude Code draws it (and a busy machine draws late): an answer
    that comes first waits for it, instead of taking the dialog for closed and forgetting its record,
    which left every later answer refused while the dialog stood on the screen."""
    left = prompt.at + DRAW_WAIT - time.time() if prompt is not None else 0.0
    return wait_until(lambda: open_dialog(rt, agent), left) if left > 0 else None


def _wait_until_gone(rt: Runtime, agent: Agent) -> bool:
    """Whether the dialog left the screen within GONE_WAIT (pane text cannot push)."""
    return bool(wait_until(lambda: open_dialog(rt, agent) is None, GONE_WAIT))
