"""`ib hook post-tool-use`: the listener reminder, and silence whenever it has nothing to say."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import redis

from bus.keys import Keys
from tests.cli import IbRunner
from tests.waiting import retry_until


def _hook(ib: IbRunner, stdin: str, **kw: object) -> tuple[int, str, str]:
    done = ib.run("hook", "post-tool-use", stdin=stdin, **kw)  # type: ignore[arg-type]
    return done.returncode, done.stdout, done.stderr


def test_reminds_when_agents_run_and_no_listener(
    ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(repo)})
    assert _hook(ib, payload) == (0, "", "")  # no agents: nothing
    rds.sadd(keys.agents, "agent-1")
    code, out, err = _hook(ib, payload)
    assert (code, err) == (0, "")
    body = json.loads(out)
    assert body["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "Notification listener is not running" in body["hookSpecificOutput"]["additionalContext"]
    assert (
        'Bash(command: "ib listen", run_in_background: true)'
        in body["hookSpecificOutput"]["additionalContext"]
    )


def test_silent_while_listener_alive(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    rds.sadd(keys.agents, "agent-1")
    proc = ib.popen("listen", "--timeout", "30")
    retry_until(lambda: rds.exists(keys.listener("default")))
    assert _hook(ib, "{}") == (0, "", "")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)


def test_silent_inside_an_agent(ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path) -> None:
    rds.sadd(keys.agents, "agent-1")
    inside = repo / ".ib" / "agents" / "agent-1" / "repo"
    inside.mkdir(parents=True)
    assert _hook(ib, json.dumps({"cwd": str(inside)})) == (0, "", "")
    assert _hook(ib, "{}", env={"IB_AGENT_ID": "agent-1"}) == (0, "", "")


@pytest.mark.parametrize(
    "stdin",
    ["", "garbage{", "[1,2]", '"string"', "\x00\xff", '{"cwd": 5}'],
    ids=["empty", "garbage", "list", "string", "binary", "bad-cwd"],
)
def test_bad_stdin_never_fails(ib: IbRunner, rds: redis.Redis, keys: Keys, stdin: str) -> None:
    rds.sadd(keys.agents, "agent-1")
    code, out, err = _hook(ib, stdin)
    assert code == 0 and err == ""
    assert out == "" or "hookSpecificOutput" in json.loads(out)


def test_bad_configuration_is_one_line_and_never_fails_the_session(ib: IbRunner) -> None:
    code, out, err = _hook(ib, "{}", env={"IB_NAMESPACE": "has space"})
    assert (code, out) == (0, "")
    assert err.count("\n") == 1
    assert err.startswith("ib hook post-tool-use: error: bad configuration: IB_NAMESPACE")
