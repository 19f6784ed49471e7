"""Dialogs the pane shows that no hook told: the folder-trust dialog (before any hook runs), auto mode's
dialogs, its "make auto mode your default?" nag, and anything shaped like a dialog. Each appearance is
recorded as the agent's prompt (with a question, so the `answer` command reaches it) and published once.
A folder-trust dialog about a trust the spawn carried over from the person's (and the program lost) is
answered here as the person answered it, and told to nobody.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bus.inbox.prompt_record import TRIES
from bus.inbox.prompts import Prompt
from bus.stores.agent_store import Agent
from worker.markers import FROM_PANE
from worker.programs.registry import program_of
from worker.runtime import Runtime
from worker.tmux.dialogs import STILL_CLOSING, Dialog, DialogError, option_labels, recorded_as

log = logging.getLogger(__name__)

# seconds an answered folder-trust dialog may stay drawn before it is answered again: Claude Code 2.1.332
# kept it drawn 16 s after the answer in a full test run on two busy cores, and was answered twice at 15
TRUST_CLOSING = 30.0


def tell_dialog(
    rt: Runtime, agent: Agent, text: str, hold: Callable[[Dialog], bool] = lambda _d: False
) -> Dialog | None:
    """The dialog the pane shows (None when none), published when it is new and no hook told it, unless
    `hold` says to wait a moment more: for the hook (it tells what the screen cannot: the command asked
    about), or for a dialog just drawn to read keys.

    The agent's hook may tell the same dialog at the same instant: the record is set only if it is
    still the one read (bus.inbox.prompt_record), so one of the two records and publishes it, and the other,
    reading again, finds it recorded."""
    dialog = program_of(agent).read_dialog(text)
    prompt = rt.prompts.get(agent.id)
    if dialog is None:
        if prompt is not None and (prompt.tool == FROM_PANE or rt.prompts.answered(prompt.id)):
            # it closed: the next dialog is a new appearance (but for its hook, should it run late)
            rt.prompts.clear(agent.id, prompt.id, closed=prompt.tool == FROM_PANE)
        return None
    for _ in range(TRIES):
        if prompt is not None and recorded_as(prompt, dialog) and not _answered_before(rt, prompt):
            return dialog  # told already: by the hook, or by an earlier look
        replacing = prompt.id if prompt is not None else ""
        if hold(dialog) or _trusted_already(rt, agent, dialog, replacing):
            return dialog
        if _publish(rt, agent, dialog, replacing):
            return dialog
        prompt = rt.prompts.get(agent.id)  # the hook recorded it first: look again
    log.warning("agent %s: its dialog's record kept changing; %s not told", agent.id, dialog.describe())
    return dialog


def _trusted_already(rt: Runtime, agent: Agent, dialog: Dialog, replacing: str) -> bool:
    """Answer "trust" to a folder-trust dialog about the agent's own folder when the person trusts its
    repository, as the spawn carried that trust over (the program may lose it: worker.programs.program's
    `carried_trust`): recorded as answered, then the keys. False when it is not such a dialog, or when
    another teller recorded first."""
    program = program_of(agent)
    if dialog.kind != "trust" or not program.carried_trust(agent.worktree or agent.root, agent.root):
        return False
    try:
        keys = program.option_keys(dialog, program.pick(dialog, "approve"))
    except DialogError:
        return False  # its options not drawn as expected: the person is asked
    folder = dialog.folder or agent.worktree
    labels = option_labels(dialog)
    prompt = rt.prompts.record(
        agent.id, dialog.kind, folder, labels, tool=FROM_PANE, question=dialog.title, replacing=replacing
    )
    if prompt is None:
        return False
    if rt.prompts.claim(prompt.id, agent.id):  # keys the program drops: answered again at a later look
        rt.tmux.send_keys(agent.session, *keys)
        log.info(
            "agent %s: trusted %s at its folder-trust dialog: the person trusts %s",
            agent.id,
            folder,
            agent.root,
        )
    return True


def _answered_before(rt: Runtime, prompt: Prompt) -> bool:
    """Whether the prompt was answered longer ago than its dialog takes to close: the same dialog on
    screen now is a new appearance (the watcher did not look while the screen had none), or the answer's
    keys were dropped. A folder-trust dialog comes once per start, and Claude Code keeps it drawn while it
    records the trust and starts the session behind it (3 to 16 s on a busy machine, where it was answered
    twice): it closes within TRUST_CLOSING."""
    at = rt.prompts.answered_at(prompt.id)
    closing = TRUST_CLOSING if prompt.kind == "trust" else STILL_CLOSING
    return at is not None and time.time() - at > closing


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


def _publish(rt: Runtime, agent: Agent, dialog: Dialog, replacing: str) -> bool:
    """Record the dialog (if the agent's record is still `replacing`) and publish it; False when
    another teller recorded first."""
    folder = (dialog.folder or agent.worktree or agent.root) if dialog.kind == "trust" else ""
    shown = Dialog(dialog.kind, dialog.title, dialog.options, dialog.selected, folder)
    labels = option_labels(dialog)
    prompt = rt.prompts.record(
        agent.id, dialog.kind, folder, labels, tool=FROM_PANE, question=dialog.title, replacing=replacing
    )
    if prompt is None:
        return False
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
    return True
