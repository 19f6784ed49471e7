"""Gemini CLI as an `AgentProgram`: what is real today is its binary, version check and install line; its
settings (~/.gemini/settings.json), hooks (BeforeAgent / AfterAgent, Notification), screen states and
dialogs are named here and say they are not built yet, so a spawn refuses instead of starting an agent
nobody could follow."""

from __future__ import annotations

from collections.abc import Mapping

from worker.programs import probe
from worker.programs.program import (
    Launch,
    ProgramUnfinished,
    Release,
    Sandbox,
    Start,
    Version,
)
from worker.tmux.dialogs import Dialog
from worker.tmux.pane_state import PaneState

VERSION_SHAPE = r"^\s*\d+\.\d+\.\d+\s*$"  # `gemini --version` prints the bare version
NOT_BUILT = (
    "its settings.json, hooks signal, bubblewrap confinement, pane states and dialogs are not built yet"
)


def _unfinished(what: str) -> ProgramUnfinished:
    return ProgramUnfinished(f"gemini support is not finished: {what}")


def gemini_signal(payload: Mapping[str, object]) -> None:
    """Gemini CLI's hook payload (Notification, AfterAgent, ...) → the agent's state and event.
    Not built yet."""
    raise _unfinished("reading its hook payloads is not built yet")


def gemini_pane_state(screen: str) -> PaneState:
    """The state a Gemini CLI screen shows. Not built yet."""
    raise _unfinished("reading its screen is not built yet")


def gemini_dialog(screen: str) -> Dialog | None:
    """The approval dialog a Gemini CLI screen shows. Not built yet."""
    raise _unfinished("reading its dialogs is not built yet")


def gemini_pick(dialog: Dialog, choice: str) -> int:
    """The option of a Gemini CLI dialog that means approve / always / deny. Not built yet."""
    raise _unfinished("answering its dialogs is not built yet")


def gemini_option_keys(dialog: Dialog, index: int) -> list[str]:
    """The keys that pick an option of a Gemini CLI dialog. Not built yet."""
    raise _unfinished("answering its dialogs is not built yet")


def gemini_prepare(launch: Launch) -> None:
    """A private home with .gemini/settings.json (auth, folder trust off, model, hooks). Not built yet."""
    raise _unfinished("writing its settings.json is not built yet")


class GeminiCli:
    """Gemini CLI (`gemini`, npm @google/gemini-cli): no sandbox of its own on Linux, so ittybus
    starts it under bubblewrap."""

    name = "gemini"
    title = "Gemini CLI"
    binary = "gemini"
    release = Release((0, 61, 0), (0, 61, 0), "npm install -g @google/gemini-cli@0.61.0")
    sandbox = Sandbox.BUBBLEWRAP

    def command(self, configured: str) -> str:
        return self.binary  # IB_AGENT_COMMAND is Claude Code's (or its stand-in's)

    def version(self, command: str) -> Version | None:
        return probe.reported_version(command, VERSION_SHAPE)

    def unfinished(self) -> str | None:
        return f"gemini support is not finished: {NOT_BUILT}"

    def missing(self, command: str) -> str | None:
        if probe.installed(command):
            return None
        return f"{self.title} (`{self.binary}`) is not installed or not on PATH: {self.release.install}"

    def notes(self, command: str, root: str) -> list[str]:
        return []

    def prepare(self, launch: Launch) -> None:
        gemini_prepare(launch)

    def start(self, launch: Launch) -> Start:
        raise _unfinished("its command line is not built yet")

    def pane_state(self, screen: str) -> PaneState:
        return gemini_pane_state(screen)

    def read_dialog(self, screen: str) -> Dialog | None:
        return gemini_dialog(screen)

    def pick(self, dialog: Dialog, choice: str) -> int:
        return gemini_pick(dialog, choice)

    def choose(self, dialog: Dialog, answer: str) -> int:
        return gemini_pick(dialog, answer)

    def option_keys(self, dialog: Dialog, index: int) -> list[str]:
        return gemini_option_keys(dialog, index)
