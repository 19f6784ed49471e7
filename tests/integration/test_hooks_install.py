"""Installing our hooks into the primary session's .claude/settings.local.json: a fresh file, a merge that
keeps everything else, idempotence, an uninstall that removes only ours, and a malformed file left alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from worker.errors import HooksError, WorkerError
from worker.hooks.install import install, our_hook, settings_path, status, uninstall

IB = "/opt/venv/bin/ib"
OLD_IB = "/old/venv/bin/ib"


def _read(root: Path) -> dict[str, object]:
    data = json.loads(Path(settings_path(str(root))).read_text())
    assert isinstance(data, dict)
    return data


def _write(root: Path, data: object) -> Path:
    path = Path(settings_path(str(root)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def _ours(root: Path) -> dict[str, list[tuple[str, str]]]:
    """event → (matcher, command) of our hooks."""
    hooks = _read(root).get("hooks", {})
    assert isinstance(hooks, dict)
    found: dict[str, list[tuple[str, str]]] = {}
    for event, groups in hooks.items():
        for group in groups:
            for hook in group["hooks"]:
                if our_hook(hook.get("command")):
                    found.setdefault(event, []).append((group.get("matcher", ""), hook["command"]))
    return found


BASE = {
    "PostToolUse": [("", f"{IB} hook post-tool-use")],
    "UserPromptSubmit": [("", f"{IB} hook post-tool-use")],
    "PreToolUse": [("Bash", f"{IB} hook primary-pre-tool-use")],
}
WITH_TMUX = {
    **BASE,
    "PostToolUse": [("", f"{IB} hook post-tool-use"), ("", f"{IB} hook tmux-status")],
    "Stop": [("", f"{IB} hook tmux-status")],
}


@pytest.mark.parametrize(("tmux", "expected"), [(False, BASE), (True, WITH_TMUX)], ids=["base", "with-tmux"])
def test_fresh_install(tmp_path: Path, tmux: bool, expected: dict[str, list[tuple[str, str]]]) -> None:
    changes = install(str(tmp_path), IB, tmux_indicator=tmux)
    assert len(changes) == sum(len(v) for v in expected.values()) + 1
    assert changes[-1].startswith("allowed Bash(ib:*)")  # the session runs `ib listen` without asking
    assert _ours(tmp_path) == expected
    data = _read(tmp_path)
    assert set(data) == {"hooks", "permissions"} and data["permissions"] == {"allow": ["Bash(ib:*)"]}
    entry = data["hooks"]["PreToolUse"][0]["hooks"][0]  # type: ignore[index]
    assert entry == {"type": "command", "command": f"{IB} hook primary-pre-tool-use", "timeout": 10}
    state = status(str(tmp_path))
    assert state.installed and state.missing == () and state.tmux_indicator is tmux


USER_HOOK = {"type": "command", "command": "./scripts/lint.sh"}
EXISTING = {
    "permissions": {"allow": ["Bash(make:*)"]},
    "model": "opus",
    "hooks": {
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [USER_HOOK]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def test_install_keeps_everything_else(tmp_path: Path) -> None:
    _write(tmp_path, EXISTING)
    install(str(tmp_path), IB, tmux_indicator=False)
    data = _read(tmp_path)
    assert data["permissions"] == {"allow": ["Bash(make:*)", "Bash(ib:*)"]} and data["model"] == "opus"
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    assert hooks["Notification"] == EXISTING["hooks"]["Notification"]  # type: ignore[index]
    assert hooks["PostToolUse"][0] == {"matcher": "Edit|Write", "hooks": [USER_HOOK]}
    assert _ours(tmp_path) == BASE
    uninstall(str(tmp_path))
    assert _read(tmp_path) == EXISTING


@pytest.mark.parametrize("tmux", [False, True], ids=["base", "with-tmux"])
def test_install_twice_adds_nothing(tmp_path: Path, tmux: bool) -> None:
    _write(tmp_path, EXISTING)
    install(str(tmp_path), IB, tmux_indicator=tmux)
    path = Path(settings_path(str(tmp_path)))
    first = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    assert install(str(tmp_path), IB, tmux_indicator=tmux) == []
    assert path.read_bytes() == first and path.stat().st_mtime_ns == mtime  # not even rewritten


def test_install_replaces_an_old_ib_path(tmp_path: Path) -> None:
    install(str(tmp_path), OLD_IB, tmux_indicator=True)
    changes = install(str(tmp_path), IB, tmux_indicator=True)
    assert sorted(c.split(":")[0] for c in changes) == sorted(
        [f"removed {e}" for e in ("PostToolUse", "PostToolUse", "UserPromptSubmit", "PreToolUse", "Stop")]
        + [f"added {e}" for e in ("PostToolUse", "PostToolUse", "UserPromptSubmit", "PreToolUse", "Stop")]
    )
    assert _ours(tmp_path) == WITH_TMUX


def test_install_without_tmux_removes_the_indicator(tmp_path: Path) -> None:
    install(str(tmp_path), IB, tmux_indicator=True)
    assert install(str(tmp_path), IB, tmux_indicator=False) == [
        f"removed PostToolUse: {IB} hook tmux-status",
        f"removed Stop: {IB} hook tmux-status",
    ]
    assert _ours(tmp_path) == BASE
    assert not status(str(tmp_path)).tmux_indicator


def test_uninstall_leaves_others(tmp_path: Path) -> None:
    mixed_group = {
        "matcher": "",
        "hooks": [USER_HOOK, {"type": "command", "command": f"{IB} hook post-tool-use"}],
    }
    look_alikes = [
        {"type": "command", "command": "/usr/bin/ibx hook post-tool-use"},  # not an `ib`
        {"type": "command", "command": f"{IB} hook stop"},  # not a hook of the primary session
        {"type": "command", "command": f"{IB} hook post-tool-use --verbose"},  # not ending in our name
        {"type": "command", "command": f"echo {IB} hook tmux-status"},  # not starting with ib
    ]
    _write(
        tmp_path,
        {
            "hooks": {
                "PostToolUse": [mixed_group],
                "Stop": [{"matcher": "", "hooks": look_alikes}],
                "SessionEnd": [],
            }
        },
    )
    install(str(tmp_path), IB, tmux_indicator=True)
    changes = uninstall(str(tmp_path))
    assert len(changes) == 6  # the post-tool-use in the mixed group was there already: not added twice
    assert _read(tmp_path) == {
        "hooks": {
            "PostToolUse": [{"matcher": "", "hooks": [USER_HOOK]}],
            "Stop": [{"matcher": "", "hooks": look_alikes}],
            "SessionEnd": [],  # empty before: not ours to remove
        }
    }
    assert uninstall(str(tmp_path)) == []


def test_uninstall_of_everything_ours_drops_the_hooks_key(tmp_path: Path) -> None:
    _write(tmp_path, {"model": "opus"})
    install(str(tmp_path), IB, tmux_indicator=True)
    uninstall(str(tmp_path))
    assert _read(tmp_path) == {"model": "opus"}
    assert status(str(tmp_path)).missing == (
        ("PostToolUse", "post-tool-use"),
        ("UserPromptSubmit", "post-tool-use"),
        ("PreToolUse", "primary-pre-tool-use"),
    )


def test_uninstall_and_status_without_a_file(tmp_path: Path) -> None:
    assert uninstall(str(tmp_path)) == []
    assert not Path(settings_path(str(tmp_path))).exists()
    state = status(str(tmp_path))
    assert (state.installed, state.found, state.path) == (False, (), settings_path(str(tmp_path)))


def test_ib_path_with_spaces_round_trips(tmp_path: Path) -> None:
    ib = "/home/me/my venv/bin/ib"
    install(str(tmp_path), ib, tmux_indicator=False)
    assert _ours(tmp_path)["PreToolUse"] == [("Bash", f"'{ib}' hook primary-pre-tool-use")]
    assert install(str(tmp_path), ib, tmux_indicator=False) == []
    assert len(uninstall(str(tmp_path))) == 5  # three hooks, the Bash(ib:*) rule and the file, empty now


def test_file_mode_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, {})
    path.chmod(0o600)
    install(str(tmp_path), IB, tmux_indicator=False)
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["settings.local.json"]  # no temp file left


MALFORMED = {
    "not-json": ('{"hooks": {', "not valid JSON"),
    "trailing-comma": ('{"model": "opus",}', "not valid JSON"),
    "top-level-list": ("[]", "top level is not a JSON object"),
    "hooks-not-object": ('{"hooks": []}', '"hooks" is not an object'),
    "event-not-list": ('{"hooks": {"Stop": {}}}', '"hooks.Stop" is not a list'),
    "group-without-hooks": ('{"hooks": {"Stop": [{"matcher": ""}]}}', 'matcher group of "hooks.Stop"'),
}


@pytest.mark.parametrize(("text", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_file_is_reported_and_untouched(tmp_path: Path, text: str, message: str) -> None:
    path = Path(settings_path(str(tmp_path)))
    path.parent.mkdir()
    path.write_text(text)
    for action in (
        lambda: install(str(tmp_path), IB, tmux_indicator=True),
        lambda: uninstall(str(tmp_path)),
        lambda: status(str(tmp_path)),
    ):
        with pytest.raises(HooksError) as caught:
            action()
        assert isinstance(caught.value, WorkerError)
        assert str(path) in str(caught.value) and message in str(caught.value)
        assert "Fix the JSON" in str(caught.value)
        assert path.read_text() == text
    assert os.listdir(path.parent) == ["settings.local.json"]


def test_empty_file_counts_as_empty_settings(tmp_path: Path) -> None:
    _write(tmp_path, {}).write_text("")
    install(str(tmp_path), IB, tmux_indicator=False)
    assert _ours(tmp_path) == BASE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"permissions": []}', '"permissions" is not an object'),
        ('{"permissions": {"allow": "x"}}', "not a list"),
    ],
    ids=["permissions-not-object", "allow-not-list"],
)
def test_malformed_permissions_are_reported_and_untouched(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, {})
    path.write_text(text)
    with pytest.raises(HooksError, match=message):
        install(str(tmp_path), IB, tmux_indicator=False)
    assert path.read_text() == text
    assert uninstall(str(tmp_path)) == [] and path.read_text() == text
