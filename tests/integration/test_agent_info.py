"""`ib info` names the agent's tmux socket and the command that attaches to its terminal, and that
command works as printed."""

from __future__ import annotations

import shlex
import subprocess
import uuid

from tests.cli import IbRunner
from tests.waiting import retry_until


def test_info_prints_an_attach_command_that_attaches(agents_ib: IbRunner, tmux_socket: str) -> None:
    assert agents_ib.run("new-agent", "fake: wait", "--name", "seen").returncode == 0
    info = agents_ib.run("info", "seen")
    assert info.returncode == 0, info.stderr
    said = {x.split(":")[0]: x.split(":", 1)[1].strip() for x in info.stdout.splitlines() if ":" in x}
    session = said["session"].split()[0]
    attach = f"tmux -L {tmux_socket} attach -t {session}"
    assert (said["tmux"], said["attach"]) == (f"socket {tmux_socket}", attach)
    outer = f"ibinfo-{uuid.uuid4().hex[:8]}"  # a terminal for the attach: a pane of another tmux server
    try:
        subprocess.run(
            ["tmux", "-L", outer, "-f", "/dev/null", "new-session", "-d", *shlex.split(attach)], check=True
        )
        clients = ["tmux", "-L", tmux_socket, "list-clients", "-t", session, "-F", "#{session_name}"]
        retry_until(
            lambda: (
                subprocess.run(clients, capture_output=True, text=True, check=False).stdout.strip() == session
            )
        )
    finally:
        subprocess.run(["tmux", "-L", outer, "kill-server"], capture_output=True, check=False)
