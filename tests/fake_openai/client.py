"""Starting the real Codex CLI offline against the stand-in: where its binary is, a private CODEX_HOME
(config.toml with the fake provider, the approval policy and sandbox, the trusted repository, the model
migration notice already seen; optionally a notify program and hooks.json) and the environment."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from tests.fake_openai.server import API_KEY

CODEX_VERSION = "0.169.0"
CODEX_INSTALL = f"npm install -g @openai/codex@{CODEX_VERSION}"
BINARY_SETTING = "IB_TEST_CODEX_BIN"
MODEL = "gpt-5.5"  # a slug of Codex's built-in catalog: an unknown one loses the apply_patch tool
KEY_VARIABLE = "FAKE_OPENAI_API_KEY"  # not IB_*: agents get it through IB_AGENT_ENV
# the hook events Codex 0.169.0 runs a command for (hooks.json)
HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SessionEnd",
)


class CodexMissing(RuntimeError):
    """The pinned Codex CLI is not installed."""


def codex_binary() -> Path:
    """The pinned CLI: `$IB_TEST_CODEX_BIN`, else `codex` on PATH."""
    configured = os.environ.get(BINARY_SETTING) or shutil.which("codex")
    if not configured:
        raise CodexMissing(f"Codex CLI is not installed: {CODEX_INSTALL} (or run `bash tests/run.sh`)")
    return Path(configured)


def _quoted(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is written like a JSON one


def config_toml(
    base_url: str,
    trusted: Sequence[Path],
    *,
    approval: str = "on-request",
    sandbox: str = "workspace-write",
    notify: Sequence[str] = (),
    tmp_writable: bool = False,
    retries: int | None = None,
) -> str:
    """The config.toml that makes Codex talk only to the stand-in and ask nothing at start-up. Codex's
    workspace-write sandbox lets commands and patches write to /tmp and $TMPDIR as well as the working
    folder unless told not to; the tests' folders live under /tmp, so by default both are left out."""
    lines = [
        f"model = {_quoted(MODEL)}",
        'model_provider = "fake"',
        f"approval_policy = {_quoted(approval)}",
        f"sandbox_mode = {_quoted(sandbox)}",
        "check_for_update_on_startup = false",
    ]
    if notify:
        lines.append(f"notify = [{', '.join(_quoted(word) for word in notify)}]")
    lines += [
        "",
        "[model_providers.fake]",
        'name = "fake"',
        f"base_url = {_quoted(base_url)}",
        f"env_key = {_quoted(KEY_VARIABLE)}",
        'wire_api = "responses"',
        *(
            [f"request_max_retries = {retries}", f"stream_max_retries = {retries}"]
            if retries is not None
            else []
        ),
        "",
        "[notice.model_migrations]",
        f'{_quoted(MODEL)} = "gpt-6-sol"',
    ]
    if not tmp_writable:
        lines += [
            "",
            "[sandbox_workspace_write]",
            "exclude_slash_tmp = true",
            "exclude_tmpdir_env_var = true",
        ]
    for folder in trusted:
        lines += ["", f"[projects.{_quoted(str(folder))}]", 'trust_level = "trusted"']
    return "\n".join(lines) + "\n"


def hooks_json(command: str, events: Sequence[str] = HOOK_EVENTS) -> str:
    """hooks.json running `command` (the payload on its stdin) for each event."""
    entry = [{"hooks": [{"type": "command", "command": command}]}]
    return json.dumps({"hooks": {event: entry for event in events}}, indent=2) + "\n"


def write_codex_home(
    home: Path,
    base_url: str,
    trusted: Sequence[Path],
    *,
    approval: str = "on-request",
    sandbox: str = "workspace-write",
    notify: Sequence[str] = (),
    hook_command: str = "",
    retries: int | None = None,
) -> Path:
    """A CODEX_HOME for one run (see `config_toml`); `hook_command` adds a hooks.json."""
    home.mkdir(parents=True, exist_ok=True)
    config = config_toml(
        base_url, trusted, approval=approval, sandbox=sandbox, notify=notify, retries=retries
    )
    (home / "config.toml").write_text(config, encoding="utf-8")
    if hook_command:
        (home / "hooks.json").write_text(hooks_json(hook_command), encoding="utf-8")
    return home


def client_env(codex_home: Path, tmpdir: Path, home: Path) -> dict[str, str]:
    """The variables that point Codex at its home and the stand-in's key, with a HOME of its own: Codex
    runs each command in a login shell, which would otherwise read the machine's profile (this machine's
    runs `pyenv init`, whose rehash lock, left behind by a shell killed mid-rehash, holds every later login
    shell for a minute). `tmpdir` must not contain `codex_home`: a sandboxed command then fails (bwrap
    cannot find codex-linux-sandbox)."""
    if codex_home.resolve().is_relative_to(tmpdir.resolve()):
        raise ValueError(f"TMPDIR {tmpdir} contains CODEX_HOME {codex_home}; give them separate folders")
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        KEY_VARIABLE: API_KEY,
        "TMPDIR": str(tmpdir),
        "NO_PROXY": "127.0.0.1,localhost",
        "RUST_LOG": "error",
    }


def codex_args(*, bypass_hook_trust: bool = False) -> list[str]:
    """The flags every start gets: no background daemon, and hooks trusted without the review dialog."""
    return ["--no-daemon", *(["--dangerously-bypass-hook-trust"] if bypass_hook_trust else [])]
