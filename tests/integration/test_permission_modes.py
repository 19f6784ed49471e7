"""The permission mode an agent starts in: IB_PERMISSION_MODE, the per-role settings and `ib new-agent
--permission-mode`, written into the agent's Claude Code settings; bad values refused in one line; and
bypassPermissions as root, which Claude Code allows only inside a sandbox. Fake agents: what is checked
is what ittybus writes (the real CLI reading it: tests/integration/test_claude_code.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli import IbRunner
from worker.programs.claude.sandbox import sandbox_problem

MODES = "acceptEdits, default, manual, plan, auto, dontAsk, bypassPermissions"


def _spawn(ib: IbRunner, name: str, *args: str) -> None:
    done = ib.run("new-agent", "fake: say hi", "--name", name, *args)
    assert done.returncode == 0, done.stderr


def _settings(repo: Path, agent: str) -> dict[str, object]:
    permissions = json.loads((repo / ".ib" / "agents" / agent / "settings.json").read_text())["permissions"]
    assert isinstance(permissions, dict)
    return permissions


def test_the_mode_comes_from_the_flag_the_role_or_the_setting(agents_ib: IbRunner, repo: Path) -> None:
    agents_ib.env.update({"IB_PERMISSION_MODE": "dontAsk", "IB_WORKER_PERMISSION_MODE": "plan"})
    _spawn(agents_ib, "boss")
    _spawn(agents_ib, "hand", "--worker", "--manager", "boss")
    _spawn(agents_ib, "asked", "--permission-mode", "DEFAULT")
    modes = {agent: _settings(repo, agent)["defaultMode"] for agent in ("boss", "hand", "asked")}
    assert modes == {"boss": "dontAsk", "hand": "plan", "asked": "default"}
    assert "mode:      plan (Claude Code's permission mode)" in agents_ib.run("info", "hand").stdout


def test_the_default_is_accept_edits_with_auto_mode_off(agents_ib: IbRunner, repo: Path) -> None:
    _spawn(agents_ib, "plain")
    assert _settings(repo, "plain")["defaultMode"] == "acceptEdits"
    assert _settings(repo, "plain")["disableAutoMode"] == "disable"
    listed = json.loads(agents_ib.run("list", "--json").stdout)
    assert [a["permission_mode"] for a in listed] == ["acceptEdits"]


BAD = {
    "flag": (
        (),
        ("--permission-mode", "yolo"),
        f"ib new-agent: error: --permission-mode must be one of {MODES} (got 'yolo')",
    ),
    "setting": (
        (("IB_PERMISSION_MODE", "yolo"),),
        (),
        f"ib new-agent: error: bad configuration: IB_PERMISSION_MODE: must be one of {MODES} (got 'yolo')"
        " (set in the environment)",
    ),
    "role-setting": (
        (("IB_MANAGER_PERMISSION_MODE", "accept edits"),),
        (),
        "ib new-agent: error: bad configuration: IB_MANAGER_PERMISSION_MODE: must be one of "
        f"{MODES} (got 'accept edits') (set in the environment)",
    ),
}


@pytest.mark.parametrize(("env", "args", "says"), BAD.values(), ids=BAD.keys())
def test_an_unknown_mode_is_one_line(
    agents_ib: IbRunner, repo: Path, env: tuple[tuple[str, str], ...], args: tuple[str, ...], says: str
) -> None:
    done = agents_ib.run("new-agent", "fake: say hi", "--name", "never", *args, env=dict(env))
    assert (done.returncode, done.stderr) == (1, says + "\n")
    assert not (repo / ".ib" / "agents" / "never").exists()


def test_bypass_permissions_as_root_runs_only_in_the_sandbox(
    agents_ib: IbRunner, repo: Path, tmp_path: Path
) -> None:
    """Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1: ittybus sets it only when the
    agent's commands run in the sandbox, and refuses the mode as root on a machine without one."""
    assert sandbox_problem() is None, f"{sandbox_problem()}: tests/run.sh installs bubblewrap and socat"
    root = os.getuid() == 0
    _spawn(agents_ib, "free", "--permission-mode", "bypassPermissions")
    script = (repo / ".ib" / "agents" / "free" / "start.sh").read_text()
    assert ("IS_SANDBOX=1" in script) is root
    assert _settings(repo, "free")["defaultMode"] == "bypassPermissions"

    broken = tmp_path / "broken-bin"
    broken.mkdir()
    (broken / "bwrap").write_text("#!/bin/sh\necho 'no user namespaces' >&2\nexit 1\n")
    (broken / "bwrap").chmod(0o755)
    path = f"{broken}{os.pathsep}{os.environ['PATH']}"
    done = agents_ib.run(
        "new-agent",
        "fake: say hi",
        "--name",
        "loose",
        "--permission-mode",
        "bypassPermissions",
        env={"PATH": path},
    )
    if root:
        assert (done.returncode, done.stderr) == (
            1,
            "ib new-agent: error: bypassPermissions as root needs Claude Code's sandbox, and this machine "
            "has none (bubblewrap does not run here: no user namespaces); pick another permission mode, "
            "e.g. acceptEdits\n",
        )
    else:
        assert done.returncode == 0, done.stderr
