"""Talking to agents: send text into an agent's pane, look at it, and the questions agents ask the person."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from bus.errors import InvalidInput
from bus.events.event_options import listed
from bus.inbox.questions import Question
from bus.stores.agent_store import Agent
from worker.agents import agent_inbox, agent_log
from worker.agents.layout import AgentPaths
from worker.agents.ownership import AgentRef, owned
from worker.agents.pane_typing import type_message
from worker.agents.typing_turn import typing_turn
from worker.errors import SessionGone, WorkerError
from worker.programs.registry import program_of
from worker.runtime import Runtime

MAX_SEND_BYTES = 1_048_576


class AgentNotRunning(WorkerError):
    """The agent's tmux session is gone."""


def sent_text(text: str, sender: str | None) -> str:
    """What arrives in the agent: messages from other agents carry the seed's prefix."""
    return f"[sent by agent {sender}]: {text}" if sender else text


def check_text(text: str) -> None:
    """InvalidInput for a text no agent is given (nothing, or too much): said before anything is looked up."""
    if not text.strip():
        raise InvalidInput('nothing to send: give the text, e.g. ib send agent-1 "run the tests"')
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SEND_BYTES:
        raise InvalidInput(f"the text is over {MAX_SEND_BYTES} bytes; send a file path instead")


def send(rt: Runtime, agent: AgentRef, text: str, sender: str | None = None) -> Agent:
    """Give the agent `text`. From another agent (`sender`) into its Claude Code inbox when it has one
    (worker.agents.agent_inbox), else, and always from the person, typed into its pane."""
    check_text(text)
    agent = owned(rt, agent)
    message = sent_text(text, sender)
    if sender and agent_inbox.post(rt, agent, message):  # another agent's word: between its tool calls
        _logged(agent, text, sender, " (through its inbox)")
        return agent
    _type(rt, agent, message)
    _logged(agent, text, sender)
    return agent


def _type(rt: Runtime, agent: Agent, message: str) -> None:
    """Type the message into the agent's pane and submit it; never into an open dialog."""
    program = program_of(agent)
    try:
        with typing_turn(AgentPaths(Path(agent.root), agent.id).folder, agent.id):
            type_message(rt, agent, program, message)
    except SessionGone as e:
        raise AgentNotRunning(
            f"{agent.id} is not running (its session is gone); start it again with ib resume {agent.id}"
        ) from e


def _logged(agent: Agent, text: str, sender: str | None, how: str = "") -> None:
    agent_log.append(
        AgentPaths(Path(agent.root), agent.id).log,
        f"Received message from {sender or 'user'}{how}: {text[:500]}",
    )
    if sender:
        agent_log.append(
            AgentPaths(Path(agent.root), sender).log, f"Sent message to {agent.id}{how}: {text[:500]}"
        )


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
