"""`ib mcp --http`: the same tools over streamable HTTP on loopback, through the SDK's client, for requests
that carry the token kept in `.ib/mcp-token` (made once, the person's alone); any other request is refused
with 401, and a port that is taken is one line."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bus.connection.embedded import free_port
from tests.cli import IbRunner
from tests.mcp_client import http_client
from tests.waiting import retry_until

INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", '
    b'"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}'
)


@contextmanager
def serving(ib: IbRunner, port: int) -> Iterator[subprocess.Popen[str]]:
    server = ib.popen("mcp", "--http", "--port", str(port))
    try:
        retry_until(lambda: _status(port, None) == 401 or server.poll() is not None, 30, what="ib mcp --http")
        assert server.poll() is None, server.communicate()
        yield server
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
        assert "Traceback" not in err, err


def _status(port: int, authorization: str | None) -> int | None:
    """The HTTP status of an MCP initialize request, or None while nothing listens."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    headers |= {"Authorization": authorization} if authorization else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", INITIALIZE, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def test_the_tools_over_http_for_the_token_only(agents_ib: IbRunner, repo: Path) -> None:
    port = free_port()
    with serving(agents_ib, port):
        token_file = repo / ".ib" / "mcp-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        with http_client(f"http://127.0.0.1:{port}/mcp", token) as client:
            assert "wait_for_events" in client.tool_names()
            assert client.ok("list_agents") == {"agents": []}
            assert client.ok("task_add", title="Paint the shed")["task"]["id"] == "paint-the-shed"
            assert client.error("kill", agent="ghost") == "no agent 'ghost' (see `ib list`)"
        assert _status(port, None) == 401
        assert _status(port, f"Bearer {token[:-1]}x") == 401
        assert _status(port, token) == 401  # the scheme too
        assert _status(port, f"Bearer {token}") == 200
    with serving(agents_ib, port):  # the same token again: a client's settings stay valid
        assert token_file.read_text().strip() == token
        assert _status(port, f"Bearer {token}") == 200


def test_a_port_that_is_taken_is_one_line(agents_ib: IbRunner) -> None:
    port = free_port()
    with serving(agents_ib, port):
        taken = agents_ib.run("mcp", "--http", "--port", str(port))
    assert (taken.returncode, taken.stdout) == (1, "")
    assert taken.stderr == f"ib mcp: error: port {port} on 127.0.0.1 is taken: give another with --port\n"


def test_a_token_file_that_is_not_a_token_is_one_line(agents_ib: IbRunner, repo: Path) -> None:
    (repo / ".ib").mkdir(mode=0o700)
    os.mkfifo(repo / ".ib" / "mcp-token")
    done = agents_ib.run("mcp", "--http", "--port", str(free_port()))
    assert done.returncode == 1
    path = repo / ".ib" / "mcp-token"
    said = f"ib mcp: error: {path} does not hold a token: delete it and start ib mcp --http again"
    assert done.stderr.strip() == said


@pytest.mark.claude
def test_the_real_claude_code_connects_with_the_token(
    agents_ib: IbRunner, repo: Path, tmp_path: Path, claude_bin: Path
) -> None:
    """Claude Code 2.1.332 reads an `http` entry whose header takes the token from the environment, as the
    guide writes it, and completes the MCP handshake (`claude mcp list`'s health check); without the token
    it does not."""
    port = free_port()
    entry = {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/mcp",
        "headers": {"Authorization": "Bearer ${IB_MCP_TOKEN}"},
    }
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"ittybus": entry}}))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["ittybus"]}))
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(repo): {"hasTrustDialogAccepted": True}}})
    )

    def listed(token: str) -> str:
        env = agents_ib.environ({"HOME": str(home), "IB_MCP_TOKEN": token})
        done = subprocess.run(
            [str(claude_bin), "mcp", "list"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.stdout + done.stderr

    with serving(agents_ib, port):
        token = (repo / ".ib" / "mcp-token").read_text().strip()
        assert f"ittybus: http://127.0.0.1:{port}/mcp (HTTP) - ✔ Connected" in listed(token), listed(token)
        assert "✔ Connected" not in listed("not-the-token")
