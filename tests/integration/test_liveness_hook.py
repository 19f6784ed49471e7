"""`ib hook post-tool-use`: the listener reminder, and silence whenever it has nothing to say."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
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


def _started(command: str, background: bool = True) -> str:
    tool_input = {"command": command, "run_in_background": background}
    return json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": tool_input})


def test_no_false_alarm_right_after_the_session_starts_a_listener(
    ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    """The PostToolUse of `Bash(ib listen, run_in_background)` comes before the listener's heartbeat: the
    reminder then told the session to start a second one."""
    rds.sadd(keys.agents, "agent-1")
    assert _hook(ib, _started("ib listen")) == (0, "", "")
    assert _hook(ib, json.dumps({"hook_event_name": "UserPromptSubmit"})) == (0, "", "")  # still starting
    proc = ib.popen("listen", "--timeout", "30")  # the listener it started comes up and takes over
    retry_until(lambda: rds.exists(keys.listener("default")))
    retry_until(lambda: not rds.exists(keys.listener_starting("default")), what="the start mark cleared")
    assert _hook(ib, "{}") == (0, "", "")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    code, out, _ = _hook(ib, "{}")  # gone, and no start pending: the reminder again
    assert code == 0 and "Notification listener is not running" in out


def test_a_listener_that_never_comes_up_is_reminded_of_once_the_start_is_overdue(
    ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    rds.sadd(keys.agents, "agent-1")
    assert _hook(ib, _started("cd /somewhere && ib listen --timeout 60", background=False)) == (0, "", "")
    ttl = rds.ttl(keys.listener_starting("default"))
    assert 0 < ttl <= 30  # a mark that expires, never one that silences the reminder for good
    rds.delete(keys.listener_starting("default"))  # as it will have expired
    code, out, _ = _hook(ib, "{}")
    assert code == 0 and "Notification listener is not running" in out


@pytest.mark.parametrize(
    "command", ["ib listener", "echo ib listen-not", "git log", "ib list", "sib listen"], ids=str
)
def test_other_commands_are_no_listener(ib: IbRunner, rds: redis.Redis, keys: Keys, command: str) -> None:
    rds.sadd(keys.agents, "agent-1")
    code, out, _ = _hook(ib, _started(command))
    assert code == 0 and "Notification listener is not running" in out


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
