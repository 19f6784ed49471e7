"""`ib mcp install`: the server in the repository's .mcp.json (Claude Code's project scope) and enabled in
the person's .claude/settings.local.json, keeping what both files held; twice changes nothing; a malformed
file is left alone with one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli import IB, IbRunner


def test_install_registers_the_server_for_claude_code(ib: IbRunner, repo: Path) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"model": "opus"}))
    done = ib.run("mcp", "install")
    assert done.returncode == 0, done.stderr
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers == {
        "other": {"command": "x"},
        "ittybus": {"type": "stdio", "command": IB, "args": ["mcp"], "timeout": 620_000, "alwaysLoad": True},
    }
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert settings == {
        "model": "opus",
        "enabledMcpjsonServers": ["ittybus"],
        "env": {"MCP_CONNECT_TIMEOUT_MS": "30000"},
    }
    assert "/.claude/settings.local.json" in (repo / ".git" / "info" / "exclude").read_text()
    again = ib.run("mcp", "install")
    assert (again.returncode, again.stdout.strip()) == (0, "already installed")


def test_a_start_up_deadline_of_the_person_s_own_stands(ib: IbRunner, repo: Path) -> None:
    (repo / ".claude").mkdir()
    own = {"env": {"MCP_CONNECT_TIMEOUT_MS": "9000", "OTHER": "1"}}
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(own))
    assert ib.run("mcp", "install").returncode == 0
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert settings == {**own, "enabledMcpjsonServers": ["ittybus"]}


def test_a_settings_env_that_is_no_object_is_left_alone(ib: IbRunner, repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"env": ["MCP_CONNECT_TIMEOUT_MS"]}')
    done = ib.run("mcp", "install")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f'ib mcp: error: {repo / ".claude" / "settings.local.json"} is malformed: "env" is not an object. '
        "Fix it by hand and try again."
    )
    assert (repo / ".claude" / "settings.local.json").read_text() == '{"env": ["MCP_CONNECT_TIMEOUT_MS"]}'


def test_a_malformed_mcp_json_is_left_alone(ib: IbRunner, repo: Path) -> None:
    (repo / ".mcp.json").write_text('{"mcpServers": [1]}')
    done = ib.run("mcp", "install")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f'ib mcp: error: {repo / ".mcp.json"} is malformed: "mcpServers" is not an object. '
        "Fix it by hand and try again."
    )
    assert (repo / ".mcp.json").read_text() == '{"mcpServers": [1]}'


def test_the_real_claude_code_connects_to_the_installed_server(
    ib: IbRunner, repo: Path, tmp_path: Path, claude_bin: Path
) -> None:
    """Claude Code 2.1.332 reads the .mcp.json entry, takes it as enabled (no approval pending) in a trusted
    folder, starts `ib mcp` and completes the MCP handshake with it (`claude mcp list`'s health check)."""
    assert ib.run("mcp", "install").returncode == 0
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(repo): {"hasTrustDialogAccepted": True}}})
    )
    listed = subprocess.run(
        [str(claude_bin), "mcp", "list"],
        cwd=repo,
        env=ib.environ({"HOME": str(home)}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert f"ittybus: {IB} mcp - ✔ Connected" in listed.stdout, listed.stdout + listed.stderr
