"""A manager agent's own `ib mcp`: the real Claude Code (pinned), spawned by ittybus as a manager, has
ittybus's tools without asking (its settings allow `mcp__ittybus`) and they act with its rights, checked
outside the agent: it lists the agents, spawns a worker of its own and may kill it, and is refused a
sibling. Every result is read from the tool results Claude Code sent back to the scripted Messages API."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply
from tests.fake_anthropic.script import ToolUse
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
BOSS, SIBLING, KID = "boss", "sibling", "kid"


def _tool(tool: str, arguments: dict[str, object]) -> ToolUse:
    return ToolUse(f"mcp__ittybus__{tool}", arguments, id=f"toolu_{tool}_{len(str(arguments))}")


@pytest.mark.timeout(300)
def test_a_manager_uses_its_own_ib_mcp_with_its_own_rights(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path
) -> None:
    fake = {"IB_AGENT_COMMAND": f"{sys.executable} -m worker.fake.agent"}
    sibling = claude_ib.run("new-agent", "fake: wait", "--name", SIBLING, env=fake)
    assert sibling.returncode == 0, sibling.stderr
    listing = _tool("list_agents", {})
    refused = _tool("kill", {"agent": SIBLING, "force": True})
    spawn = _tool("spawn", {"goal": "fake: wait", "name": KID})
    anthropic.script(reply(listing), reply(refused), reply(spawn), reply("I HAVE COMPLETED THE GOAL"))

    spawned = claude_ib.run("new-agent", "Look after your agents.", "--name", BOSS)
    assert spawned.returncode == 0, spawned.stderr
    try:
        anthropic.wait_for(
            lambda log: anthropic.pending() == 0 and len([r for r in log if r.is_turn]) > 3,
            timeout=200,
            what="the scripted conversation to end",
        )
    except AssertionError as e:
        pane = claude_ib.run("look", BOSS, "--lines", "40").stdout
        raise AssertionError(f"{str(e)[:300]}\nthe manager's pane:\n{pane}") from None
    results = anthropic.results_by_call()
    listed_error, listed = results[listing.id]
    assert not listed_error and SIBLING in listed and BOSS in listed, listed
    kill_error, kill_text = results[refused.id]
    assert kill_error and "not its child" in kill_text, kill_text
    assert SIBLING in claude_ib.run("list").stdout  # untouched
    spawn_error, spawn_text = results[spawn.id]
    assert not spawn_error, spawn_text
    retry_until(lambda: KID in claude_ib.run("list").stdout, what="the manager's worker")
    assert claude_ib.run("info", KID, "--json").stdout.count(f'"manager": "{BOSS}"') == 1
