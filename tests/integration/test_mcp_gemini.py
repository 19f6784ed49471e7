"""Issue 36's flow with another client: the real Gemini CLI (pinned), offline against the scripted Gemini
API, with `ib mcp` in its settings' `mcpServers` as the guide writes it, spawns an agent, waits for its
dialog with `wait_for_events`, approves it, waits for the end of its turn and merges it, through MCP tool
calls alone. Gemini CLI shows its model a tool's text only, so the scripted model copies each cursor from
that text (the line `next cursor: …`)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IB, IbRunner, git
from tests.fake_gemini.client import client_env, gemini_binary, settings
from tests.fake_gemini.script import Call, Deferred, Reply, reply
from tests.fake_gemini.server import FakeGemini

pytestmark = [pytest.mark.gemini, pytest.mark.timeout(360)]
WAIT = 90  # seconds a scripted wait_for_events waits at most: a deadline only
STEPS = ["Make it.", "fake: permission touch made.txt", "fake: write shed.txt painted", "fake: commit paint"]
GOAL = "\n".join([*STEPS, "fake: done"])
SERVER = {"command": IB, "args": ["mcp"], "timeout": 620000, "trust": True}
CURSOR = re.compile(r"^next cursor: (\S+)$", re.MULTILINE)


def _tool(tool: str, /, **arguments: Any) -> Call:
    return Call(f"mcp_ittybus_{tool}", arguments)


def _responses(contents: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Every tool result the model has read so far, in order: the tool's name and the text it was shown
    (Gemini CLI sends a result's text as the response's `output`)."""
    parts = [p for c in contents for p in c.get("parts") or [] if isinstance(p, dict)]
    found = [p["functionResponse"] for p in parts if "functionResponse" in p]
    return [(f["name"], str(f["response"]["output"])) for f in found]


def _waiting_for(kind: str) -> Deferred:
    """wait_for_events for `kind` of the agent, from the cursor the last wait_for_events showed the model."""

    def make(contents: list[dict[str, Any]]) -> Reply:
        shown = [text for name, text in _responses(contents) if name == "mcp_ittybus_wait_for_events"][-1]
        cursor = CURSOR.search(shown)
        assert cursor is not None, shown
        arguments = {"cursor": cursor.group(1), "agents": ["maker"], "types": [kind], "timeout": WAIT}
        return reply(f"Waiting for maker's {kind}.", _tool("wait_for_events", **arguments))

    return Deferred(make)


def _home(home: Path) -> Path:
    (home / ".gemini").mkdir(parents=True)
    made = settings() | {"mcpServers": {"ittybus": SERVER}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(made, indent=2) + "\n", encoding="utf-8")
    return home


def test_gemini_cli_spawns_watches_approves_and_merges_through_ib_mcp(
    agents_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    outer = {k: v for k, v in agents_ib.environ().items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env = {**outer, **client_env(gemini.base_url, _home(tmp_path / "home"))}
    gemini.script(
        reply("Where the events are now.", _tool("wait_for_events", timeout=0)),
        reply("Spawning.", _tool("spawn", goal=GOAL, name="maker")),
        _waiting_for("permission"),
        reply("Approving.", _tool("approve", agent="maker")),
        _waiting_for("complete"),
        reply("Merging.", _tool("merge", agent="maker")),
        reply("Merged maker."),
    )
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
        done = subprocess.run(
            [str(gemini_binary()), "-p", "spawn an agent that paints the shed, approve it and merge it"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    said = ["Where the events are now.", "Spawning.", "Waiting for maker's permission.", "Approving."]
    said += ["Waiting for maker's complete.", "Merging.", "Merged maker."]
    assert done.stdout.splitlines() == said, done.stdout + done.stderr  # Gemini CLI prints every turn's text
    shown = _responses(gemini.turns_taken()[-1].body["contents"])
    called = ["wait_for_events", "spawn", "wait_for_events", "approve", "wait_for_events", "merge"]
    assert [name for name, _ in shown] == [f"mcp_ittybus_{tool}" for tool in called]
    texts = [text for _, text in shown]
    assert " permission  maker  " in texts[2] and "touch made.txt" in texts[2], texts[2]
    assert " complete  maker" in texts[4], texts[4]
    assert "approved a permission dialog" in texts[3], texts[3]
    assert not (repo / ".ib" / "agents" / "maker").exists()
    assert (repo / "shed.txt").read_text() == "painted\n"
    assert "paint" in git(repo, "log", "--oneline", "main")
