"""What ittybus needs from an agent program (Claude Code, Codex CLI, Gemini CLI, ...): the `AgentProgram`
protocol and the values it passes in and out. Each program implements it in its own module; nothing
outside those modules asks which program an agent runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from worker.errors import WorkerError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from bus.costs.usage import Usage
    from bus.costs.usage_limits import RecordedLimit
    from worker.permissions.policy import Permissions
    from worker.programs.confinement import Confinement
    from worker.programs.output import OutputItem
    from worker.tmux.dialogs import Dialog
    from worker.tmux.pane_state import PaneState

Version = tuple[int, int, int]


class ProgramError(WorkerError):
    """An agent program cannot be used as asked (unknown, not installed, not finished)."""


class UnknownProgram(ProgramError):
    """A `--cli` / IB_DEFAULT_CLI that names no registered program."""


class ProgramMissing(ProgramError):
    """The program's binary is not on PATH; the message says how to install it."""


class ProgramUnfinished(ProgramError):
    """ittybus's support for this program lacks a piece; the message names it."""


class Sandbox(StrEnum):
    """Who confines an agent's shell commands to its worktree."""

    OWN = "own"  # the program's own sandbox, configured by ittybus (Claude Code's settings, Codex's flags)
    BUBBLEWRAP = "bubblewrap"  # the program has none: ittybus starts it under bubblewrap
    OWN_IN_BUBBLEWRAP = "own in bubblewrap"  # its own sandbox holds writes, ittybus's box around it reads


@dataclass(frozen=True)
class Release:
    """The versions of a program ittybus was tested with, and how a person installs the pinned one."""

    oldest: Version
    newest: Version
    install: str  # the one command that installs the tested version

    @property
    def tested(self) -> str:
        return format_version(self.newest)

    def covers(self, version: Version) -> bool:
        return self.oldest <= version <= self.newest


@dataclass(frozen=True)
class Launch:
    """Everything a program needs to set up and start one agent: who it is, where its files go, what it
    may do. Built by the spawn (and a resume) from the agent's record; `note` writes a line to the
    agent's log."""

    agent_id: str
    role: str  # manager | worker
    command: str  # the program's command words (the program's binary, or IB_AGENT_COMMAND for Claude Code)
    cwd: str  # where it starts: its worktree, or the root for an agent without one
    root: str  # the person's repository
    folder: Path  # the agent's private folder (settings, prompt, start script)
    prompt_file: Path
    ib_command: str  # absolute path of `ib`, for hooks
    permission_mode: str
    permissions: Permissions
    confinement: Confinement
    session: str = ""  # the program's conversation id, when ittybus picks it
    model: str = ""
    resume: bool = False  # continue the conversation `session` instead of starting one
    note: Callable[[str], None] = field(default=lambda line: None)


@dataclass(frozen=True)
class Start:
    """How the agent's pane starts the program: the words after `exec env -i VAR=... \\`, and variables
    the program needs beside ittybus's own."""

    words: str
    environment: Mapping[str, str] = field(default_factory=dict)
    relayed: bool = False
    """The pane gets no bus address (a command of the agent could read it in the program's environment):
    its `ib`, hooks included, reaches the bus only through the worker's relay
    (bus.settings.relay_port.VIA_RELAY)."""


class TranscriptReading(Protocol):
    """Reads a program's transcript fed in pieces: items from the complete lines, and the bytes they took
    (a cut last line waits for the next piece)."""

    def feed(self, data: bytes) -> tuple[list[OutputItem], int]: ...


class UsageReading(Protocol):
    """Reads the tokens of each model answer from transcript lines, each answer once; `last` names the
    last answer counted, so the next reader starts after it."""

    last: str

    def lines(self, lines: Iterable[bytes | str]) -> list[Usage]: ...


class AgentProgram(Protocol):
    """One agent program. `name` is what `--cli` takes; every method that looks at the program's own
    output is pure, so it can be tested on captured screens and payloads."""

    name: str  # "claude", "codex", "gemini"
    title: str  # "Claude Code"
    binary: str  # the executable looked up on PATH
    release: Release
    sandbox: Sandbox
    pastes: bool  # each message goes into the input box as one bracketed paste, never as typed keys
    # the program draws its input box before it reads keys, and then reads the keys that came before as
    # one burst, a paste among them: a key typed and erased first shows when it reads them
    probes_input: bool
    # refusing a tool call cancels the turn and the model hears of it only with the next message: `ib deny`
    # sends one that says so
    refusal_untold: bool
    # a hook tells the plan's usage limit exactly (Claude Code's StopFailure): the pane watcher leaves the
    # limit of an agent whose hooks work to it; for the others the screen is the only one that tells
    limit_hook: bool
    # a hook tells each permission dialog with the call it asks about (Claude Code's PermissionRequest), as
    # the program draws it: the pane watcher, which knows only the screen, waits HOOK_GRACE for it first
    permission_hook: bool
    # a message that starts with `!` runs as a shell command however it comes (typed or pasted); one space
    # before it keeps it a message (Codex CLI trims the space, Claude Code keeps it)
    bang_runs_shell: bool

    def command(self, configured: str) -> str:
        """The command words that start the program; `configured` is IB_AGENT_COMMAND."""
        ...

    def version(self, command: str) -> Version | None:
        """The version the program reports (`<command> --version`); None when it cannot say."""
        ...

    def missing(self, command: str) -> str | None:
        """Why `command` cannot start (its binary not on PATH), saying how to install the program."""
        ...

    def unfinished(self) -> str | None:
        """What ittybus's support for this program still lacks (the spawn refuses then), or None."""
        ...

    def notes(self, command: str, root: str) -> list[str]:
        """What a person should know before an agent of this program starts in `root`."""
        ...

    def prepare(self, launch: Launch) -> None:
        """Write the program's settings, hooks and sandbox for one agent into `launch.folder` (and
        wherever else the program reads them), before its pane starts."""
        ...

    def carried_trust(self, cwd: str, root: str) -> bool:
        """Whether `prepare` carries the person's trust of `root` to an agent started in `cwd` in a file the
        program shares with its other sessions: one of those may write it back without the carried entry,
        so the worker answers the folder-trust dialog that then shows as the person did."""
        ...

    def start(self, launch: Launch) -> Start:
        """The start (or, with `launch.resume`, the resume) of the program in the agent's pane."""
        ...

    def transcript_reader(self) -> TranscriptReading:
        """A reader of this program's transcript (turns, tool calls, results), one per agent."""
        ...

    def usage_reader(self, last: str, task: str) -> UsageReading:
        """A reader of the tokens each answer used, starting after answer `last`, stamped with `task`."""
        ...

    def pane_state(self, screen: str) -> PaneState:
        """The state a captured screen shows; the fallback when the program's own signal is silent."""
        ...

    def recorded_limit(self, transcript_path: str) -> RecordedLimit | None:
        """The usage limit the program's own log (at `transcript_path`) recorded for its last turn, with the
        API's reset; None when it records none (the pane watcher reads the reset from the screen then)."""
        ...

    def read_dialog(self, screen: str) -> Dialog | None:
        """The dialog the screen shows, waiting for a person; None when there is none."""
        ...

    def pick(self, dialog: Dialog, choice: str) -> int:
        """The option that means `choice` (approve, always, deny); DialogError when the dialog has none."""
        ...

    def choose(self, dialog: Dialog, answer: str) -> int:
        """The option `answer` names: its number or label, or approve / always / deny; DialogError when
        none fits."""
        ...

    def input_text(self, screen: str) -> str | None:
        """The text the screen's input box holds ("" when empty); None when it shows no box this reads."""
        ...

    def sent_count(self, screen: str, message: str) -> int | None:
        """How many times the screen shows `message` among the messages the program took; None, whatever
        the screen, when the program does not show them in a way this reads (an emptied input box is then
        taken as sent)."""
        ...

    def option_keys(self, dialog: Dialog, index: int) -> list[str]:
        """The keys that pick option `index` of `dialog`."""
        ...


def format_version(version: Version | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"


def version_warning(program: AgentProgram, version: Version | None) -> str | None:
    """The warning for a version outside the tested range (None inside it, or when unknown)."""
    if version is None or program.release.covers(version):
        return None
    side = "older" if version < program.release.oldest else "newer"
    return (
        f"{program.title} {format_version(version)} is {side} than the versions ittybus was tested with "
        f"({format_version(program.release.oldest)} to {program.release.tested}); starting it anyway. "
        f"The tested one: {program.release.install}"
    )
