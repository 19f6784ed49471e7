"""Our hooks in the primary session's R/.claude/settings.local.json: install, uninstall and status.

Every other key and hook in the file is kept; ours are recognised by their command (`<…/ib> hook
<name>`). A file that is not valid settings JSON is reported, never overwritten. Writes are atomic.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from bus.errors import ConfigError
from bus.settings.repo_paths import exclude_from_git
from bus.settings.settings_file import read_text
from worker.errors import HooksError
from worker.programs.claude.settings import HOOK_TIMEOUT, hook_command

SETTINGS_FILE = os.path.join(".claude", "settings.local.json")
OUR_HOOKS = frozenset({"post-tool-use", "primary-pre-tool-use", "tmux-status"})

BASE_HOOKS = (
    ("PostToolUse", "", "post-tool-use"),
    ("UserPromptSubmit", "", "post-tool-use"),
    ("PreToolUse", "Bash", "primary-pre-tool-use"),
)
"""(event, matcher, hook): the listener reminder and the guard against `cd` into agent worktrees."""
TMUX_HOOKS = (
    ("Stop", "", "tmux-status"),
    ("PostToolUse", "", "tmux-status"),
)
"""The tmux window indicator, when asked for."""
IB_RULE = "Bash(ib:*)"

Settings = dict[str, object]


@dataclass(frozen=True)
class InstalledHook:
    event: str
    hook: str
    command: str


@dataclass(frozen=True)
class HooksStatus:
    """What of ours the settings file holds; `missing` lists (event, hook) pairs of the base set."""

    path: str
    found: tuple[InstalledHook, ...]
    missing: tuple[tuple[str, str], ...]

    @property
    def installed(self) -> bool:
        return not self.missing

    @property
    def tmux_indicator(self) -> bool:
        return any(h.hook == "tmux-status" for h in self.found)


def settings_path(root: str) -> str:
    return os.path.join(root, SETTINGS_FILE)


def our_hook(command: object) -> str | None:
    """The hook name when `command` is one of ours (`<path ending in ib> hook <our hook>`), else None."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if (
        len(words) == 3
        and os.path.basename(words[0]) == "ib"
        and words[1] == "hook"
        and words[2] in OUR_HOOKS
    ):
        return words[2]
    return None


def install(root: str, ib_command: str, tmux_indicator: bool) -> list[str]:
    """Make the file hold exactly our wanted hooks (the tmux ones only with `tmux_indicator`), run by
    `ib_command` (the absolute `ib`). Returns what changed; installing twice changes nothing."""
    path = settings_path(root)
    settings = load_object(path)
    hooks = _hooks(settings, path)
    wanted = BASE_HOOKS + (TMUX_HOOKS if tmux_indicator else ())
    commands = {(event, hook): hook_command(ib_command, hook) for event, _, hook in wanted}
    changes = _remove(hooks, lambda event, hook, command: commands.get((event, hook)) != command)
    for event, matcher, hook in wanted:
        command = commands[(event, hook)]
        if any(found == command for _, found in _ours(hooks.get(event), path, event)):
            continue
        groups = hooks.get(event)
        entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
        hooks[event] = [*(groups if isinstance(groups, list) else []), {"matcher": matcher, "hooks": [entry]}]
        changes.append(f"added {event}: {command}")
    if changes:
        settings["hooks"] = hooks
    changes += _allow_ib(settings, path)
    if changes:
        write_object(path, settings)
        exclude_from_git(root, (f"/{SETTINGS_FILE}",))  # the person's own file, as Claude Code keeps it
    return changes


def _allow_ib(settings: Settings, path: str) -> list[str]:
    """`Bash(ib:*)` in the session's allow list: it runs `ib listen` again and again without asking."""
    permissions = settings.get("permissions", {})
    if not isinstance(permissions, dict):
        raise _malformed(path, '"permissions" is not an object')
    allow = permissions.get("allow", [])
    if not isinstance(allow, list):
        raise _malformed(path, '"permissions.allow" is not a list')
    if IB_RULE in allow:
        return []
    settings["permissions"] = {**permissions, "allow": [*allow, IB_RULE]}
    return [f"allowed {IB_RULE}: your session runs `ib listen` and other ib commands without asking"]


def _disallow_ib(settings: Settings) -> list[str]:
    """`Bash(ib:*)` out of the allow list again (and the list, and `permissions`, when that emptied them)."""
    permissions = settings.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    if not isinstance(permissions, dict) or not isinstance(allow, list) or IB_RULE not in allow:
        return []
    rest = {k: v for k, v in permissions.items() if k != "allow"}
    kept = [rule for rule in allow if rule != IB_RULE]
    if kept:
        rest["allow"] = kept
    if rest:
        settings["permissions"] = rest
    else:
        settings.pop("permissions")
    return [f"removed {IB_RULE} from permissions.allow"]


def uninstall(root: str) -> list[str]:
    """Remove our hooks (and the matcher groups and events that only they filled); keep the rest."""
    path = settings_path(root)
    if not os.path.exists(path):
        return []
    settings = load_object(path)
    hooks = _hooks(settings, path)
    changes = _remove(hooks, lambda _e, _h, _c: True)
    if changes:
        if hooks:
            settings["hooks"] = hooks
        else:
            settings.pop("hooks", None)
    changes += _disallow_ib(settings)
    if changes and not settings:  # only ours was in it: leave no empty file (nor folder) behind
        os.remove(path)
        with contextlib.suppress(OSError):  # a folder with the person's own files in it stays
            os.rmdir(os.path.dirname(path))
        changes.append(f"removed {path}, empty now")
    elif changes:
        write_object(path, settings)
    return changes


def status(root: str) -> HooksStatus:
    path = settings_path(root)
    hooks = _hooks(load_object(path), path)
    found = tuple(
        InstalledHook(event, hook, command)
        for event, groups in hooks.items()
        for hook, command in _ours(groups, path, event)
    )
    have = {(h.event, h.hook) for h in found}
    missing = tuple((event, hook) for event, _, hook in BASE_HOOKS if (event, hook) not in have)
    return HooksStatus(path, found, missing)


# --- the file --------------------------------------------------------------------------------------


def load_object(path: str) -> Settings:
    """The settings object; {} when the file does not exist; HooksError when it is not a JSON object."""
    try:  # the one settings-file reader: a FIFO or a device there is one line, never a hang
        text = (read_text(path) or "").removeprefix("\ufeff")
    except ConfigError as e:
        raise HooksError(str(e)) from e
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as e:
        raise _malformed(path, f"it is not valid JSON ({e})") from e
    if not isinstance(settings, dict):
        raise _malformed(path, "its top level is not a JSON object")
    return settings


def _malformed(path: str, what: str) -> HooksError:
    return HooksError(
        f"{path} is malformed: {what}. Fix the JSON by hand (it was left as it is) and try again."
    )


def _hooks(settings: Settings, path: str) -> dict[str, object]:
    """The `hooks` object, checked to have Claude Code's shape wherever we look."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise _malformed(path, '"hooks" is not an object')
    for event, groups in hooks.items():
        list(_ours(groups, path, event))  # validates the event's groups
    return dict(hooks)


def _ours(groups: object, path: str, event: str) -> list[tuple[str, str]]:
    """(hook name, command) of our hooks among an event's matcher groups (None: no groups)."""
    if groups is None:
        return []
    if not isinstance(groups, list):
        raise _malformed(path, f'"hooks.{event}" is not a list of matcher groups')
    found = []
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list):
            raise _malformed(path, f'a matcher group of "hooks.{event}" has no "hooks" list')
        for entry in entries:
            command = entry.get("command") if isinstance(entry, dict) else None
            name = our_hook(command)
            if name and isinstance(command, str):
                found.append((name, command))
    return found


def _remove(hooks: dict[str, object], drop: Callable[[str, str, str], bool]) -> list[str]:
    """Remove our entries that `drop(event, hook, command)` picks; groups and events emptied by that
    go too. `hooks` has been checked by `_hooks`."""
    changes: list[str] = []
    for event, groups in list(hooks.items()):
        assert isinstance(groups, list)
        kept_groups = []
        for group in groups:
            entries = group["hooks"]
            kept = [entry for entry in entries if not _dropped(event, entry, drop, changes)]
            if len(kept) == len(entries):
                kept_groups.append(group)
            elif kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        elif groups:
            del hooks[event]
    return changes


def _dropped(event: str, entry: object, drop: Callable[[str, str, str], bool], changes: list[str]) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    name = our_hook(command)
    if name and isinstance(command, str) and drop(event, name, command):
        changes.append(f"removed {event}: {command}")
        return True
    return False


def write_object(path: str, settings: Settings) -> None:
    """Replace the file atomically (a temp file in the same folder, then rename), keeping its mode."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        raise HooksError(f"cannot write {path}: {e}; check the folder's permissions and try again") from e
