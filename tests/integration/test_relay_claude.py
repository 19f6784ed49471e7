"""`ib` in a compound line, a pipe or a script inside the real Claude Code CLI's sandbox (pinned): it runs
through the worker's relay as the agent that sent it, with that agent's rights; Redis's port stays
closed to the sandbox; with the worker stopped it fails in one line. Every result is read from the tool
results Claude Code sent back to the scripted Messages API, the effects from the bus."""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
from pathlib import Path

import pytest
import redis

from bus.settings.relay_port import HOST, PORT_FILE
from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, reply
from tests.fake_anthropic.script import ToolUse
from tests.integration.test_agent_boundary_claude import _approve_all, _parsed
from tests.waiting import retry_until
from worker.programs.claude.sandbox import sandbox_problem

pytestmark = pytest.mark.claude
AGENT, VICTIM = "atk", "victim"  # `atk`: the name the boundary test's approver answers for
STREAM_ID = re.compile(r"\d{13}-\d")

PROBE = """import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
auth = base64.b64encode(f"{urllib.parse.unquote(u.username)}:{urllib.parse.unquote(u.password)}".encode())
s = socket.create_connection((u.hostname, u.port), timeout=10)
target = sys.argv[1]
head = f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n"
s.sendall(f"{head}Proxy-Authorization: Basic {auth.decode()}\\r\\n\\r\\n".encode())
print("proxy answered:", s.recv(200).split(b"\\r\\n")[0].decode())
"""
"""Asks Claude Code's proxy, from inside the sandbox, for a tunnel to an address."""


def _bash(what: str, command: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": what}, id="toolu_" + what.replace("-", "_"))


@pytest.mark.timeout(480)
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_ib_in_a_compound_line_runs_as_the_agent(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    repo: Path,
    rds: redis.Redis,
    namespace: str,
    redis_url: str,
    mode: str,
) -> None:
    assert sandbox_problem() is None, f"{sandbox_problem()}: tests/run.sh installs bubblewrap and socat"
    if mode == "bypassPermissions":  # as root Claude Code wants IS_SANDBOX=1 for it (from the tmux server
        # the first spawn starts); and no dialog
        claude_ib.env.update({"IS_SANDBOX": "1", "IB_AGENT_ENV": "IS_SANDBOX"})
        settings = Path(claude_ib.env["HOME"]) / ".claude" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"skipDangerousModePermissionPrompt": True}))
    (repo / "probe.py").write_text(PROBE)
    git(repo, "add", "probe.py")
    git(repo, "commit", "-qm", "a probe of the proxy")
    redis_port = redis_url.rsplit(":", 1)[1].split("/", 1)[0]
    fake = {"IB_AGENT_COMMAND": f"{sys.executable} -m worker.fake.agent"}
    victim = claude_ib.run(
        "new-agent", "fake: write v.txt v\nfake: commit victim's work", "--name", VICTIM, env=fake
    )
    assert victim.returncode == 0, victim.stderr
    worker = claude_ib.popen("worker")
    _relay_listening(repo)  # the agent's first command goes through it (a worker starts slowly at load)
    worker_stopped = threading.Event()
    calls = [
        _bash(
            "commit-then-notify",
            "echo y > w.txt && git add -A && git commit -qm work && ib notify committed-marker",
        ),
        _bash("notify-then-echo", "ib notify semi-marker; echo after-semi"),
        _bash("piped", "echo piped-marker | ib notify -"),
        _bash("subshell", "(cd . && ib notify subshell-marker)"),
        _bash("script", "printf '#!/bin/sh\\nib notify script-marker\\n' > report.sh && sh report.sh"),
        _bash("kill-sibling", f"true && ib kill {VICTIM} --force"),
        _bash("forged-id", f"IB_AGENT_ID={VICTIM} ib kill {VICTIM} --force"),
        _bash("redis-port", f"python3 probe.py 127.0.0.1:{redis_port}"),
    ]
    after_stop = _bash("worker-stopped", "true && ib notify lost-marker")
    anthropic.script(
        *(reply(call) for call in calls),
        # held open until the worker is stopped: Claude Code may start a tool before its stream ends
        reply(_bash("pause", "true"), hold=worker_stopped),
        reply(after_stop),
        reply("I HAVE COMPLETED THE GOAL"),
    )
    claude_ib.env["IB_AGENT_COMMAND"] += f" --permission-mode {mode}"
    spawned = claude_ib.run("new-agent", "Report through ib.", "--name", AGENT)
    assert spawned.returncode == 0, spawned.stderr
    finished = threading.Event()
    approver = threading.Thread(
        target=_approve_all, args=(claude_ib, rds, Keys(namespace), finished), daemon=True
    )
    approver.start()
    try:
        try:
            anthropic.wait_for(
                lambda log: len([r for r in log if r.is_turn]) > len(calls),
                timeout=300,
                what="the tool calls before the worker stops",
            )
        finally:
            worker.terminate()
            worker.wait(timeout=60)
            worker_stopped.set()
        anthropic.wait_for(
            lambda log: anthropic.pending() == 0 and len([r for r in log if r.is_turn]) > len(calls) + 2,
            timeout=120,
            what="the scripted conversation to end",
        )
    except AssertionError as e:
        pane = claude_ib.run("look", AGENT, "--lines", "40").stdout
        raise AssertionError(f"{str(e)[:300]}\nthe agent's pane:\n{pane}") from None
    finally:
        finished.set()
    results = {
        key.removeprefix("toolu_").replace("_", "-"): value
        for key, value in anthropic.results_by_call().items()
    }
    print(json.dumps(results, indent=1))
    events = _parsed(rds, Keys(namespace))
    for marker in ("committed", "semi", "piped", "subshell", "script"):
        landed = [e for e in events if str(e.get("msg")).strip() == f"{marker}-marker"]
        assert len(landed) == 1, (marker, landed, results)
        assert landed[0]["from"] == AGENT, landed[0]
    assert "after-semi" in results["notify-then-echo"][1]
    assert git(repo / ".ib" / "agents" / AGENT / "repo", "log", "-1", "--format=%s").strip() == "work"
    for refused in ("kill-sibling", "forged-id"):
        is_error, text = results[refused]
        assert is_error and f"agent {AGENT} may not kill {VICTIM} (not its child)" in text, text
        assert "Traceback" not in text
    assert "proxy answered: HTTP/1.1 403" in results["redis-port"][1], results["redis-port"]
    is_error, text = results["worker-stopped"]
    assert is_error and text.startswith("Exit code 1\nib notify: error: cannot reach the worker's relay"), (
        text
    )
    assert not STREAM_ID.search(text) and "Traceback" not in text
    assert not any(e.get("msg") == "lost-marker" for e in _parsed(rds, Keys(namespace)))
    retry_until((repo / ".ib" / "agents" / VICTIM / "repo" / "v.txt").exists, what="victim's work")
    assert VICTIM in claude_ib.run("list").stdout.split()


def _relay_listening(repo: Path) -> None:
    """Until the worker's relay accepts a connection on the port it recorded in `.ib/`."""

    def accepts() -> bool:
        try:
            port = int((repo / ".ib" / PORT_FILE).read_text().strip())
            with socket.create_connection((HOST, port), timeout=1):
                return True
        except (OSError, ValueError):
            return False

    retry_until(accepts, 60, 0.1, "the worker's relay")
