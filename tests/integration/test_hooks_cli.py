"""`ib hooks install | status | uninstall` through the real command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bus.connection.embedded import Embedded
from tests.cli import IbRunner, git


def test_install_status_uninstall(ib: IbRunner, repo: Path) -> None:
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(make:*)"]}}))
    assert "not installed" in ib.run("hooks", "status").stdout
    done = ib.run("hooks", "install", "--tmux-indicator")
    assert done.returncode == 0, done.stderr
    assert "added PostToolUse" in done.stdout
    assert git(repo, "status", "--porcelain") == ""  # it left `?? .claude/` there
    assert ib.run("hooks", "install", "--tmux-indicator").stdout.strip() == "already installed"
    status = ib.run("hooks", "status").stdout
    assert ": installed" in status and "tmux indicator: on" in status
    body = json.loads(settings.read_text())
    assert body["permissions"] == {"allow": ["Bash(make:*)", "Bash(ib:*)"]}  # your session runs ib unasked
    commands = [h["command"] for groups in body["hooks"].values() for g in groups for h in g["hooks"]]
    assert any(c.endswith("hook post-tool-use") for c in commands)
    assert ib.run("hooks", "uninstall").returncode == 0
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Bash(make:*)"]}}


def test_malformed_settings_is_one_clear_error(ib: IbRunner, repo: Path) -> None:
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    done = ib.run("hooks", "install")
    assert done.returncode == 1
    assert "settings.local.json" in done.stderr and "Traceback" not in done.stderr
    assert settings.read_text() == "{not json"


def test_the_readmes_uninstall_runs_to_its_end_with_the_bus_stopped(agents_ib: IbRunner, repo: Path) -> None:
    """`ib down --all && ib hooks uninstall && rm -rf .ib`: the hooks come out though `ib down --all` stopped
    the embedded bus, and nothing of ittybus is left in `git status`."""
    local = IbRunner(repo, {k: v for k, v in agents_ib.env.items() if k != "IB_REDIS_URL"})
    try:
        for step in (
            ["up", "--detach"],
            ["hooks", "install"],
            ["down", "--all", "--yes"],
            ["hooks", "uninstall"],
        ):
            done = local.run(*step, timeout=90)
            assert done.returncode == 0, (step, done.stderr)
    finally:
        local.run("down", "--all", "--yes", timeout=90)
        Embedded(str(repo)).stop()
    assert "removed PostToolUse" in done.stdout and f"removed {repo / '.claude'}" in done.stdout
    shutil.rmtree(repo / ".ib")
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".claude").exists()  # the file held only ours, and the folder only the file
