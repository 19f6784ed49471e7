"""Dialogs the pane shows that no hook told: the folder-trust dialog (before any hook runs), auto mode's
dialogs, its "make auto mode your default?" nag, and anything shaped like a dialog. Each appearance is
recorded as the agent's prompt (with a question, so the `answer` command reaches it) and published once.
"""

from __future__ import annotations

import logging
import time

from bus.agent_store import Agent
from bus.prompts import Prompt
from worker.markers import FROM_PANE
from worker.programs.registry import program_of
from worker.runtime import Runtime
from worker.tmux.dialogs import STILL_CLOSING, Dialog, option_labels, recorded_as

log = logging.getLogger(__name__)


def tell_dialog(rt: Runtime, agent: Agent, text: str) -> Dialog | None:
    """The dialog the pane shows (None when none), published when it is new and no hook told it."""
    dialog = program_of(agent).read_dialog(text)
    prompt = rt.prompts.get(agent.id)
    if dialog is None:
        if prompt is not None and (prompt.tool == FROM_PANE or rt.prompts.answered(prompt.id)):
            rt.prompts.clear(agent.id, prompt.id)  # it closed: the next dialog is a new appearance
        return None
    if prompt is None or not recorded_as(prompt, dialog) or _answered_before(rt, prompt):
        _publish(rt, agent, dialog)
    return dialog


def _answered_before(rt: Runtime, prompt: Prompt) -> bool:
    """Whether the prompt was answered longer ago than its dialog takes to close: the same dialog on
    screen now is a new appearance (the watcher did not look while the screen had none)."""
    at = rt.prompts.answered_at(prompt.id)
    return at is not None and time.time() - at > STILL_CLOSING


def _data(dialog: Dialog) -> dict[str, object]:
    """The event's `data`: what the screen shows, in the same fields for every kind."""
    data: dict[str, object] = {
        "kind": dialog.kind,
        "title": dialog.title,
        "options": [{"number": o.number, "label": o.label} for o in dialog.options],
        "default": dialog.selected,
    }
    if dialog.kind == "trust":
        data["folder"] = dialog.folder
    if dialog.kind == "ask":
        data["question"] = dialog.title
    return data


def _publish(rt: Runtime, agent: Agent, dialog: Dialog) -> None:
    folder = (dialog.folder or agent.worktree or agent.root) if dialog.kind == "trust" else ""
    shown = Dialog(dialog.kind, dialog.title, dialog.options, dialog.selected, folder)
    labels = option_labels(dialog)
    prompt = rt.prompts.record(agent.id, dialog.kind, folder, labels, tool=FROM_PANE, question=dialog.title)
    question = rt.questions.ask(agent.id, dialog.title, agent.project, labels, dialog=prompt.id)
    rt.prompts.link_question(agent.id, prompt.id, question.id)
    data = _data(shown) | {"prompt_id": prompt.id, "question_id": question.id}
    if dialog.kind == "ask":
        event, message = "question", f"Agent {agent.id} asks: {dialog.title}"
    elif dialog.kind == "trust":
        event, message = "permission", f"{agent.id} asks whether Claude Code may trust the folder {folder}"
    else:
        event, message = "permission", f"{agent.id} needs your answer: {dialog.title}"
    log.info("agent %s: %s seen on the pane (prompt %s)", agent.id, shown.describe(), prompt.id)
    rt.publish(event, message, sender=agent.id, **agent.event_fields(), data=data)
