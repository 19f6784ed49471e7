"""`ib hook pre-tool-use` and `ib hook primary-pre-tool-use` run for real: denials printed in Claude
Code's format and logged to agent.log, silence for everything else, and never a failure."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import IB, IbRunner
from worker.permissions.policy import merge_permissions
from worker.programs.claude.settings import build_agent_settings

AGENT = "a1"
LOG_LINE = re.compile(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)?\] \[PreToolUse\] (?P<reason>.+)")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A main repository with agent a1 (worktree, generated settings with a user deny rule)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".ib" / "agents" / AGENT / "repo" / "src").mkdir(parents=True)
    (root / ".ib" / "agents" / "b2" / "repo").mkdir(parents=True)
    perms = merge_permissions(
        "worker", {"permissions": {"worker": {"deny": ["Bash(curl:*)"]}}}, None, ib_path=IB
    )
    settings = build_agent_settings("worker", perms, IB)
    (root / ".ib" / "agents" / AGENT / "settings.json").write_text(json.dumps(settings))
    return root


def _agent_env(root: Path, agent: str = AGENT) -> dict[str, str]:
    return {"IB_AGENT_ID": agent, "IB_ROOT": str(root), "IB_AGENT_ROLE": "worker"}


def _hook(
    root: Path, payload: object, env: dict[str, str] | None = None, hook: str = "pre-tool-use"
) -> tuple[int, str, str]:
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    worktree = root / ".ib" / "agents" / AGENT / "repo"
    done = IbRunner(worktree).run("hook", hook, stdin=stdin, env=_agent_env(root) if env is None else env)
    return done.returncode, done.stdout, done.stderr


def _log(root: Path, agent: str = AGENT) -> list[str]:
    path = root / ".ib" / "agents" / agent / "agent.log"
    return path.read_text().splitlines() if path.exists() else []


def _call(tool: str, **tool_input: object) -> dict[str, object]:
    return {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": "/"}


DENIED: dict[str, tuple[dict[str, object], str]] = {
    "read-main-repo": (
        _call("Read", file_path="{root}/README.md"),
        "Path violation: Read tried to access main repo: {root}/README.md.",
    ),
    "read-other-agent": (
        _call("Read", file_path="{root}/.ib/agents/b2/repo/a.py"),
        "Path violation: Read tried to access agent b2's folder: {root}/.ib/agents/b2/repo/a.py.",
    ),
    "dotdot-escape": (
        _call("Edit", file_path="../../../../x.py"),
        "Path violation: Edit tried to access main repo: {root}/x.py.",
    ),
    "cd-main-repo": (
        _call("Bash", command="cd {root} && ls"),
        "Path violation: Bash tried to cd into main repo: {root}.",
    ),
    "outside": (_call("Read", file_path="/etc/passwd"), "Permission denied: Read (file_path: /etc/passwd)."),
    "plan-mode": (
        _call("EnterPlanMode"),
        "Permission denied: EnterPlanMode. Agents work directly; plan mode is off.",
    ),
    "user-deny-rule": (
        _call("Bash", command="curl https://x.io"),
        "Permission denied: Bash (command: curl https://x.io). It matches the deny rule Bash(curl:*).",
    ),
    "user-deny-rule-through-wrappers": (
        _call("Bash", command="sudo -E env -i /usr/bin/curl https://x.io"),
        "Permission denied: Bash (command: sudo -E env -i /usr/bin/curl https://x.io). It matches the deny "
        "rule Bash(curl:*).",
    ),
}


def _fill(value: object, root: Path) -> object:
    if isinstance(value, str):
        return value.replace("{root}", str(root))
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


@pytest.mark.parametrize(("payload", "reason_start"), DENIED.values(), ids=DENIED.keys())
def test_denials_are_printed_and_logged(root: Path, payload: dict[str, object], reason_start: str) -> None:
    before = ["[2026-01-01T00:00:00+00:00] [PreToolUse] an older line"]
    (root / ".ib" / "agents" / AGENT / "agent.log").write_text(before[0] + "\n")
    code, out, err = _hook(root, _fill(payload, root))
    assert (code, err) == (0, "")
    output = json.loads(out)["hookSpecificOutput"]
    assert set(output) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny")
    reason = output["permissionDecisionReason"]
    assert reason.startswith(str(_fill(reason_start, root)))
    lines = _log(root)
    assert lines[0] == before[0] and len(lines) == 2
    logged = LOG_LINE.fullmatch(lines[1])
    assert logged and logged.group("reason") == reason


ALLOWED: dict[str, dict[str, object]] = {
    "read-in-worktree": _call("Read", file_path="{root}/.ib/agents/a1/repo/src/a.py"),
    "relative-in-worktree": _call("Write", file_path="src/b.py", content="x"),
    "tmp": _call("Write", file_path="/tmp/x.txt", content="x"),
    "cd-in-worktree": _call("Bash", command="cd src && ls"),
    "other-tool": _call("WebSearch", query="python"),
    "allowed-bash": _call("Bash", command="git status"),
}


@pytest.mark.parametrize("payload", ALLOWED.values(), ids=ALLOWED.keys())
def test_allowed_calls_are_silent(root: Path, payload: dict[str, object]) -> None:
    assert _hook(root, _fill(payload, root)) == (0, "", "")
    assert _log(root) == []


GARBAGE = {
    "empty": "",
    "blank": "  \n",
    "not-json": "garbage{",
    "list": "[1, 2]",
    "string": '"Read"',
    "no-tool-name": '{"tool_input": {"file_path": "/etc/passwd"}}',
    "tool-name-number": '{"tool_name": 5}',
    "binary": "\x00\x7f\x1b[0m",
}


@pytest.mark.parametrize("stdin", GARBAGE.values(), ids=GARBAGE.keys())
def test_bad_stdin_is_silent(root: Path, stdin: str) -> None:
    assert _hook(root, stdin) == (0, "", "")
    assert _log(root) == []


UNCHECKABLE = {
    "tool-input-list": '{"tool_name": "Read", "tool_input": ["/etc/passwd"]}',
    "file-path-list": '{"tool_name": "Write", "tool_input": {"file_path": ["/etc/x"], "content": "x"}}',
    "file-path-number": '{"tool_name": "Edit", "tool_input": {"file_path": 1, "old_string": "a"}}',
}


@pytest.mark.parametrize("stdin", UNCHECKABLE.values(), ids=UNCHECKABLE.keys())
def test_a_file_tool_call_that_cannot_be_checked_is_denied(root: Path, stdin: str) -> None:
    code, out, err = _hook(root, stdin)
    assert (code, err) == (0, "")
    assert '"permissionDecision":"deny"' in out and "so it cannot be checked" in out
    assert len(_log(root)) == 1


NOT_AGENT = {
    "no-env": {},
    "id-only": {"IB_AGENT_ID": AGENT},
    "root-only": {"IB_ROOT": "{root}"},
    "path-like-id": {"IB_AGENT_ID": "../a1", "IB_ROOT": "{root}"},
}


@pytest.mark.parametrize("env", NOT_AGENT.values(), ids=NOT_AGENT.keys())
def test_not_an_agent_is_silent(root: Path, env: dict[str, str]) -> None:
    filled = {k: v.replace("{root}", str(root)) for k, v in env.items()}
    assert _hook(root, _call("Read", file_path="/etc/passwd"), env=filled) == (0, "", "")


BROKEN_SETTINGS = {"missing": None, "not-json": "{nope", "wrong-shape": '{"permissions": []}'}


@pytest.mark.parametrize("text", BROKEN_SETTINGS.values(), ids=BROKEN_SETTINGS.keys())
def test_path_isolation_survives_a_broken_settings_file(root: Path, text: str | None) -> None:
    settings = root / ".ib" / "agents" / AGENT / "settings.json"
    settings.unlink()
    if text is not None:
        settings.write_text(text)
    code, out, _ = _hook(root, _call("Read", file_path=f"{root}/README.md"))
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    code, out, _ = _hook(root, _call("EnterPlanMode"))
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_path_isolation_survives_a_settings_file_that_is_no_file(root: Path, kind: str) -> None:
    """Read through the settings-file reader: the hook neither blocks on a FIFO nor reads /dev/zero (the
    run's timeout turns a hang into a failure)."""
    settings = root / ".ib" / "agents" / AGENT / "settings.json"
    settings.unlink()
    if kind == "fifo":
        os.mkfifo(settings)
    else:
        settings.symlink_to("/dev/zero")
    code, out, _ = _hook(root, _call("Read", file_path=f"{root}/README.md"))
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_denies_even_when_the_log_cannot_be_written(root: Path) -> None:
    env = _agent_env(root, "gone")  # no folder for this agent: nowhere to log
    code, out, err = _hook(root, _call("Read", file_path=f"{root}/README.md"), env=env)
    assert (code, err) == (0, "")
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert not (root / ".ib" / "agents" / "gone").exists()


# --- the primary session's guard -----------------------------------------------------------------

PRIMARY: dict[str, tuple[dict[str, object], bool]] = {
    "cd-agent-worktree": (_call("Bash", command="cd .ib/agents/a1/repo && git log"), True),
    "pushd-agent-worktree": (_call("Bash", command="pushd {root}/.ib/agents/b2/repo"), True),
    "cd-src": (_call("Bash", command="cd src"), False),
    "read-worktree-file": (_call("Read", file_path="{root}/.ib/agents/a1/repo/a.py"), False),
    "plan-mode": (_call("EnterPlanMode"), False),
}


@pytest.mark.parametrize(("payload", "denied"), PRIMARY.values(), ids=PRIMARY.keys())
def test_primary_guard(root: Path, payload: dict[str, object], denied: bool) -> None:
    filled = _fill({**payload, "cwd": str(root)}, root)
    code, out, err = _hook(root, filled, env={}, hook="primary-pre-tool-use")
    assert (code, err) == (0, "")
    if denied:
        output = json.loads(out)["hookSpecificOutput"]
        assert output["permissionDecision"] == "deny"
        assert output["permissionDecisionReason"].startswith("Path violation: Bash tried to cd into agent ")
    else:
        assert out == ""
    assert _log(root) == []


@pytest.mark.parametrize("stdin", GARBAGE.values(), ids=GARBAGE.keys())
def test_primary_guard_bad_stdin_is_silent(root: Path, stdin: str) -> None:
    assert _hook(root, stdin, env={}, hook="primary-pre-tool-use") == (0, "", "")


def test_primary_guard_is_silent_inside_an_agent(root: Path) -> None:
    payload = {**_call("Bash", command="cd .ib/agents/b2/repo"), "cwd": str(root)}
    assert _hook(root, payload, hook="primary-pre-tool-use") == (0, "", "")


def test_hooks_import_nothing_heavy() -> None:
    """The hooks run on every tool call: no pydantic, redis, typer, rich, libtmux or telegram."""
    code = (
        "import sys, worker.hooks.pre_tool_use, worker.hooks.primary_guard, bus.settings.repo_paths\n"
        "heavy = {'pydantic', 'pydantic_settings', 'redis', 'typer', 'rich', 'libtmux', 'telegram'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_log_line_stays_one_line(root: Path) -> None:
    code, out, _ = _hook(root, _call("Read", file_path=f"{root}/a\nb"))
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert code == 0 and "\n" in reason
    [line] = _log(root)
    logged = LOG_LINE.fullmatch(line)
    assert logged and logged.group("reason") == reason.replace("\n", "\\n")
