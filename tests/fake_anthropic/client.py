"""Starting the real Claude Code CLI offline against the stand-in: where its binary is, a private HOME
that has finished onboarding, approved the key and trusts the repository, and the environment."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from tests.fake_anthropic.server import API_KEY

CLAUDE_CODE_VERSION = "2.1.332"
SDK_PACKAGE = "claude-agent-sdk==0.2.189"  # its wheel bundles the CLI binary of CLAUDE_CODE_VERSION
BINARY_SETTING = "IB_TEST_CLAUDE_BIN"


class ClaudeMissing(RuntimeError):
    """The pinned Claude Code binary is not installed."""


def claude_binary() -> Path:
    """The pinned CLI: `$IB_TEST_CLAUDE_BIN`, else the one bundled in the installed claude-agent-sdk."""
    if configured := os.environ.get(BINARY_SETTING):
        path = Path(configured)
    else:
        spec = importlib.util.find_spec("claude_agent_sdk")
        if spec is None or spec.origin is None:
            raise ClaudeMissing(f"{SDK_PACKAGE} is not installed; run `bash tests/run.sh` (it installs it)")
        path = Path(spec.origin).parent / "_bundled" / "claude"
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ClaudeMissing(
            f"no executable Claude Code at {path}; reinstall {SDK_PACKAGE} or set {BINARY_SETTING}"
        )
    return path


def write_home(home: Path, trusted: list[Path], settings: dict[str, Any] | None = None) -> Path:
    """A HOME whose `.claude.json` skips onboarding, approves API_KEY and trusts the given folders (a
    trusted folder covers everything below it); `settings` become the user's `~/.claude/settings.json`
    (e.g. `{"permissions": {"defaultMode": "default"}}` for permission dialogs instead of auto mode)."""
    home.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        (home / ".claude").mkdir(exist_ok=True)
        user_settings = json.dumps(settings, indent=2) + "\n"
        (home / ".claude" / "settings.json").write_text(user_settings, encoding="utf-8")
    config = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": CLAUDE_CODE_VERSION,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(folder): {"hasTrustDialogAccepted": True} for folder in trusted},
    }
    (home / ".claude.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return home


def client_env(base_url: str, home: Path) -> dict[str, str]:
    """The variables that point the CLI at the stand-in and keep it off every other network."""
    return {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }
