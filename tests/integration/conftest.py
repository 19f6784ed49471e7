"""Fixtures for tests that run `ib` for real: a temp repository and a runner bound to the test's bus."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli import IbRunner, init_repo
from tests.fake_anthropic import FakeAnthropic, claude_binary, client_env, write_home
from tests.fake_anthropic.client import ClaudeMissing


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


@pytest.fixture
def ib(repo: Path, tmp_path: Path, redis_url: str, namespace: str, rds: object) -> IbRunner:
    """`ib` on the shared test Redis in the test's namespace (the `rds` fixture scrubs it afterwards)."""
    return IbRunner(
        repo,
        {"IB_REDIS_URL": redis_url, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path / "spool")},
    )


@pytest.fixture
def tmux_socket() -> Iterator[str]:
    """A tmux server of the test's own; killed (and its socket file removed) afterwards."""
    name = f"ibtest-{uuid.uuid4().hex[:10]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False)
    socket_file = Path(f"/tmp/tmux-{os.getuid()}") / name
    socket_file.unlink(missing_ok=True)


@pytest.fixture
def agents_ib(ib: IbRunner, tmux_socket: str, tmp_path: Path) -> IbRunner:
    """`ib` whose agents are fake agents in the test's own tmux server."""
    ib.env.update(
        {
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_AGENT_COMMAND": f"{sys.executable} -m worker.fake.agent",
            "IB_FAKE_TRANSCRIPT_DIR": str(tmp_path / "transcripts"),
            "IB_FAKE_RECEIVED": str(tmp_path / "received.txt"),
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
            "IB_SEND_DELAY": "0.05",
        }
    )
    return ib


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    """The scripted Messages API on loopback; streams still held at the end are released."""
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def claude_bin() -> Path:
    """The pinned real Claude Code CLI; a missing one fails the test (the test command installs it)."""
    try:
        return claude_binary()
    except ClaudeMissing as e:
        pytest.fail(str(e))


@pytest.fixture
def claude_ib(
    ib: IbRunner, tmux_socket: str, tmp_path: Path, repo: Path, anthropic: FakeAnthropic, claude_bin: Path
) -> IbRunner:
    """`ib` whose agents are the real Claude Code CLI, offline against `anthropic`, in the test's own tmux
    server, with a private HOME that trusts the test repository (and so the agents' worktrees in it)."""
    home = write_home(tmp_path / "home", [repo])
    ib.unset_prefixes = ("IB_", "ANTHROPIC_", "CLAUDE")  # nothing of an outer Claude session leaks in
    ib.env.update(
        {
            **client_env(anthropic.base_url, home),
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_AGENT_COMMAND": str(claude_bin),
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
        }
    )
    return ib
