"""Claude Code as an `AgentProgram`: its settings file with our hooks, permission rules and sandbox, its
folder trust, its command line (`--settings`, `--session-id` / `--resume`), and its screen and dialogs as
worker.tmux reads them. The pieces live beside this module; this one ties them to the protocol."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from bus.costs.usage_limits import RecordedLimit
from bus.settings.permission_modes import BYPASS
from bus.settings.repo_paths import main_checkout
from worker.programs.claude import sandbox, settings, trust, version
from worker.programs.claude.transcript import TranscriptParser
from worker.programs.claude.usage import UsageReader
from worker.programs.mcp_registration import CONNECT_TIMEOUT, CONNECT_TIMEOUT_MS, mcp_config
from worker.programs.program import Launch, Release, Sandbox, Start, Version, format_version
from worker.tmux import dialogs, input_box
from worker.tmux.dialogs import Dialog
from worker.tmux.pane_state import PaneState, pane_state

HOOK_EVENTS = tuple(event for event, _ in settings.AGENT_HOOKS)


class ClaudeCode:
    """Claude Code (`claude`, npm @anthropic-ai/claude-code): hooks in its settings file are its own
    signal, its bubblewrap / Seatbelt sandbox is configured in the same file."""

    name = "claude"
    title = "Claude Code"
    binary = "claude"
    release = Release((2, 1, 78), (2, 1, 332), "npm install -g @anthropic-ai/claude-code@2.1.332")
    sandbox = Sandbox.OWN
    pastes = False
    probes_input = False
    refusal_untold = False
    limit_hook = True
    permission_hook = True
    bang_runs_shell = True

    def command(self, configured: str) -> str:
        return configured

    def version(self, command: str) -> Version | None:
        return version.program_version(command)

    def unfinished(self) -> str | None:
        return None

    def missing(self, command: str) -> str | None:
        """Why `command` cannot start (not shell words, not found), with how to install Claude Code."""
        return version.program_problem(command)

    def notes(self, command: str, root: str) -> list[str]:
        """Hook events this Claude Code lacks, and a repository it does not trust yet (the agent would
        wait at the folder-trust dialog)."""
        found = self.version(command)
        if found is None:
            return []  # not Claude Code (a fake agent, a wrapper): nothing to say
        notes = []
        lacking = version.lacking_events(found, HOOK_EVENTS)
        if lacking:
            notes.append(
                f"Claude Code {format_version(found)} has no {', '.join(lacking)} hook events; "
                f"agents run without them (tested with {version.TESTED_VERSION})"
            )
        trusted = main_checkout(root)  # Claude Code asks about a worktree's main checkout
        if not trust.claude_trusts(trusted):
            notes.append(
                f"Claude Code does not trust {trusted} yet: the agent will wait at the folder-trust dialog; "
                "answer it with `ib approve AGENT` (trust) or `ib deny AGENT` (refuse), or run `claude` "
                "there once and accept"
            )
        return notes

    def prepare(self, launch: Launch) -> None:
        """settings.json (hooks, permissions, sandbox) beside the prompt; the person's trust of the
        repository carried to the agent's own worktree."""
        found = self.version(launch.command)
        lacking = version.lacking_events(found, HOOK_EVENTS)
        if lacking:
            launch.note(f"Claude Code lacks the hook events {', '.join(lacking)}: left out")
        written = settings.build_agent_settings(
            launch.role, launch.permissions, launch.ib_command, lacking, launch.permission_mode
        )
        _confine(launch, written)
        settings_file(launch).write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
        if launch.role == "manager":
            registered = json.dumps(mcp_config(launch.ib_command), indent=2) + "\n"
            mcp_file(launch).write_text(registered, encoding="utf-8")
        if found is not None and self.carried_trust(launch.cwd, launch.root):
            trust.trust(launch.cwd)

    def carried_trust(self, cwd: str, root: str) -> bool:
        """The agent's own folder in a repository the person trusts: Claude Code asks about it (a repository
        of its own) even inside a trusted one. ~/.claude.json is every session's: another agent's Claude
        Code rewrites it from the copy it read at its start, without the entry `prepare` added since."""
        return cwd != root and trust.claude_trusts(main_checkout(root))

    def start(self, launch: Launch) -> Start:
        model = f" --model {shlex.quote(launch.model)}" if launch.model else ""
        session = shlex.quote(launch.session)
        words = f"{launch.command} --settings {shlex.quote(str(settings_file(launch)))}"
        if launch.role == "manager":  # its own server of ittybus's tools (acting with its rights)
            words += f" --mcp-config {shlex.quote(str(mcp_file(launch)))}"
        if launch.resume:  # the conversation goes on: no new prompt
            return Start(f"{words} --resume {session}{model}", _environment(launch))
        prompt = shlex.quote(str(launch.prompt_file))
        return Start(f'{words} --session-id {session}{model} "$(cat {prompt})"', _environment(launch))

    def transcript_reader(self) -> TranscriptParser:
        return TranscriptParser()

    def usage_reader(self, last: str, task: str) -> UsageReader:
        return UsageReader(last=last, task=task)

    def pane_state(self, screen: str) -> PaneState:
        return pane_state(screen)

    def recorded_limit(self, transcript_path: str) -> RecordedLimit | None:
        return None  # its StopFailure hook reads the limit from the transcript (claude.turn_quota)

    def read_dialog(self, screen: str) -> Dialog | None:
        return dialogs.read_dialog(screen)

    def pick(self, dialog: Dialog, choice: str) -> int:
        return dialogs.pick(dialog, choice)

    def choose(self, dialog: Dialog, answer: str) -> int:
        return dialogs.option_for_answer(dialog, answer)

    def option_keys(self, dialog: Dialog, index: int) -> list[str]:
        return dialogs.keys_for(dialog, index)

    def input_text(self, screen: str) -> str | None:
        return input_box.input_text(screen)

    def sent_count(self, screen: str, message: str) -> int | None:
        return None


def settings_file(launch: Launch) -> Path:
    return launch.folder / "settings.json"


def mcp_file(launch: Launch) -> Path:
    """A manager's `--mcp-config`: `ib mcp`, the person's tools with the manager's rights."""
    return launch.folder / "mcp.json"


def _environment(launch: Launch) -> dict[str, str]:
    """Claude Code refuses bypassPermissions as root unless told it runs in a sandbox (the spawn refused
    that mode as root where the sandbox is off); a manager's Claude Code waits for its `ib mcp` as long as
    the person's does."""
    environment = {CONNECT_TIMEOUT: str(CONNECT_TIMEOUT_MS)} if launch.role == "manager" else {}
    if launch.permission_mode == BYPASS and hasattr(os, "getuid") and os.getuid() == 0:
        environment["IS_SANDBOX"] = "1"
    return environment


def _confine(launch: Launch, written: dict[str, object]) -> None:
    """Claude Code's sandbox and read block in the agent's settings; where this machine has no sandbox,
    the agent's log says so, and so does stderr once per repository."""
    problem = sandbox.sandbox_problem()
    rules = written.setdefault("permissions", {})
    assert isinstance(rules, dict)
    rules.update(sandbox.permission_settings())
    written["sandbox"] = sandbox.sandbox_settings(launch.confinement, available=problem is None)
    if problem is None:
        return
    launch.note(f"No sandbox for Bash commands: {problem}; only the PreToolUse hook checks them")
    noted = Path(launch.root) / ".ib" / "no-sandbox-noted"
    if not noted.exists():
        noted.write_text(problem + "\n", encoding="utf-8")
        print(
            f"ib new-agent: warning: agents' commands run without a sandbox here ({problem}); "
            "only the PreToolUse hook checks them",
            file=sys.stderr,
        )
