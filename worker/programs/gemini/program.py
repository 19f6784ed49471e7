"""Gemini CLI as an `AgentProgram`: a private HOME whose `.gemini/settings.json` holds ittybus's hooks
(`ib hook gemini` on BeforeAgent, AfterAgent, BeforeTool, AfterTool, Notification, SessionEnd), API-key
auth, no folder-trust dialog, no updates or telemetry, and the bus's variables redacted from the shell
tool, and whose user policy lets it run the git commands every agent runs unasked (a task's agent commits
unattended); the program started in ittybus's bubblewrap box (worker.programs.bubblewrap), since it has no
sandbox of its own on Linux, without the bus's address (its hooks go through the worker's relay); its
screen and dialogs read by worker/tmux/gemini_screen.py."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from bus.costs.usage_limits import RecordedLimit
from worker.markers import COMPLETION_MARKER
from worker.permissions.policy import GIT_UNASKED
from worker.programs.boxed_program import BoxedProgram
from worker.programs.bubblewrap import box
from worker.programs.gemini.chat import ChatParser
from worker.programs.gemini.usage import UsageReader
from worker.programs.program import (
    Launch,
    Release,
    Sandbox,
    Start,
    TranscriptReading,
    UsageReading,
)
from worker.tmux import gemini_screen
from worker.tmux.dialogs import MEANINGS, Dialog
from worker.tmux.pane_state import PaneState

VERSION_SHAPE = r"^\s*\d+\.\d+\.\d+\s*$"  # `gemini --version` prints the bare version
HOOKED = ("BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "Notification", "SessionEnd")
HOOK_TIMEOUT_MS = 10000
KEY = "GEMINI_API_KEY"  # what the API-key sign-in reads
REDACTED = ("IB_REDIS_URL", KEY, "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS")
"""Variables Gemini CLI keeps from its shell tool's commands (its hooks still get them)."""
APPROVAL_MODES = {"acceptEdits": "auto_edit", "plan": "plan", "bypassPermissions": "yolo"}
"""ittybus's permission modes (Claude Code's names) as Gemini CLI's `--approval-mode`; every other mode
(default, manual, auto, dontAsk) asks: Gemini CLI has no classifier and no refuse-without-asking mode."""
_ANSWER = "✦ "  # the start of each piece of the model's answer
_IDLE_HINT = "Type your message"  # the empty input box, which starts like a sent prompt
_STATES = {
    gemini_screen.CREATING: PaneState.CREATING,
    gemini_screen.WORKING: PaneState.RUNNING,
    gemini_screen.DIALOG: PaneState.PERMISSION,
    gemini_screen.LIMITED: PaneState.RATE_LIMITED,  # the pane watcher parks the agent on it
    gemini_screen.EXITED: PaneState.STOPPED,
    gemini_screen.UNKNOWN: PaneState.UNKNOWN,
}


def key_missing(environ: Mapping[str, str]) -> bool:
    """Whether the agents' sign-in would find no key: their settings choose Gemini's API-key sign-in, which
    reads the key from the environment the worker passes on (GEMINI_* variables). Pure."""
    return not environ.get(KEY, "").strip()


def home(launch: Launch) -> Path:
    """The agent's own HOME: Gemini CLI keeps its settings and chats in `~/.gemini`."""
    return launch.folder / "home"


def settings(ib_command: str, model: str = "") -> dict[str, object]:
    """The agent's `~/.gemini/settings.json`. Pure."""
    hook = {"type": "command", "command": f"{shlex.quote(ib_command)} hook gemini", "name": "ittybus"}
    hook["timeout"] = HOOK_TIMEOUT_MS  # type: ignore[assignment]
    return {
        "security": {
            "auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": False},
            "environmentVariableRedaction": {"enabled": True, "blocked": list(REDACTED)},
        },
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "model": {"name": model} if model else {},
        "hooks": {event: [{"matcher": "*", "hooks": [hook]}] for event in HOOKED},
    }


POLICY_FILE = "ittybus.toml"  # in the agent's ~/.gemini/policies/
POLICY_PRIORITY = 100  # of the user tier: over Gemini CLI's defaults, which ask before any shell command


def policy() -> str:
    """The agent's user policy (Gemini CLI's policy engine, TOML): the git subcommands every agent runs
    without asking are allowed; every other shell command still asks. Not `tools.allowed`, which turns
    every shell command it does not name into a refusal. Pure."""
    prefixes = ", ".join(json.dumps(f"git {sub}") for sub in GIT_UNASKED)
    return (
        "# written by ittybus for this agent: the git commands its agents run unasked\n"
        "[[rule]]\n"
        'toolName = "run_shell_command"\n'
        f"commandPrefix = [{prefixes}]\n"
        'decision = "allow"\n'
        f"priority = {POLICY_PRIORITY}\n"
    )


def approval_mode(permission_mode: str) -> str:
    """Gemini CLI's approval mode for an agent of `permission_mode`. Pure."""
    return APPROVAL_MODES.get(permission_mode, "default")


def pane_state(screen: str) -> PaneState:
    """The screen's state in ittybus's words: an idle input box after a reply is `complete` when the reply
    ends with the completion marker, `error` when an API error ended the turn, else `waiting`."""
    seen = gemini_screen.read_screen(screen)
    if seen.state != gemini_screen.IDLE:
        return _STATES[seen.state]
    if seen.error:
        return PaneState.ERROR
    return PaneState.COMPLETE if COMPLETION_MARKER in last_reply(screen) else PaneState.WAITING


def last_reply(screen: str) -> list[str]:
    """The stripped lines of the model's last answer (from its last `✦` line) when it came after the
    person's last prompt (` > ...`); none otherwise. The agent's first prompt names the completion marker
    on a line of its own, and Gemini CLI shows a prompt as it was sent. Pure."""
    lines = screen.splitlines()
    sent = gemini_screen.SENT_PROMPT
    prompts = [i for i, line in enumerate(lines) if sent.match(line) and _IDLE_HINT not in line]
    answers = [i for i, line in enumerate(lines) if line.startswith(_ANSWER)]
    if not answers or (prompts and answers[-1] < prompts[-1]):
        return []
    return [line.strip() for line in lines[answers[-1] :]]


def choose(dialog: Dialog, answer: str) -> int:
    """The option an answer names: its number or label, or approve / always / deny in any of the words
    the events offer ("approve always")."""
    meaning = MEANINGS.get(answer.strip().casefold(), answer)
    return gemini_screen.pick(dialog, meaning)


class GeminiCli(BoxedProgram):
    """Gemini CLI (`gemini`, npm @google/gemini-cli): no sandbox of its own on Linux, so ittybus
    starts it under bubblewrap."""

    name = "gemini"
    title = "Gemini CLI"
    binary = "gemini"
    version_shape = VERSION_SHAPE
    release = Release((0, 61, 0), (0, 61, 0), "npm install -g @google/gemini-cli@0.61.0")
    sandbox = Sandbox.BUBBLEWRAP
    # 0.61 takes a typed `?` in an empty input box as its shortcuts key and `!` as its shell mode, and
    # judges "empty" by what it last drew (a `?` in a burst of keys that starts in an empty box is lost);
    # a paste is text, whatever it holds
    pastes = True
    # 0.61 turns bracketed paste on and reads keys some time after it drew its input box (seconds, on a
    # busy machine, after `--resume`): a paste before that arrives as typed keys
    probes_input = True
    # "No, suggest changes" cancels the turn ("Request cancelled."), and the model sees the cancelled call
    # only with the next prompt
    refusal_untold = True
    limit_hook = False
    permission_hook = False
    bang_runs_shell = False  # typed, a `!` in an empty box is its shell mode; a paste is text

    def notes(self, command: str, root: str) -> list[str]:
        """No API key where the agent takes it from: its first turn would fail."""
        if not key_missing(os.environ):
            return []
        return [
            f"{KEY} is not set here: Gemini CLI agents sign in with an API key, passed on from this "
            "environment; without one the agent's first turn fails ('Could not load the default "
            "credentials') and it waits at Gemini CLI's 'Enter Gemini API Key' box; export "
            f"{KEY} where `ib up` runs the worker"
        ]

    def prepare(self, launch: Launch) -> None:
        folder = home(launch) / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        written = json.dumps(settings(launch.ib_command, launch.model), indent=2) + "\n"
        (folder / "settings.json").write_text(written, encoding="utf-8")
        (folder / "policies").mkdir(exist_ok=True)
        (folder / "policies" / POLICY_FILE).write_text(policy(), encoding="utf-8")

    def start(self, launch: Launch) -> Start:
        person_home = os.path.expanduser("~")
        own = str(home(launch))
        words = [launch.command, "--approval-mode", approval_mode(launch.permission_mode)]
        if launch.resume:
            words += ["--resume", "latest"]
            tail = ""
        else:
            words += ["--prompt-interactive"]
            tail = f' "$(cat {shlex.quote(str(launch.prompt_file))})"'
        boxed = box(launch.confinement, [own], person_home, words)
        environment = {"HOME": own, "GEMINI_CLI_NO_RELAUNCH": "true"}
        # the box shares the program's environment with the agent's commands: no bus address in it; the
        # hooks' `ib` goes to the worker's relay
        return Start(" ".join(shlex.quote(w) for w in boxed) + tail, environment, relayed=True)

    def transcript_reader(self) -> TranscriptReading:
        """Its chat log (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, the path its hooks name)."""
        return ChatParser()

    def usage_reader(self, last: str, task: str) -> UsageReading:
        return UsageReader(last, task)

    def pane_state(self, screen: str) -> PaneState:
        return pane_state(screen)

    def recorded_limit(self, transcript_path: str) -> RecordedLimit | None:
        return None

    def read_dialog(self, screen: str) -> Dialog | None:
        return gemini_screen.read_screen(screen).dialog

    def pick(self, dialog: Dialog, choice: str) -> int:
        return gemini_screen.pick(dialog, choice)

    def choose(self, dialog: Dialog, answer: str) -> int:
        return choose(dialog, answer)

    def option_keys(self, dialog: Dialog, index: int) -> list[str]:
        option = dialog.options[index]
        return [str(option.number)] if option.number is not None else [option.key]

    def input_text(self, screen: str) -> str | None:
        return gemini_screen.input_text(screen)

    def sent_count(self, screen: str, message: str) -> int | None:
        return gemini_screen.sent_count(screen, message)
