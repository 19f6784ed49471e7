"""Talking to agents: send text into an agent's pane, look at it, and the questions agents ask the person."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from pathlib import Path

from bus.agent_store import Agent
from bus.errors import InvalidInput
from bus.event_options import listed
from bus.questions import Question
from worker.agents import agent_log
from worker.agents.layout import AgentPaths
from worker.agents.ownership import AgentRef, owned
from worker.errors import SessionGone, WorkerError
from worker.programs.registry import program_of
from worker.runtime import Runtime
from worker.tmux.dialogs import refusal
from worker.tmux.input_box import still_typed

MAX_SEND_BYTES = 1_048_576
SUBMIT_CHECK_DELAY = 0.3  # seconds after Enter before looking whether the text left the input box
TYPED_WAIT = 2.0  # seconds a piece typed before the rest may take to show on a busy machine


class AgentNotRunning(WorkerError):
    """The agent's tmux session is gone."""


class DialogOpen(WorkerError):
    """The agent shows a dialog: typed text would answer it (or be lost); the message says what does."""


def sent_text(text: str, sender: str | None) -> str:
    """What arrives in the agent: messages from other agents carry the seed's prefix."""
    return f"[sent by agent {sender}]: {text}" if sender else text


def send(rt: Runtime, agent: AgentRef, text: str, sender: str | None = None) -> Agent:
    if not text.strip():
        raise InvalidInput('nothing to send: give the text, e.g. ib send agent-1 "run the tests"')
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SEND_BYTES:
        raise InvalidInput(f"the text is over {MAX_SEND_BYTES} bytes; send a file path instead")
    agent = owned(rt, agent)
    message = sent_text(text, sender)
    try:
        dialog = program_of(agent).read_dialog(rt.tmux.capture(agent.session))
        if dialog is not None:
            raise DialogOpen(refusal(agent.id, dialog))
        *first, last = program_of(agent).typed_parts(message)
        for part in first:
            _type_and_see(rt, agent, part)
        rt.tmux.send_text(agent.session, last, enter_delay=rt.settings.send_delay)
        _make_sure_submitted(rt, agent, message)
        rt.prompts.moved_on(agent.id)
    except SessionGone as e:
        raise AgentNotRunning(
            f"{agent.id} is not running (its session is gone); start it again with ib resume {agent.id}"
        ) from e
    agent_log.append(
        AgentPaths(Path(agent.root), agent.id).log, f"Received message from {sender or 'user'}: {text[:500]}"
    )
    if sender:
        agent_log.append(
            AgentPaths(Path(agent.root), sender).log, f"Sent message to {agent.id}: {text[:500]}"
        )
    return agent


def _type_and_see(rt: Runtime, agent: Agent, part: str) -> None:
    """Type `part` (no Enter) and wait until the screen changes with it, TYPED_WAIT at most."""
    before = rt.tmux.capture(agent.session)
    rt.tmux.send_text(agent.session, part, enter=False)
    deadline = time.monotonic() + TYPED_WAIT
    while rt.tmux.capture(agent.session) == before and time.monotonic() < deadline:
        time.sleep(0.02)


def _make_sure_submitted(rt: Runtime, agent: Agent, message: str) -> None:
    """Press Enter once more when the first one was taken by a completion menu (text ending in `@path`)
    and the message still sits in the input box."""
    time.sleep(SUBMIT_CHECK_DELAY)
    if still_typed(rt.tmux.capture(agent.session), message):
        rt.tmux.send_keys(agent.session, "Enter")


def press(rt: Runtime, agent: AgentRef, *keys: str) -> None:
    """Named keys (Escape, C-c) into the agent's pane."""
    agent = owned(rt, agent)
    try:
        rt.tmux.send_keys(agent.session, *keys)
    except SessionGone as e:
        raise AgentNotRunning(f"{agent.id} is not running (its session is gone)") from e


def look(rt: Runtime, agent: AgentRef, lines: int | None = None) -> str:
    agent = owned(rt, agent)
    try:
        return rt.tmux.capture(agent.session, lines=lines)
    except SessionGone as e:
        raise AgentNotRunning(
            f"{agent.id} is not running; its last output is archived when it is killed or merged"
        ) from e


@dataclass(frozen=True)
class Screenshot:
    agent: str
    width: int
    height: int
    png: bytes

    def as_reply(self) -> dict[str, object]:
        """For a reply on the bus: the PNG in base64 (a 200×50 pane is some tens of kB)."""
        return {
            "agent": self.agent,
            "width": self.width,
            "height": self.height,
            "png": base64.b64encode(self.png).decode("ascii"),
        }


def screenshot(rt: Runtime, agent: AgentRef) -> Screenshot:
    """The agent's terminal as a PNG, colours included."""
    from worker.tmux.screenshot import render_png  # Pillow loads only for screenshots

    agent = owned(rt, agent)
    try:
        width, height, screen = rt.tmux.capture_screen(agent.session)
    except SessionGone as e:
        raise AgentNotRunning(
            f"{agent.id} is not running (its session is gone): there is no screen to take a picture of"
        ) from e
    return Screenshot(agent.id, width, height, render_png(screen, width, height))


def ask(rt: Runtime, agent_id: str, text: str, options: tuple[str, ...] = ()) -> Question:
    """An agent asks the person something: stored until acknowledged; a `question` event wakes listeners."""
    if not text.strip():
        raise InvalidInput('ask what? e.g. ib ask "Which database should I use?"')
    agent = rt.agents.find(agent_id)
    project = agent.project if agent else ""
    question = rt.questions.ask(agent_id, text, project, options)
    rt.publish(
        "question",
        f"Agent {agent_id} asks: {text}",
        sender=agent_id,
        agent=agent_id,
        project=project or None,
        task=(agent.task or None) if agent else None,
        data={"question_id": question.id, "options": listed(options), "question": text},
    )
    return question


def answer(rt: Runtime, question_id: str, text: str, sender: str | None = None) -> Question:
    """Send the answer to the agent that asked, then acknowledge the question. (A question that is an
    agent's AskUserQuestion dialog is answered in the dialog: worker.agents.dialog_answer.answer.)"""
    question = rt.questions.get(question_id)
    send(rt, question.agent, text, sender)
    return rt.questions.acknowledge(question_id)
