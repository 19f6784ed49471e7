"""Done when of issue 36: the person's real Claude Code (pinned), offline against the scripted Messages
API, with `ib mcp` registered as `ib mcp install` registers it and no Bash permission at all, spawns an
agent, waits for its dialog with `wait_for_events`, approves it, waits for the end of its turn and merges
it, through MCP tool calls alone. The scripted model copies each cursor from the tool result it read, as
a model does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IB, IbRunner, git
from tests.fake_anthropic import Deferred, FakeAnthropic, Reply, ToolUse, reply
from tests.fake_anthropic.client import client_env, write_home

pytestmark = pytest.mark.claude
WAIT = 90  # seconds a scripted wait_for_events waits at most: a deadline only
STEPS = ["Make it.", "fake: permission touch made.txt", "fake: write shed.txt painted", "fake: commit paint"]
GOAL = "\n".join([*STEPS, "fake: done"])


def _tool(tool: str, /, **arguments: Any) -> ToolUse:
    return ToolUse(f"mcp__ittybus__{tool}", arguments)


def _results(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Every tool result the model has read so far, by its call's id, as the text it was shown."""
    found: dict[str, str] = {}
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                parts = inner if isinstance(inner, list) else [{"text": inner}]
                found[block["tool_use_id"]] = "\n".join(str(p.get("text", "")) for p in parts)
    return found


def _errors(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks = [b for m in messages if isinstance(content := m.get("content"), list) for b in content]
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error")]


def _claude_p(
    claude_bin: Path, ib: IbRunner, anthropic: FakeAnthropic, home: Path, repo: Path, prompt: str, wait: int
) -> subprocess.CompletedProcess[str]:
    """The person's `claude -p PROMPT` in `repo`, against the scripted API, outside any agent's session."""
    env = {**ib.environ(), **client_env(anthropic.base_url, home)}
    env = {k: v for k, v in env.items() if not k.startswith("CLAUDE") and k not in ("TMUX", "TMUX_PANE")}
    run = [str(claude_bin), "-p", prompt]
    return subprocess.run(run, cwd=repo, env=env, capture_output=True, text=True, timeout=wait, check=False)


def _waiting_after(call_id: str, kind: str) -> Deferred:
    """wait_for_events (its call's id `toolu_wait_<kind>`) for `kind` of the agent, from the cursor the
    result of the call `call_id` showed the model."""

    def make(messages: list[dict[str, Any]]) -> Reply:
        cursor = json.loads(_results(messages)[call_id])["cursor"]  # Claude Code shows the structured result
        arguments = {"cursor": cursor, "agents": ["maker"], "types": [kind], "timeout": WAIT}
        wait = ToolUse("mcp__ittybus__wait_for_events", arguments, id=f"toolu_wait_{kind}")
        return reply(f"Waiting for maker's {kind}.", wait)

    return Deferred(make)


@pytest.mark.timeout(360)
def test_the_persons_claude_code_spawns_watches_approves_and_merges_through_ib_mcp_alone(
    agents_ib: IbRunner,
    anthropic: FakeAnthropic,
    claude_bin: Path,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
    tmp_path: Path,
) -> None:
    installed = agents_ib.run("mcp", "install")
    assert installed.returncode == 0, installed.stderr
    home = write_home(tmp_path / "home", [repo], {"permissions": {"allow": ["mcp__ittybus"]}})
    now = _tool("wait_for_events", timeout=0)
    anthropic.script(
        reply("Where the events are now.", now),
        reply("Spawning.", _tool("spawn", goal=GOAL, name="maker")),
        _waiting_after(now.id, "permission"),
        reply("Approving.", _tool("approve", agent="maker")),
        _waiting_after("toolu_wait_permission", "complete"),
        reply("Merging.", _tool("merge", agent="maker")),
        reply("Merged maker."),
    )
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
        prompt = "spawn an agent that paints the shed, approve it and merge it"
        done = _claude_p(claude_bin, agents_ib, anthropic, home, repo, prompt, wait=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "Merged maker.", done.stdout + done.stderr
    last = anthropic.turns_taken()[-1].body["messages"]
    shown = {call: json.loads(result) for call, result in _results(last).items()}
    assert [e["type"] for e in shown["toolu_wait_permission"]["events"]] == ["permission"]
    assert shown["toolu_wait_permission"]["events"][0]["data"]["detail"] == "touch made.txt"
    assert "complete" in [e["type"] for e in shown["toolu_wait_complete"]["events"]]
    heard = [e for kind in ("permission", "complete") for e in shown[f"toolu_wait_{kind}"]["events"]]
    assert {e["agent"] for e in heard} == {"maker"}
    assert len(shown) == 6 and not any(_errors(last))  # each call ran, none refused for want of permission
    assert "approved a permission dialog" in json.dumps(shown)
    assert not (repo / ".ib" / "agents" / "maker").exists()
    assert (repo / "shed.txt").read_text() == "painted\n"
    assert "paint" in git(repo, "log", "--oneline", "main")


@pytest.mark.timeout(180)
def test_a_slow_ib_mcp_is_waited_for_before_the_first_turn(
    ib: IbRunner, anthropic: FakeAnthropic, claude_bin: Path, repo: Path, tmp_path: Path
) -> None:
    """A person's `claude -p` whose first turn calls ittybus while `ib mcp` is still starting (seconds on a
    loaded machine): Claude Code 2.1.332 proceeds without a server that has not answered within its connect
    deadline (5 s by default) and fails the call ("No such tool available") if it is still not there some
    seconds later; the entry `ib mcp install` writes (`alwaysLoad`) has it wait for the server before the
    first turn as well, for as long as the deadline `ib mcp install` sets in the person's settings
    (`env` MCP_CONNECT_TIMEOUT_MS, 30 s). Here the entry's command is a stand-in that waits 8 s before it
    becomes `ib mcp`. Measured by hand with such a stand-in: 14 s failed with the entry before `alwaysLoad`
    and passed with it; 18 s failed with both. Beside `stress-ng --cpu 2`, 8 s failed before the deadline
    was set (`ib mcp` itself then took seconds to start). With the deadline, 25 s passes (and fails
    without it: not tested here, as beside a CPU hog `ib mcp`'s own start would pass Claude Code's 30 s
    MCP_TIMEOUT); 33 s fails."""
    assert ib.run("mcp", "install").returncode == 0
    slow = tmp_path / "slow-ib"
    slow.write_text(f'#!/bin/sh\nsleep 8\nexec "{IB}" "$@"\n')
    slow.chmod(0o755)
    config = json.loads((repo / ".mcp.json").read_text())
    config["mcpServers"]["ittybus"]["command"] = str(slow)
    (repo / ".mcp.json").write_text(json.dumps(config))
    home = write_home(tmp_path / "home", [repo], {"permissions": {"allow": ["mcp__ittybus"]}})
    now = _tool("wait_for_events", timeout=0)
    anthropic.script(reply("Where the events are now.", now), reply("Heard."))
    done = _claude_p(claude_bin, ib, anthropic, home, repo, "where are the events?", wait=150)
    assert (done.returncode, done.stdout.strip()) == (0, "Heard."), done.stdout + done.stderr
    last = anthropic.turns_taken()[-1].body["messages"]
    assert not _errors(last), _errors(last)
    assert "cursor" in json.loads(_results(last)[now.id])
