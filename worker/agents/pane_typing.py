"""Typing a message into an agent's pane: once its program shows it reads keys, never into an open dialog,
then Enter until the message leaves the input box, and again when the program lost it. Each program's
screen is read through its AgentProgram (input box, state, dialogs, the messages it shows as sent)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bus.errors import DialogOpen
from bus.poll import wait_until
from bus.stores.agent_store import Agent
from worker.errors import WorkerError
from worker.programs.program import AgentProgram
from worker.runtime import Runtime
from worker.tmux.dialogs import Dialog, refusal
from worker.tmux.input_box import arriving, still_typed
from worker.tmux.pane_state import PaneState

log = logging.getLogger(__name__)

SUBMIT_CHECK_DELAY = 0.3  # seconds after Enter before looking whether the text left the input box
SUBMIT_TRIES = 4  # presses of Enter while the text stays in the input box
ENTER_WAIT = 3.0  # seconds an Enter may take to clear the input box before it is pressed again
HIDDEN_WAIT = 30.0  # seconds the input box may stay hidden after an Enter (Gemini CLI resuming a session)
TYPED_WAIT = 2.0  # seconds typed text may take to show in the input box on a busy machine
ARRIVING_WAIT = 30.0  # seconds a message the box shows the start of may take to show whole
UNDRAWN_WAIT = 30.0  # seconds a message may take to show in a box left as it was (a long paste)
DRAWING_WAIT = 3.0  # seconds a dialog a hook told may take to be drawn
PROBE_KEY = "x"  # typed and erased before a message, where the program asks for it
READY_WAIT = 15.0  # seconds a program may take to read its first key (Gemini CLI resuming a session)
STARTING_WAIT = 30.0  # seconds a program may take to draw its first screen (Claude Code on a busy machine)
TYPE_TRIES = 3  # times a message the program lost (never shown as sent) is typed
LOST_WAIT = 5.0  # seconds an emptied input box may stand without the message shown as sent
HISTORY_LINES = 200  # lines of the pane, scrollback included, read for the messages shown as sent


class NotSubmitted(WorkerError):
    """The text sits in the agent's input box, typed but not sent, however often Enter was pressed; or the
    program lost it each time it was typed."""


class NotStarted(WorkerError):
    """The agent's program has drawn nothing it reads keys behind, however long it was waited for."""


def type_message(rt: Runtime, agent: Agent, program: AgentProgram, message: str) -> None:
    """Type `message` into the agent's pane and submit it, never into an open dialog; typed again when the
    program lost it (TYPE_TRIES times at most). The caller holds the agent's typing turn."""
    for _ in range(TYPE_TRIES):
        if _type_once(rt, agent, program, message):
            rt.prompts.moved_on(agent.id)
            return
        log.warning("agent %s: the message typed was lost before it was sent; typing it again", agent.id)
    raise NotSubmitted(
        f"{agent.id} lost the text each of the {TYPE_TRIES} times it was typed (it never showed as sent); "
        f"see it with ib look {agent.id}, then send again"
    )


def _type_once(rt: Runtime, agent: Agent, program: AgentProgram, message: str) -> bool:
    """Type and submit the message once; False when the program lost it (see `_left_box`)."""
    screen = _started_screen(rt, agent, program)
    dialog = program.read_dialog(screen)
    if dialog is None and _told_not_drawn(rt, agent):
        dialog = _drawn_dialog(rt, agent, program)
    if dialog is not None:
        raise DialogOpen(refusal(agent.id, dialog))
    box = program.input_text(screen)  # None: no box this program's screen shows that it can read
    sent_before = _sent_count(rt, agent, program, message) if box is not None else None
    if program.probes_input and box is not None:
        _probe(rt, agent, program, box)
    typed = f" {message}" if program.bang_runs_shell and message.startswith("!") else message
    rt.tmux.send_text(agent.session, typed, enter=False, paste=program.pastes)
    return _submit(rt, agent, program, message, box, sent_before)


def _sent_count(rt: Runtime, agent: Agent, program: AgentProgram, message: str) -> int | None:
    """How often the pane, its scrollback included, shows `message` as sent; None where the program does
    not show that in a way ittybus reads (known without reading the pane)."""
    if program.sent_count("", message) is None:
        return None
    return program.sent_count(rt.tmux.capture(agent.session, lines=HISTORY_LINES), message)


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


def _probe(rt: Runtime, agent: Agent, program: AgentProgram, before: str) -> None:
    """Type a key and erase it, each once the input box (holding `before`) shows the one before, READY_WAIT
    at most: the program reads keys, and what comes next is read as what it is (a paste as a paste)."""
    rt.tmux.send_text(agent.session, PROBE_KEY, enter=False)
    _wait_box(rt, agent, program, lambda box: box is not None and box.endswith(PROBE_KEY), READY_WAIT)
    rt.tmux.send_keys(agent.session, "BSpace")
    _wait_box(rt, agent, program, lambda box: box == before, READY_WAIT)


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


def _wait_typed(rt: Runtime, agent: Agent, program: AgentProgram, message: str, before: str) -> str | None:
    """The input box once it shows the message: while the box stays as it was `before` the message was
    typed (Gemini CLI draws a 10,000-character paste seconds late on a busy machine, and an Enter before
    it is lost), UNDRAWN_WAIT at most; while it shows the message's start (Gemini CLI, given a paste as
    keys before it turned bracketed paste on, draws them one by one), ARRIVING_WAIT at most; while it
    shows anything else, TYPED_WAIT. Then the box as it stands."""
    started = time.monotonic()
    while True:
        box = program.input_text(rt.tmux.capture(agent.session))
        if still_typed(box, message) or time.monotonic() - started > _typing_wait(box, message, before):
            return box
        time.sleep(0.02)


def _typing_wait(box: str | None, message: str, before: str) -> float:
    """How long a box that does not show the message yet is waited for. Pure."""
    if box == before:
        return UNDRAWN_WAIT
    return ARRIVING_WAIT if arriving(box, message) else TYPED_WAIT


def _submit(
    rt: Runtime, agent: Agent, program: AgentProgram, message: str, box: str | None, sent_before: int | None
) -> bool:
    """Press Enter the send delay after the input box shows the message (Gemini CLI submits what it last
    drew: an Enter before it drew the text sends a part of it), then again while the message still sits
    there (an Enter taken by a completion menu after `@path`, made a newline by a paste guard, or lost
    while Gemini CLI resumes a session), SUBMIT_TRIES times at most. A screen with no `box` this program
    can read gets one Enter, the send delay after the text. False when the program lost the message: the
    box shows only a part of it however long it is waited for (erased then), or it emptied and the
    message never showed as sent. NotSubmitted when the box never showed anything of it: an Enter then
    would be lost, and the message may still show later (typed again, it would be there twice)."""
    if box is not None:
        shown = _wait_typed(rt, agent, program, message, box)
        if shown == box and not still_typed(shown, message):
            raise NotSubmitted(
                f"{agent.id} showed nothing of the message in its input box {UNDRAWN_WAIT:.0f} s after it "
                f"was typed, so Enter was not pressed; see it with ib look {agent.id}, then send again"
            )
        if shown is not None and arriving(shown, message) and shown.startswith(box):
            rt.tmux.send_keys(agent.session, *["BSpace"] * (len(shown) - len(box)))  # only a part came
            return False
    for _ in range(SUBMIT_TRIES):
        time.sleep(rt.settings.send_delay)
        rt.tmux.send_keys(agent.session, "Enter")
        time.sleep(SUBMIT_CHECK_DELAY)
        if box is None:
            return True
        left = _left_box(rt, agent, program, message, sent_before)
        if left is not None:
            return left
    raise NotSubmitted(
        f"the text is still in {agent.id}'s input box after {SUBMIT_TRIES} presses of Enter; "
        f"see it with ib look {agent.id}"
    )


def _left_box(
    rt: Runtime, agent: Agent, program: AgentProgram, message: str, sent_before: int | None
) -> bool | None:
    """After an Enter: True when the message left the input box (a box shows without it, or a dialog came,
    or the box hid while the program works on it); None when the box held it for ENTER_WAIT (not sooner: a
    program that took the Enter but has not drawn it yet would take a second one as a second message).
    Where the program shows the messages it took (`sent_before` counted them), an emptied box is not
    enough: False when the message did not show as sent in LOST_WAIT (Gemini CLI, sent to as it starts
    resuming a session, clears its box and forgets the message). A box not drawn (Gemini CLI hides it
    while it resumes a session) is waited for, HIDDEN_WAIT at most."""
    held_since: float | None = None
    emptied_at: float | None = None
    deadline = time.monotonic() + HIDDEN_WAIT
    while time.monotonic() < deadline:
        screen = rt.tmux.capture(agent.session)
        box = program.input_text(screen)
        state = program.pane_state(screen)
        if program.read_dialog(screen) is not None:
            return True
        if box is None:  # hidden to work on it, or for the usage-limit dialog the turn came to (Gemini CLI's)
            if state in (PaneState.RUNNING, PaneState.RATE_LIMITED):
                return True
            held_since = None
        elif still_typed(box, message) or arriving(box, message):
            held_since = held_since or time.monotonic()
            if time.monotonic() - held_since > ENTER_WAIT:
                return None
        else:  # the box emptied
            if sent_before is None or state is PaneState.RUNNING:
                return True
            count = _sent_count(rt, agent, program, message)
            if count is None or count > sent_before:
                return True
            emptied_at = emptied_at or time.monotonic()
            if time.monotonic() - emptied_at > LOST_WAIT:
                return False
        time.sleep(0.05)
    raise NotSubmitted(
        f"{agent.id} shows no input box {HIDDEN_WAIT:.0f} s after the message was typed and Enter pressed; "
        f"see whether it arrived with ib look {agent.id}"
    )
