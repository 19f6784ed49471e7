"""Starting the real Gemini CLI offline against the stand-in: where its binary is and its version, a
private HOME whose `~/.gemini/settings.json` picks API-key auth, turns off folder trust, updates,
statistics and telemetry and holds the hooks, and the environment that points it at the stand-in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.fake_gemini.server import API_KEY

GEMINI_CLI_VERSION = "0.61.0"
MODEL = "gemini-2.5-flash"
INSTALL = f"npm install -g @google/gemini-cli@{GEMINI_CLI_VERSION}"
BINARY_SETTING = "IB_TEST_GEMINI_BIN"


class GeminiMissing(RuntimeError):
    """The pinned Gemini CLI is not installed."""


def gemini_binary() -> Path:
    """The pinned CLI: `$IB_TEST_GEMINI_BIN`, else `gemini` on PATH."""
    found = os.environ.get(BINARY_SETTING) or shutil.which("gemini")
    if not found or not os.access(found, os.X_OK):
        raise GeminiMissing(f"no Gemini CLI on PATH; install it with `{INSTALL}` (tests/run.sh does)")
    return Path(found)


def gemini_version(binary: Path) -> str:
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def settings(hooks: dict[str, Any] | None = None) -> dict[str, Any]:
    """The user settings that let 0.61.0 start against the stand-in with no start-up dialog."""
    made: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "model": {"name": MODEL},
    }
    if hooks:
        made["hooks"] = hooks
    return made


def write_home(home: Path, hooks: dict[str, Any] | None = None) -> Path:
    """A HOME whose `.gemini/settings.json` is `settings(hooks)`."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    text = json.dumps(settings(hooks), indent=2) + "\n"
    (home / ".gemini" / "settings.json").write_text(text, encoding="utf-8")
    return home


def client_env(base_url: str, home: Path) -> dict[str, str]:
    """The variables that point the CLI at the stand-in and keep it off every other network."""
    return {
        "HOME": str(home),
        "GEMINI_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "NO_PROXY": "127.0.0.1,localhost",
        "NO_BROWSER": "true",
    }
