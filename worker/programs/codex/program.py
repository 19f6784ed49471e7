"""Codex CLI as an `AgentProgram`: a private CODEX_HOME per agent (the person's config.toml and login
carried over, hooks.json calling `ib hook codex`, the agent's worktree trusted), its command line (its
own workspace-write sandbox with ittybus's writable folders, approvals on request, notify calling
`ib hook codex-notify`, the bus's variables and keys kept from its commands) inside ittybus's bubblewrap
box, which hides what Codex's sandbox lets commands read, without the bus's address (its hooks and notify
go through the worker's relay), and its screen and approval dialog as `screen` reads them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from bus.costs.usage_limits import RecordedLimit
from bus.settings.permission_modes import BYPASS
from worker.programs.boxed_program import BoxedProgram
from worker.programs.bubblewrap import box
from worker.programs.codex.rollout import RolloutParser, recorded_limit
from worker.programs.codex.screen import (
    codex_input_text,
    codex_option_keys,
    codex_pane_state,
    read_codex_dialog,
)
from worker.programs.codex.usage import UsageReader
from worker.programs.jsonl import last_entries
from worker.programs.program import (
    Launch,
    Release,
    Sandbox,
    Start,
    TranscriptReading,
    UsageReading,
)
from worker.tmux import dialogs
from worker.tmux.dialogs import Dialog
from worker.tmux.pane_state import PaneState

VERSION_SHAPE = r"^codex-cli \d+\.\d+\.\d+"  # what `codex --version` prints
# the hook events ittybus listens to (worker.programs.codex.signals reads them)
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PermissionRequest", "PostToolUse", "Stop", "SessionEnd")
HOME = "codex-home"  # the agent's CODEX_HOME, in its folder
TMP = "tmp"  # its TMPDIR, beside and not around CODEX_HOME (else Codex's sandbox cannot start)
LINKED = ("auth.json",)  # linked: a login refreshed by one agent holds for all
ROLLOUT_TAIL = 65536  # bytes of the rollout read back for a usage limit: its last turn's entries
KEPT_FROM_COMMANDS = ("IB_*", "*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*CREDENTIALS*")
"""Variables Codex keeps from its commands' environment (its `shell_environment_policy.exclude`): ittybus's
own and anything named like a key; Codex itself and its hooks still get them."""


def person_home() -> Path:
    """The person's own CODEX_HOME, whose settings and login an agent starts from (`$CODEX_HOME`, as
    Codex itself reads it, else ~/.codex)."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def agent_home(launch: Launch) -> Path:
    return launch.folder / HOME


def hooks_file(ib_command: str) -> str:
    """hooks.json: every event ittybus listens to runs `ib hook codex` (the payload on its stdin)."""
    entry = [{"hooks": [{"type": "command", "command": shlex.join([ib_command, "hook", "codex"])}]}]
    return json.dumps({"hooks": dict.fromkeys(HOOK_EVENTS, entry)}, indent=2) + "\n"


def trusted_project(config: str, folder: str) -> str:
    """The config with `folder` trusted (no "do you trust this folder?" at start), unless it already is."""
    table = f"[projects.{json.dumps(folder)}]"
    if table in config:
        return config
    return f'{config.rstrip()}\n\n{table}\ntrust_level = "trusted"\n'.lstrip()


def overrides(launch: Launch) -> list[str]:
    """`-c key=value` settings (TOML values) that hold whatever the carried config.toml says: notify, and
    the sandbox's writable folders (the agent's repository and cache beside its worktree; /tmp and
    $TMPDIR left out, since other agents' worktrees and ittybus's files may live there)."""
    confinement = launch.confinement
    writable = [folder for folder in (confinement.git_dir, confinement.cache) if folder]
    settings = {
        "notify": json.dumps([launch.ib_command, "hook", "codex-notify"]),
        "check_for_update_on_startup": "false",
        # near a usage limit Codex stops the agent with a menu (switch to a cheaper model / keep this one)
        # that nobody is at the screen to answer, and a message typed then picks its first option
        "notice.hide_rate_limit_model_nudge": "true",
        "sandbox_workspace_write.writable_roots": json.dumps(writable),
        "sandbox_workspace_write.exclude_slash_tmp": "true",
        "sandbox_workspace_write.exclude_tmpdir_env_var": "true",
        "shell_environment_policy.exclude": json.dumps(list(KEPT_FROM_COMMANDS)),
    }
    return [word for key, value in settings.items() for word in ("-c", f"{key}={value}")]


def sign_in_missing(home: Path, environ: Mapping[str, str]) -> bool:
    """Whether Codex would open on its sign-in screen: no login in the person's CODEX_HOME (auth.json), no
    OPENAI_API_KEY, and no model provider of their own in config.toml (one with its own key, a local one)."""
    if (home / "auth.json").is_file() or environ.get("OPENAI_API_KEY"):
        return False
    try:
        config = (home / "config.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True
    return not any(line.lstrip().startswith("model_provider") for line in config.splitlines())


class CodexCli(BoxedProgram):
    """Codex CLI (`codex`, npm @openai/codex): its hooks.json and notify program are its own signal, its
    Linux sandbox (`--sandbox workspace-write`) keeps the agent's commands' writes in its worktree and
    ittybus's bubblewrap box around it keeps their reads out of the bus's and the person's secrets."""

    name = "codex"
    title = "Codex CLI"
    binary = "codex"
    version_shape = VERSION_SHAPE
    release = Release((0, 169, 0), (0, 169, 0), "npm install -g @openai/codex@0.169.0")
    sandbox = Sandbox.OWN_IN_BUBBLEWRAP
    # a `?` typed into its empty input box opens its shortcuts and is lost; a paste is text
    pastes = True
    probes_input = False
    refusal_untold = False
    limit_hook = False
    permission_hook = False
    bang_runs_shell = True

    def notes(self, command: str, root: str) -> list[str]:
        """A person who never signed in to Codex: the agent would open on its sign-in screen."""
        home = person_home()
        if not sign_in_missing(home, os.environ):
            return []
        return [
            f"Codex CLI has no login in {home} and OPENAI_API_KEY is not set: the agent will wait at Codex's "
            "sign-in screen; run `codex login` once first (agents use your login), or pick a way to sign "
            "in with `ib answer AGENT 2` (a device code, shown by `ib look AGENT`)"
        ]

    def prepare(self, launch: Launch) -> None:
        """The agent's CODEX_HOME: the person's config.toml (with the worktree trusted) and login, and
        hooks.json; its TMPDIR."""
        home, person = agent_home(launch), person_home()
        home.mkdir(parents=True, exist_ok=True)
        (launch.folder / TMP).mkdir(exist_ok=True)
        for name in LINKED:
            if (person / name).is_file() and not (home / name).exists():
                (home / name).symlink_to(person / name)
        config = home / "config.toml"
        if (person / "config.toml").is_file() and not config.exists():
            shutil.copyfile(person / "config.toml", config)
        carried = config.read_text(encoding="utf-8") if config.exists() else ""
        config.write_text(trusted_project(carried, launch.cwd), encoding="utf-8")
        (home / "hooks.json").write_text(hooks_file(launch.ib_command), encoding="utf-8")

    def start(self, launch: Launch) -> Start:
        """`codex` (or, to resume, `codex resume --last`: the agent's CODEX_HOME holds only its own
        sessions) in its sandbox, asking before anything that would leave it, in the bubblewrap box
        (Codex's sandbox nests in it; a command the person lets out of that sandbox stays in the box, with
        the box's PID namespace), where the person's Codex home shows only its login."""
        approval = "never" if launch.permission_mode == BYPASS else "on-request"
        words = [launch.command, *(["resume", "--last"] if launch.resume else [])]
        words += ["--no-daemon", "--dangerously-bypass-hook-trust"]  # the hooks are ittybus's own
        words += ["--sandbox", "workspace-write", "--ask-for-approval", approval, *overrides(launch)]
        words += ["--model", launch.model] if launch.model else []
        home, person = agent_home(launch), person_home()
        own = [str(home), str(launch.folder / TMP)]
        person_files = [str(person)], [str(person / name) for name in LINKED]
        boxed = box(launch.confinement, own, str(Path.home()), words, *person_files)
        line = shlex.join(boxed)
        if not launch.resume:
            line += f' "$(cat {shlex.quote(str(launch.prompt_file))})"'
        environment = {"CODEX_HOME": str(home), "TMPDIR": str(launch.folder / TMP)}
        # no bus address in Codex's environment: an escalated command (run outside Codex's sandbox once the
        # person approves it) could read it in /proc/<codex>/environ; the hooks' `ib` goes to the relay
        return Start(line, environment, relayed=True)

    def transcript_reader(self) -> TranscriptReading:
        """Its session log (`$CODEX_HOME/sessions/.../rollout-*.jsonl`, the path its hooks name)."""
        return RolloutParser()

    def usage_reader(self, last: str, task: str) -> UsageReading:
        return UsageReader(last, task)

    def pane_state(self, screen: str) -> PaneState:
        return codex_pane_state(screen)

    def recorded_limit(self, transcript_path: str) -> RecordedLimit | None:
        """The used-up window and its reset from the rollout's last turn (the API's headers as Codex
        records them: its screen says only "try again later" when the error carries no `resets_at`)."""
        return recorded_limit(last_entries(transcript_path, ROLLOUT_TAIL))

    def read_dialog(self, screen: str) -> Dialog | None:
        return read_codex_dialog(screen)

    def pick(self, dialog: Dialog, choice: str) -> int:
        return dialogs.pick(dialog, choice)

    def choose(self, dialog: Dialog, answer: str) -> int:
        return dialogs.option_for_answer(dialog, answer)

    def option_keys(self, dialog: Dialog, index: int) -> list[str]:
        return codex_option_keys(dialog, index)

    def input_text(self, screen: str) -> str | None:
        return codex_input_text(screen)

    def sent_count(self, screen: str, message: str) -> int | None:
        return None
