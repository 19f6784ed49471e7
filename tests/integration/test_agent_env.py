"""No secrets in agents: an agent starts with an explicit environment, whatever the tmux server was
started with — its global environment included — and the server's global secrets are scrubbed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli import IbRunner
from tests.waiting import retry_until

TOKEN = "123456:SECRET-bot-token"


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(entry.decode().partition("=")[::2] for entry in raw.split(b"\0") if entry)


def _agent_environ(socket: str, session_suffix: str) -> dict[str, str]:
    """The environment of the agent's process, once its start script has exec'd it."""

    def environ() -> dict[str, str] | None:
        out = subprocess.run(
            ["tmux", "-L", socket, "list-panes", "-a", "-F", "#{session_name} #{pane_pid}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        for line in out.splitlines():
            name, pid = line.split(" ")
            if name.endswith(session_suffix):
                env = _environ(int(pid))
                return env if "IB_AGENT_ID" in env else None
        return None

    found: dict[str, str] = retry_until(environ, timeout=20, what="the agent's process to start")
    return found


def test_an_agent_gets_no_ib_secret_even_from_a_tainted_tmux_server(
    agents_ib: IbRunner, tmux_socket: str, repo: Path
) -> None:
    # a tmux server started by someone whose shell holds the token, in its process and global environment
    tainted = {"IB_TELEGRAM_TOKEN": TOKEN, "IB_SOMETHING_PASSWORD": "pw", "GITHUB_TOKEN": "gh-secret"}
    subprocess.run(
        ["tmux", "-L", tmux_socket, "-f", "/dev/null", "new-session", "-d", "-s", "bystander"],
        env={**agents_ib.environ(), **tainted},
        check=True,
    )
    subprocess.run(
        ["tmux", "-L", tmux_socket, "set-environment", "-g", "IB_TELEGRAM_TOKEN", TOKEN], check=True
    )
    agents_ib.env.update({"IB_TELEGRAM_TOKEN": TOKEN, "ANTHROPIC_API_KEY": "sk-for-claude"})

    done = agents_ib.run("new-agent", "Do a thing.\nfake: wait", "--name", "clean")
    assert done.returncode == 0, done.stderr
    env = _agent_environ(tmux_socket, "-clean")

    assert env["IB_AGENT_ID"] == "clean"
    assert env["IB_ROOT"] == str(repo)
    assert env["IB_REDIS_URL"] == agents_ib.env["IB_REDIS_URL"]
    assert "IB_TELEGRAM_TOKEN" not in env and "IB_SOMETHING_PASSWORD" not in env
    assert "GITHUB_TOKEN" not in env  # not on the list: whatever the server had stays out
    assert TOKEN not in "".join(env.values())
    shown = subprocess.run(
        ["tmux", "-L", tmux_socket, "show-environment", "-g"], capture_output=True, text=True, check=True
    ).stdout
    assert "IB_TELEGRAM_TOKEN" not in shown
