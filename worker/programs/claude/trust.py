"""Whether Claude Code trusts a folder: its folder-trust dialog was accepted there or in a parent
(`projects[<folder>].hasTrustDialogAccepted` in ~/.claude.json). Claude Code runs no hooks before that
dialog is answered, so `ib new-agent` says so before it spawns into an untrusted repository. An agent's
folder is a repository of its own, which Claude Code would ask about again: the spawn carries the person's
trust of the repository over to it (`trust`)."""

from __future__ import annotations

import json
import os
import uuid
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


def trust(folder: str, home: str | None = None) -> None:
    """Record in ~/.claude.json that `folder` is trusted, as accepting the dialog there would; the file is
    read just before and replaced whole, so a Claude Code writing it at the same moment loses nothing
    but what it wrote in between. A missing or unreadable file is left alone."""
    config_file = Path(home or os.path.expanduser("~"), ".claude.json")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    projects = config.setdefault("projects", {}) if isinstance(config, dict) else None
    entry = projects.setdefault(os.path.abspath(folder), {}) if isinstance(projects, dict) else None
    if not isinstance(entry, dict) or entry.get("hasTrustDialogAccepted") is True:
        return
    entry["hasTrustDialogAccepted"] = True
    fresh = config_file.with_name(f".claude.json.ib-{uuid.uuid4().hex[:8]}")
    fresh.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    os.chmod(fresh, config_file.stat().st_mode & 0o777)
    os.replace(fresh, config_file)
