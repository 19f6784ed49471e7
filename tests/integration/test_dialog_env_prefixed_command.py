"""The real Claude Code CLI, as an agent gets it (acceptEdits, ittybus's sandbox): a Bash command that
starts with a variable assignment (`FOO=1 ib notify hi`) is not the sandbox's excluded `ib`, so Claude
Code asks first. After a Write (as in test_agent_boundary_claude.py) the dialog is drawn beside the diff
panel (200 columns) when Claude Code drew the panel in time (on a loaded machine it sometimes has not:
test_dialog_beside_diff_panel.py reads that layout from a capture). It is told as a `permission` event,
ib approve answers it and the turn ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply, write
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 60.0  # deadline for one turn of a cold CLI on 2 busy cores
COMMAND = "FOO=1 ib notify hi"


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def _dialog_shown(ib: IbRunner) -> str | None:
    """The dialog's question line, once the command and the question are on the pane."""
    screen = ib.run("look", "prefixed").stdout
    asking = [line.rstrip() for line in screen.splitlines() if "Do you want to proceed?" in line]
    return asking[-1] if asking and COMMAND in screen else None


def test_an_env_prefixed_ib_command_asks_and_ib_approve_answers(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    worktree = repo / ".ib" / "agents" / "prefixed" / "repo"
    anthropic.script(
        reply("Writing the notes.", write(str(worktree / "notes.txt"), "first line\n")),
        reply("Notifying.", bash(COMMAND, "notify the person")),
        reply("Notified.\n\nI HAVE COMPLETED THE GOAL"),
    )
    spawned = claude_ib.run("new-agent", "notify me", "--name", "prefixed")
    assert spawned.returncode == 0, spawned.stderr

    asked = retry_until(lambda: _events(rds, keys, "permission"), TURN, what="a permission event")
    retry_until(lambda: _dialog_shown(claude_ib), TURN, what="the dialog on the pane")
    approved = claude_ib.run("approve", "prefixed")
    assert approved.returncode == 0, approved.stderr
    retry_until(lambda: _events(rds, keys, "complete"), TURN, what="the turn's complete event")
    assert len(_events(rds, keys, "permission")) == 1, asked  # told once
    said = approved.stdout.strip()
    assert said == "approved a permission dialog (Do you want to proceed?) of prefixed: Yes"
    results = [str(r.get("content")) for t in anthropic.turns_taken() for r in t.tool_results()]
    assert "from inside the sandbox" in results[1]  # it ran in the sandbox (no worker: no relay)
