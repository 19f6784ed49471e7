"""The real Claude Code CLI (pinned) as an ittybus agent, offline against the scripted Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply

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
