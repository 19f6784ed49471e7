"""Answering the dialogs agents show: `ib approve`, `ib deny`, `ib answer` and the Telegram buttons.

The dialog on the pane is the truth: the recorded prompt (bus/prompts.py) only makes the answer happen
once. A dialog that went away before the answer lands gets a clear message and nothing is typed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bus.errors import Conflict
from bus.poll import wait_until
from bus.prompts import Prompt
from bus.questions import Question
from worker.agents import talk
from worker.agents.ownership import owned
from worker.agents.talk import look, send
from worker.errors import WorkerError
from worker.service.runtime import Runtime
from worker.tmux.dialogs import Dialog, DialogError, keys_for, option_for_answer, pick, read_dialog

GONE_WAIT = 3.0  # seconds a deny-with-reason waits for the dialog to close before typing the reason
DRAW_WAIT = 10.0  # seconds from its record within which a dialog not on the pane yet is waited for


class NoDialog(WorkerError):
    """The agent shows no dialog (any more)."""


class AlreadyAnswered(Conflict):
    """Someone else answered the dialog first."""


class BadAnswer(WorkerError):
    """The answer does not fit the dialog on screen."""


def approve(rt: Runtime, agent_id: str, always: bool = False, prompt_id: str | None = None) -> str:
    """Allow the tool call (once, or `always`), trust the folder, or accept the plan."""
    dialog, label = _answer(rt, agent_id, prompt_id, lambda d: pick(d, "always" if always else "approve"))
    return f"approved {dialog.describe()} of {agent_id}: {label}"


def deny(rt: Runtime, agent_id: str, reason: str = "", prompt_id: str | None = None) -> str:
    """Refuse the tool call (telling the agent why, when given), refuse the folder, or keep planning."""
    dialog, label = _answer(rt, agent_id, prompt_id, lambda d: pick(d, "deny"))
    if reason.strip() and dialog.kind != "trust":
        _wait_until_gone(rt, agent_id)
        send(rt, agent_id, reason)
    return f"denied {dialog.describe()} of {agent_id}: {label}"


def choose(rt: Runtime, agent_id: str, answer: str, prompt_id: str | None = None) -> str:
    """Pick an option of a question dialog (AskUserQuestion) by its number or its label."""

    def option(dialog: Dialog) -> int:
        if dialog.kind != "ask":
            raise DialogError(
                f"{agent_id} shows {dialog.describe()}, not a question: "
                f"use ib approve {agent_id} or ib deny {agent_id}"
            )
        return option_for_answer(dialog, answer)

    dialog, label = _answer(rt, agent_id, prompt_id, option)
    return f"answered {dialog.describe()} of {agent_id}: {label}"


def answer(rt: Runtime, question_id: str, text: str, sender: str | None = None) -> Question:
    """Answer a question people see (`ib questions`, Telegram): an AskUserQuestion dialog by picking the
    option `text` names, any other question by sending the text to the agent."""
    question = rt.questions.get(question_id)
    if not question.dialog:
        return talk.answer(rt, question_id, text, sender)
    choose(rt, question.agent, text, question.dialog)
    return question


def open_dialog(rt: Runtime, agent_id: str) -> Dialog | None:
    """The dialog the agent's pane shows now, if any."""
    return read_dialog(look(rt, agent_id))


def _answer(
    rt: Runtime, agent_id: str, prompt_id: str | None, choose_option: Callable[[Dialog], int]
) -> tuple[Dialog, str]:
    agent = owned(rt, agent_id)
    prompt = rt.prompts.get(agent.id)
    if prompt_id and (prompt is None or prompt.id != prompt_id or rt.prompts.answered(prompt_id)):
        raise AlreadyAnswered(f"that dialog of {agent.id} was already answered (or has closed)")
    dialog = open_dialog(rt, agent.id) or _being_drawn(rt, agent.id, prompt)
    if dialog is None:
        if prompt is not None:
            rt.prompts.clear(agent.id, prompt.id)
            raise NoDialog(
                f"{agent.id} no longer shows its dialog (answered in its terminal, or it closed); "
                "nothing was typed"
            )
        raise NoDialog(f"{agent.id} shows no dialog; nothing to answer (see ib look {agent.id})")
    try:
        index = choose_option(dialog)
    except DialogError as e:
        raise BadAnswer(str(e)) from e
    claimed = _claim(rt, agent.id, prompt, dialog)
    if not rt.prompts.claim(claimed.id):
        raise AlreadyAnswered(f"that dialog of {agent.id} was already answered")
    rt.tmux.send_keys(agent.session, *keys_for(dialog, index))
    rt.prompts.clear(agent.id, claimed.id)
    rt.agents.update(agent.id, state_by="")  # the pane tells what happens next
    return dialog, dialog.options[index].label


def _claim(rt: Runtime, agent_id: str, prompt: Prompt | None, dialog: Dialog) -> Prompt:
    """The record the answer claims: the hook's, else one made now for a dialog seen only on the pane."""
    if prompt is not None:
        return prompt
    return rt.prompts.record(agent_id, dialog.kind, dialog.folder, tuple(o.label for o in dialog.options))


def _being_drawn(rt: Runtime, agent_id: str, prompt: Prompt | None) -> Dialog | None:
    """A hook tells of a dialog before Claude Code draws it (and a busy machine draws late): an answer
    that comes first waits for it, instead of taking the dialog for closed and forgetting its record,
    which left every later answer refused while the dialog stood on the screen."""
    left = prompt.at + DRAW_WAIT - time.time() if prompt is not None else 0.0
    return wait_until(lambda: open_dialog(rt, agent_id), left) if left > 0 else None


def _wait_until_gone(rt: Runtime, agent_id: str) -> None:
    wait_until(lambda: open_dialog(rt, agent_id) is None, GONE_WAIT)  # pane text cannot push
