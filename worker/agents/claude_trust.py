"""Whether Claude Code trusts a folder: its folder-trust dialog was accepted there or in a parent
(`projects[<folder>].hasTrustDialogAccepted` in ~/.claude.json). Claude Code runs no hooks before that
dialog is answered, so `ib new-agent` says so before it spawns into an untrusted repository."""

from __future__ import annotations

import json
import os
from pathlib import Path


def trusted_in(config: object, folder: str) -> bool:
    """Pure: does this ~/.claude.json content trust `folder` (or one of its parents)?"""
    projects = config.get("projects") if isinstance(config, dict) else None
    if not isinstance(projects, dict):
        return False
    path = Path(os.path.abspath(folder))
    for candidate in (path, *path.parents):
        entry = projects.get(str(candidate))
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
    return False


def claude_trusts(folder: str, home: str | None = None) -> bool:
    """Read ~/.claude.json of `home` (default: this user's); a missing or unreadable file trusts nothing."""
    config_file = Path(home or os.path.expanduser("~"), ".claude.json")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return trusted_in(config, folder)
