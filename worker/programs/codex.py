"""Codex CLI as an `AgentProgram`: what is real today is its binary, version check and install line; its
settings (CODEX_HOME with config.toml), notify / hooks signal, screen states and dialogs are named here and
say they are not built yet, so a spawn refuses instead of starting an agent nobody could follow."""

from __future__ import annotations

from collections.abc import Mapping

from worker.programs import probe
from worker.programs.program import (
    Launch,
    ProgramUnfinished,
    Release,
    Sandbox,
    Start,
    TranscriptReading,
    UsageReading,
    Version,
)
from worker.tmux.dialogs import Dialog
from worker.tmux.pane_state import PaneState

VERSION_SHAPE = r"^codex-cli \d+\.\d+\.\d+"  # what `codex --version` prints
NOT_BUILT = "its CODEX_HOME settings, notify signal, pane states and dialogs are not built yet"


def _unfinished(what: str) -> ProgramUnfinished:
    return ProgramUnfinished(f"codex support is not finished: {what}")


def codex_signal(payload: Mapping[str, object]) -> None:
    """Codex's notify / hooks.json payload → the agent's state and event. Not built yet."""
    raise _unfinished("reading its notify and hooks payloads is not built yet")


def codex_pane_state(screen: str) -> PaneState:
    """The state a Codex CLI screen shows. Not built yet."""
    raise _unfinished("reading its screen is not built yet")


def codex_dialog(screen: str) -> Dialog | None:
    """The approval dialog a Codex CLI screen shows. Not built yet."""
    raise _unfinished("reading its dialogs is not built yet")


def codex_pick(dialog: Dialog, choice: str) -> int:
    """The option of a Codex CLI dialog that means approve / always / deny. Not built yet."""
    raise _unfinished("answering its dialogs is not built yet")


def codex_option_keys(dialog: Dialog, index: int) -> list[str]:
    """The keys that pick an option of a Codex CLI dialog. Not built yet."""
    raise _unfinished("answering its dialogs is not built yet")


def codex_transcript() -> TranscriptReading:
    """A reader of Codex CLI's session log (turns, tool calls, tokens). Not built yet."""
    raise _unfinished("reading its transcript is not built yet")


def codex_prepare(launch: Launch) -> None:
    """CODEX_HOME with config.toml (provider, approval policy, sandbox, trust, notify). Not built yet."""
    raise _unfinished("writing its CODEX_HOME settings is not built yet")


class CodexCli:
    """Codex CLI (`codex`, npm @openai/codex): its own Linux sandbox (`--sandbox workspace-write`)."""

    name = "codex"
    title = "Codex CLI"
    binary = "codex"
    release = Release((0, 169, 0), (0, 169, 0), "npm install -g @openai/codex@0.169.0")
    sandbox = Sandbox.OWN

    def command(self, configured: str) -> str:
        return self.binary  # IB_AGENT_COMMAND is Claude Code's (or its stand-in's)

    def version(self, command: str) -> Version | None:
        return probe.reported_version(command, VERSION_SHAPE)

    def unfinished(self) -> str | None:
        return f"codex support is not finished: {NOT_BUILT}"

    def missing(self, command: str) -> str | None:
        if probe.installed(command):
            return None
        return f"{self.title} (`{self.binary}`) is not installed or not on PATH: {self.release.install}"

    def notes(self, command: str, root: str) -> list[str]:
        return []

    def prepare(self, launch: Launch) -> None:
        codex_prepare(launch)

    def start(self, launch: Launch) -> Start:
        raise _unfinished("its command line is not built yet")

    def transcript_reader(self) -> TranscriptReading:
        return codex_transcript()

    def usage_reader(self, last: str, task: str) -> UsageReading:
        raise _unfinished("reading its token usage is not built yet")

    def pane_state(self, screen: str) -> PaneState:
        return codex_pane_state(screen)

    def read_dialog(self, screen: str) -> Dialog | None:
        return codex_dialog(screen)

    def pick(self, dialog: Dialog, choice: str) -> int:
        return codex_pick(dialog, choice)

    def choose(self, dialog: Dialog, answer: str) -> int:
        return codex_pick(dialog, answer)

    def option_keys(self, dialog: Dialog, index: int) -> list[str]:
        return codex_option_keys(dialog, index)
