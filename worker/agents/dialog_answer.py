"""Answering the dialogs agents show: `ib approve`, `ib deny`, `ib answer` and the Telegram buttons.

The dialog on the pane is the truth: the recorded prompt (bus/inbox/prompts.py) only makes the answer happen
once. A dialog that went away before the answer lands gets a clear message and nothing is typed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress

from bus.errors import Conflict, DialogOpen, NotFound
from bus.inbox.prompts import Prompt
from bus.inbox.questions import Question
from bus.poll import wait_until
from bus.stores.agent_store import Agent
from worker.agents import talk
from worker.agents.ownership import AgentRef, owned
from worker.agents.talk import look, send
from worker.errors import SessionGone, WorkerError
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
GONE_SETTLE = 0.3  # seconds a dialog that left the screen must stay gone to count as closed
ANSWER_TRIES = 3  # times an answer's keys are typed while its dialog stays as it was


class NoDialog(WorkerError):
    """The agent shows no dialog (any more)."""


class AlreadyAnswered(Conflict):
    """Someone else answered the dialog first."""


class DialogClosed(NoDialog):
    """The dialog an answer was meant for closed before it landed."""


class OtherDialog(Conflict):
    """The agent shows a dialog, but not the one the answer names (an old message's button, or a made-up
    id): answering it would answer a dialog the person did not see."""


class AnswerNotTaken(WorkerError):
    """The program dropped the answer's keys every time they were typed: its dialog stays as it was."""


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
    recorded = rt.prompts.get(record.id)  # what the hook told of the call, before the answer clears it
    dialog, label = _answer(rt, record, prompt_id, lambda d: program_of(record).pick(d, "deny"))
    untold = dialog.kind == "permission" and program_of(record).refusal_untold
    note = refusal_note(dialog, recorded.detail if recorded else "") if untold else ""
    untelling = ""
    if reason.strip() and dialog.kind != "trust":
        _wait_until_gone(rt, record)
        untelling = _tell(rt, record, f"{note} {reason}" if note else reason, "the reason")
    elif note:
        if _wait_until_gone(rt, record):
            untelling = _tell(rt, record, note, "the refusal")
    elif dialog.kind in ("permission", "plan"):
        _tell_the_turn_ended(rt, record, dialog)
    return f"denied {dialog.describe()} of {record.id}: {label}{untelling}"


def _tell(rt: Runtime, agent: Agent, text: str, what: str) -> str:
    """Send `text` after a refusal; "" when it went, else why not: the refusal stands either way (an error
    here would make a person deny again, and answer the dialog that came next)."""
    try:
        send(rt, agent, text)
    except (DialogOpen, WorkerError) as e:
        return f"; {what} was not sent to the agent ({e})"
    return ""


def refusal_note(dialog: Dialog, detail: str = "") -> str:
    """What the model is told of a call the person refused without a reason, by a program that would tell
    it nothing (Gemini CLI drops the cancelled call from the conversation): the call, as the hook told
    its `detail` (the command, the file), else the dialog's title. Pure."""
    call = f"`{detail}`" if detail else f"the tool call ({dialog.title or 'a permission dialog'})"
    return f"I refused {call}: it did not run."


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
    if _refuses(record, dialog, label):  # the drawn "No" of a dialog the pane watcher told first
        _tell_the_turn_ended(rt, record, dialog)
    return f"answered {dialog.describe()} of {record.id}: {label}"


def _refuses(agent: Agent, dialog: Dialog, label: str) -> bool:
    """Whether the option picked (`label`) refuses a tool call or a plan, as `deny` does: the turn ends."""
    if dialog.kind not in ("permission", "plan"):
        return False
    try:
        return dialog.options[program_of(agent).pick(dialog, "deny")].label == label
    except DialogError:
        return False


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
    if prompt_id and prompt is not None and prompt.id != prompt_id:
        raise OtherDialog(f"{agent.id} shows another dialog now, not that one; nothing was sent")
    if prompt_id and prompt is None:
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
    type_answer(rt, agent, dialog, program_of(agent).option_keys(dialog, index), claimed.id)
    if claimed.question_id:
        with suppress(NotFound):  # answered; the prompt stays (a second answer is refused) until it closes
            rt.questions.acknowledge(claimed.question_id)
    rt.agents.update(agent.id, state_by="")  # the pane tells what happens next
    return dialog, dialog.options[index].label


def type_answer(rt: Runtime, agent: Agent, dialog: Dialog, keys: list[str], prompt_id: str) -> None:
    """Type the keys of an answer to `dialog` (recorded as prompt `prompt_id`), and again while the pane
    shows it unchanged STILL_CLOSING later with no other dialog recorded: Claude Code draws a dialog before
    it reads keys (for a second or more on a busy machine) and drops the keys that come in between.
    ANSWER_TRIES times at most, then it says so (AnswerNotTaken). Until the last, the answer counts from
    when this looks again: the pane watcher tells a dialog still drawn STILL_CLOSING past its answer anew,
    and must not while this may."""
    for left in reversed(range(ANSWER_TRIES)):
        rt.prompts.typed(prompt_id, time.time() + (STILL_CLOSING if left else 0.0))
        rt.tmux.send_keys(agent.session, *keys)
        if wait_until(lambda: not _unanswered(rt, agent, dialog, prompt_id), STILL_CLOSING):
            return
    raise AnswerNotTaken(
        f"{agent.id} still shows {dialog.describe()} as it was, after the answer was typed {ANSWER_TRIES} "
        f"times: it did not take it. It is told again; see it with ib look {agent.id}"
    )


def _unanswered(rt: Runtime, agent: Agent, dialog: Dialog, prompt_id: str) -> bool:
    """Whether the pane still shows `dialog` as it was answered (the same option selected) and the agent's
    dialog on record is still that answer's."""
    recorded = rt.prompts.get(agent.id)
    if recorded is None or recorded.id != prompt_id:
        return False
    try:
        return program_of(agent).read_dialog(rt.tmux.capture(agent.session)) == dialog
    except SessionGone:
        return False


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
    """A record for a dialog answered before the watcher or a hook recorded it (or theirs, should one of
    them record it meanwhile)."""
    labels = tuple(o.label for o in dialog.options)
    title = dialog.title
    recorded = rt.prompts.record(agent_id, dialog.kind, dialog.folder, labels, tool=FROM_PANE, question=title)
    found = recorded or rt.prompts.get(agent_id)
    if found is None:
        raise DialogClosed(f"{agent_id}: the dialog closed; nothing was sent")
    return found


def _being_drawn(rt: Runtime, agent: Agent, prompt: Prompt | None) -> Dialog | None:
    """A hook tells of a dialog before Claude Code draws it (and a busy machine draws late): an answer
    that comes first waits for it, instead of taking the dialog for closed and forgetting its record,
    which left every later answer refused while the dialog stood on the screen."""
    left = prompt.at + DRAW_WAIT - time.time() if prompt is not None else 0.0
    return wait_until(lambda: open_dialog(rt, agent), left) if left > 0 else None


def _wait_until_gone(rt: Runtime, agent: Agent) -> bool:
    """Whether the dialog left the screen within GONE_WAIT (pane text cannot push), and stayed gone a moment
    later: a program redrawing after the keys (Gemini CLI) can show one frame without its dialog."""

    def gone() -> bool:
        if open_dialog(rt, agent) is not None:
            return False
        time.sleep(GONE_SETTLE)
        return open_dialog(rt, agent) is None

    return bool(wait_until(gone, GONE_WAIT))
