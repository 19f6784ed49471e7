"""Talking to agents: send text into an agent's pane, look at it, and the questions agents ask the person."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bus.errors import DialogOpen, InvalidInput
from bus.events.event_options import listed
from bus.inbox.questions import Question
from bus.poll import wait_until
from bus.stores.agent_store import Agent
from worker.agents import agent_inbox, agent_log
from worker.agents.layout import AgentPaths
from worker.agents.ownership import AgentRef, owned
from worker.agents.typing_turn import typing_turn
from worker.errors import SessionGone, WorkerError
from worker.programs.program import AgentProgram
from worker.programs.registry import program_of
from worker.runtime import Runtime
from worker.tmux.dialogs import Dialog, refusal
from worker.tmux.input_box import arriving, still_typed
from worker.tmux.pane_state import PaneState

MAX_SEND_BYTES = 1_048_576
SUBMIT_CHECK_DELAY = 0.3  # seconds after Enter before looking whether the text left the input box
SUBMIT_TRIES = 4  # presses of Enter while the text stays in the input box
ENTER_WAIT = 3.0  # seconds an Enter may take to clear the input box before it is pressed again
HIDDEN_WAIT = 30.0  # seconds the input box may stay hidden after an Enter (Gemini CLI resuming a session)
TYPED_WAIT = 2.0  # seconds typed text may take to show in the input box on a busy machine
ARRIVING_WAIT = 30.0  # seconds a message the box shows the start of may take to show whole
DRAWING_WAIT = 3.0  # seconds a dialog a hook told may take to be drawn
PROBE_KEY = "x"  # typed and erased before a message, where the program asks for it
READY_WAIT = 15.0  # seconds a program may take to read its first key (Gemini CLI resuming a session)
STARTING_WAIT = 30.0  # seconds a program may take to draw its first screen (Claude Code on a busy machine)


class AgentNotRunning(WorkerError):
    """The agent's tmux session is gone."""


class NotSubmitted(WorkerError):
    """The text sits in the agent's input box, typed but not sent, however often Enter was pressed."""


class NotStarted(WorkerError):
    """The agent's program has drawn nothing it reads keys behind, however long it was waited for."""


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
            _type_alone(rt, agent, program, message)
    except SessionGone as e:
        raise AgentNotRunning(
            f"{agent.id} is not running (its session is gone); start it again with ib resume {agent.id}"
        ) from e


def _type_alone(rt: Runtime, agent: Agent, program: AgentProgram, message: str) -> None:
    screen = _started_screen(rt, agent, program)
    dialog = program.read_dialog(screen)
    if dialog is None and _told_not_drawn(rt, agent):
        dialog = _drawn_dialog(rt, agent, program)
    if dialog is not None:
        raise DialogOpen(refusal(agent.id, dialog))
    box = program.input_text(screen)  # None: no box this program's screen shows that it can read
    if program.probes_input and box is not None:
        _probe(rt, agent, program, box)
    typed = f" {message}" if program.bang_runs_shell and message.startswith("!") else message
    rt.tmux.send_text(agent.session, typed, enter=False, paste=program.pastes)
    _submit(rt, agent, program, message, readable=box is not None)
    rt.prompts.moved_on(agent.id)


def _told_not_drawn(rt: Runtime, agent: Agent) -> bool:
    """Whether a hook told a dialog of the agent that nobody answered: the program may tell it before it
    draws it (seen: text from Telegram typed into the pane in between, under the dialog's own message)."""
    prompt = rt.prompts.get(agent.id)
    return prompt is not None and not rt.prompts.answered(prompt.id)


def _drawn_dialog(rt: Runtime, agent: Agent, program: AgentProgram) -> Dialog | None:
    """The dialog once the program draws it, DRAWING_WAIT at most (None: it never showed, or closed)."""
    return wait_until(lambda: program.read_dialog(rt.tmux.capture(agent.session)), DRAWING_WAIT)


def _started_screen(rt: Runtime, agent: Agent, program: AgentProgram) -> str:
    """The pane once its program shows that it started, STARTING_WAIT at most. Keys typed before go to the
    terminal, which may drop them when the program takes it over (the fake agent's raw mode does: `ib send`
    right after `ib new-agent` said the text was sent, and it never arrived)."""
    deadline = time.monotonic() + STARTING_WAIT
    while _starting(program, screen := rt.tmux.capture(agent.session)):
        if time.monotonic() > deadline:
            raise NotStarted(
                f"{agent.id} shows nothing of its program {STARTING_WAIT:.0f} s after it started, so "
                f"nothing was typed; see it with ib look {agent.id}, then send again"
            )
        time.sleep(0.05)
    return screen


def _starting(program: AgentProgram, screen: str) -> bool:
    """Whether the screen shows the program still starting: nothing drawn yet (a capture drops blank rows,
    so a blank pane is an empty text), or what the program draws before it reads keys. Pure."""
    return not screen.strip() or program.pane_state(screen) is PaneState.CREATING


def _logged(agent: Agent, text: str, sender: str | None, how: str = "") -> None:
    agent_log.append(
        AgentPaths(Path(agent.root), agent.id).log,
        f"Received message from {sender or 'user'}{how}: {text[:500]}",
    )
    if sender:
        agent_log.append(
            AgentPaths(Path(agent.root), sender).log, f"Sent message to {agent.id}{how}: {text[:500]}"
        )


def _probe(rt: Runtime, agent: Agent, program: AgentProgram, before: str) -> None:
    """Type a key and erase it, each once the input box (holding `before`) shows the one before, TYPED_WAIT
    at most: the program reads keys, and what comes next is read as what it is (a paste as a paste)."""
    rt.tmux.send_text(agent.session, PROBE_KEY, enter=False)
    _wait_box(rt, agent, program, lambda box: box is not None and box.endswith(PROBE_KEY), READY_WAIT)
    rt.tmux.send_keys(agent.session, "BSpace")
    _wait_box(rt, agent, program, lambda box: box == before)


def _wait_box(
    rt: Runtime,
    agent: Agent,
    program: AgentProgram,
    shows: Callable[[str | None], bool],
    limit: float = TYPED_WAIT,
) -> None:
    """Until the input box `shows` what is awaited, `limit` seconds at most."""
    deadline = time.monotonic() + limit
    while not shows(program.input_text(rt.tmux.capture(agent.session))) and time.monotonic() < deadline:
        time.sleep(0.02)


def _wait_typed(rt: Runtime, agent: Agent, program: AgentProgram, message: str) -> None:
    """Until the input box shows the message: TYPED_WAIT for it to start showing, then, while the box shows
    its start (Gemini CLI, given a paste as keys before it turned bracketed paste on, draws them one by one:
    seconds on a busy machine), ARRIVING_WAIT at most."""
    started = time.monotonic()
    while True:
        box = program.input_text(rt.tmux.capture(agent.session))
        waited = time.monotonic() - started
        if still_typed(box, message) or waited > (ARRIVING_WAIT if arriving(box, message) else TYPED_WAIT):
            return
        time.sleep(0.02)


def _submit(rt: Runtime, agent: Agent, program: AgentProgram, message: str, readable: bool) -> None:
    """Press Enter the send delay after the input box shows the message (Gemini CLI submits what it last
    drew: an Enter before it drew the text sends a part of it), then again while the message still sits
    there (an Enter taken by a completion menu after `@path`, made a newline by a paste guard, or lost
    while Gemini CLI resumes a session), SUBMIT_TRIES times at most. A screen with no box this program
    can read (not `readable`) gets one Enter, the send delay after the text."""
    if readable:
        _wait_typed(rt, agent, program, message)
    for _ in range(SUBMIT_TRIES):
        time.sleep(rt.settings.send_delay)
        rt.tmux.send_keys(agent.session, "Enter")
        time.sleep(SUBMIT_CHECK_DELAY)
        if not readable or _left_box(rt, agent, program, message):
            return
    raise NotSubmitted(
        f"the text is still in {agent.id}'s input box after {SUBMIT_TRIES} presses of Enter; "
        f"see it with ib look {agent.id}"
    )


def _left_box(rt: Runtime, agent: Agent, program: AgentProgram, message: str) -> bool:
    """Whether the message left the input box after an Enter: a box shows without it, or a dialog came (the
    turn began), or the box hid while the program works on it; not when the box held it for ENTER_WAIT
    (not sooner: a program that took the Enter but has not drawn it yet would take a second one as a second
    message). A box not drawn (Gemini CLI hides it while it resumes a session) is waited for, HIDDEN_WAIT
    at most."""
    held_since: float | None = None
    deadline = time.monotonic() + HIDDEN_WAIT
    while time.monotonic() < deadline:
        screen = rt.tmux.capture(agent.session)
        box = program.input_text(screen)
        if program.read_dialog(screen) is not None or (
            box is not None and not still_typed(box, message) and not arriving(box, message)
        ):
            return True
        # it hid the box to work on it, or for the usage-limit dialog the turn came to (Gemini CLI's)
        if box is None and program.pane_state(screen) in (PaneState.RUNNING, PaneState.RATE_LIMITED):
            return True
        held_since = (held_since or time.monotonic()) if box is not None else None
        if held_since is not None and time.monotonic() - held_since > ENTER_WAIT:
            return False
        time.sleep(0.05)
    raise NotSubmitted(
        f"{agent.id} shows no input box {HIDDEN_WAIT:.0f} s after the message was typed and Enter pressed; "
        f"see whether it arrived with ib look {agent.id}"
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
