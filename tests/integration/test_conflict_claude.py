"""Issue 23's "done" for conflict prediction, with the real Claude Code CLI (pinned) offline against the
scripted Messages API and `ib worker` running: two agents edit the same function; the second edit raises one
`conflict_risk` naming both, and the second agent reads what it collides with, and with whom, in the output
of its next hook (Claude Code passes it to the model with the next tool result)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, bash, edit, read, reply
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores
CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"


@pytest.fixture
def worker(claude_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Path]:
    """`ib worker` for the agents (its conflict watch does the checks); its log."""
    with worker_running(claude_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running.log


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def test_two_agents_editing_the_same_function_are_warned(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, rds: redis.Redis, keys: Keys, worker: Path
) -> None:
    (repo / "calc.py").write_text(CALC)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    ann_file = str(repo / ".ib" / "agents" / "ann" / "repo" / "calc.py")
    bob_file = str(repo / ".ib" / "agents" / "bob" / "repo" / "calc.py")

    anthropic.script(
        reply(read(ann_file)),
        reply(edit(ann_file, "return a + b", "return a + b + 1")),
        reply("Done.\n\nI HAVE COMPLETED THE GOAL"),
    )
    assert claude_ib.run("new-agent", "tweak add", "--name", "ann").returncode == 0
    retry_until(lambda: _events(rds, keys, "complete"), TURN, 0.2, "ann's turn to end")
    assert _events(rds, keys, "conflict_risk") == []  # alone, ann collides with nobody

    # bob's next step waits until the check has spoken: Claude Code runs a tool as soon as its block has
    # streamed, so the edit's answer holds back its end (and with it the request for the Bash call)
    checked = threading.Event()
    anthropic.script(
        reply(read(bob_file)),
        reply(edit(bob_file, "return a + b", "return b + a"), hold=checked),
        reply(bash("true", "carry on")),
        reply("Done.\n\nI HAVE COMPLETED THE GOAL"),
    )
    assert claude_ib.run("new-agent", "tweak add too", "--name", "bob").returncode == 0
    risks = retry_until(lambda: _events(rds, keys, "conflict_risk"), TURN, 0.1, "the conflict_risk event")
    checked.set()
    retry_until(lambda: len(_events(rds, keys, "complete")) == 2, TURN, 0.2, "bob's turn to end")

    (risk,) = risks
    assert risk["agent"] == "bob"
    data = risk["data"]
    assert isinstance(data, dict)
    assert data["agents"] == ["bob", "ann"]
    assert data["files"] == ["calc.py"]
    assert data["conflicts"][0]["hunks"][0]["line"] == 2
    last = anthropic.turns_taken()[-1]  # bob's request after the Bash call: the hook's note rides along
    told = json.dumps(last.body)
    assert "Conflict risk" in told
    assert "agent ann" in told
    assert len(_events(rds, keys, "conflict_risk")) == 1  # bob's Bash changed nothing: no second event
