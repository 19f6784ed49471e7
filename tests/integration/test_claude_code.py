"""The real Claude Code CLI (pinned) as an ittybus agent, offline against the scripted Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from bus.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply, write
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN_TIMEOUT = 90.0  # a cold CLI start on 2 busy cores takes a few seconds; this is the deadline only


def _listen_until(ib: IbRunner, wanted: str) -> list[dict[str, object]]:
    """`ib listen` again and again, as the primary session does, until an event of type `wanted` arrives."""
    seen: list[dict[str, object]] = []
    while not any(e["type"] == wanted for e in seen):
        out = ib.run("listen", "--timeout", str(TURN_TIMEOUT), timeout=TURN_TIMEOUT + 30).stdout
        got = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert got, f"no {wanted} event within {TURN_TIMEOUT}s; saw {[e['type'] for e in seen]}"
        seen += got
    return seen


def test_new_agent_reaches_complete_through_the_stop_hook(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path
) -> None:
    anthropic.script(reply("Hello from the model.\n\nI HAVE COMPLETED THE GOAL"))
    spawned = claude_ib.run("new-agent", "say hello", "--name", "greeter")
    assert spawned.returncode == 0, spawned.stderr

    seen = _listen_until(claude_ib, "complete")
    complete = next(e for e in seen if e["type"] == "complete")
    assert complete["from"] == "greeter"
    prompt = (repo / ".ib" / "agents" / "greeter" / "prompt.txt").read_text(encoding="utf-8")
    assert anthropic.user_texts() == [prompt.rstrip("\n")]  # the prompt arrived byte for byte, once
    assert anthropic.pending() == 0


def _screen(ib: IbRunner, agent: str) -> str:
    return ib.run("look", agent, "--lines", "60").stdout


def _state(ib: IbRunner, agent: str) -> str:
    agents = json.loads(ib.run("list", "--json").stdout)
    return str(next(a["state"] for a in agents if a["id"] == agent))


def _states_published(rds: redis.Redis, keys: Keys, agent: str) -> list[str]:
    events = [json.loads(fields["e"]) for _id, fields in rds.xrange(keys.events)]
    return [e["data"]["to_state"] for e in events if e["type"] == "state" and e["agent"] == agent]


def test_worker_reads_a_real_permission_dialog(
    claude_ib: IbRunner, anthropic: FakeAnthropic, claude_bin: Path
) -> None:
    claude_ib.env["IB_AGENT_COMMAND"] = f"{claude_bin} --permission-mode default"  # ask, as without auto mode
    # sandboxed commands run without asking (autoAllowBashIfSandboxed); one with `$?`, which Claude Code
    # cannot check before it runs, still asks
    anthropic.script(
        reply("I need to rebuild.", bash('make clean all; echo "exit=$?"', "Rebuild from scratch"))
    )
    assert claude_ib.run("new-agent", "rebuild it", "--name", "builder").returncode == 0
    retry_until(
        lambda: "Do you want to proceed?" in _screen(claude_ib, "builder"), TURN_TIMEOUT, 0.2, "dialog"
    )

    looked = claude_ib.run("worker", "--once")
    assert looked.returncode == 0, looked.stderr
    assert _state(claude_ib, "builder") == "permission"


def test_diff_panel_of_a_wide_pane_keeps_complete(
    claude_ib: IbRunner, anthropic: FakeAnthropic, claude_bin: Path, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    """Agents run 200 columns wide; after a file edit Claude Code opens its diff panel on the right."""
    claude_ib.env["IB_AGENT_COMMAND"] = f"{claude_bin} --permission-mode acceptEdits"
    notes = repo / ".ib" / "agents" / "scribe" / "repo" / "notes.txt"
    anthropic.script(
        reply("Writing the notes.", write(str(notes), "first line\nsecond line\n")),
        reply("Wrote notes.txt.\n\nI HAVE COMPLETED THE GOAL"),
    )
    assert claude_ib.run("new-agent", "write notes", "--name", "scribe").returncode == 0
    assert any(e["type"] == "complete" for e in _listen_until(claude_ib, "complete"))  # the Stop hook
    retry_until(lambda: "/diff to close" in _screen(claude_ib, "scribe"), TURN_TIMEOUT, 0.2, "the diff panel")
    assert notes.read_text() == "first line\nsecond line\n"

    looked = claude_ib.run("worker", "--once")
    assert looked.returncode == 0, looked.stderr
    assert _state(claude_ib, "scribe") == "complete"
    assert "unknown" not in _states_published(rds, keys, "scribe")
