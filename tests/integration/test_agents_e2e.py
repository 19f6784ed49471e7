"""End to end with the fake agent: spawn → question → listen → send → complete → merge → gone, archived."""

from __future__ import annotations

import json
from pathlib import Path

import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.streams import stream_entries
from tests.waiting import retry_until

SCRIPT = "\n".join(
    [
        "Paint the bike shed.",
        "fake: ask What colour should the shed be?",
        "fake: write shed.txt painted",
        "fake: commit paint the shed",
        "fake: done",
    ]
)


def _events(ib: IbRunner) -> list[dict[str, object]]:
    out = ib.run("listen", "--timeout", "20").stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _until(ib: IbRunner, wanted: str) -> list[dict[str, object]]:
    """Listen again and again (as the primary session does) until an event of type `wanted` arrives."""
    seen: list[dict[str, object]] = []
    while not any(e["type"] == wanted for e in seen):
        got = _events(ib)
        assert got, f"no {wanted} event; saw {[e['type'] for e in seen]}"
        seen += got
    return seen


def test_spawn_ask_answer_complete_merge(
    agents_ib: IbRunner, repo: Path, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawned = ib.run("new-agent", SCRIPT, "--name", "painter")
    assert spawned.returncode == 0, spawned.stderr
    assert spawned.stdout.strip() == "painter"
    worktree = repo / ".ib" / "agents" / "painter" / "repo"
    assert worktree.is_dir()
    assert git(repo, "branch", "--list", "agent/painter").strip()

    seen = _until(ib, "question")
    asked = next(e for e in seen if e["type"] == "question")
    assert asked["from"] == "painter" and "What colour" in str(asked["msg"])
    pending = json.loads(ib.run("questions", "--json").stdout)
    assert [q["agent"] for q in pending] == ["painter"]

    answer = 'Blue; with "white" trim & $(no subst) — ünïcode'
    sent = ib.run("send", "painter", answer)
    assert sent.returncode == 0, sent.stderr
    received = tmp_path / "received.txt"
    retry_until(lambda: received.exists() and answer in received.read_text(), what="the answer in the agent")
    assert received.read_text() == answer + "\n"
    assert ib.run("acknowledge", str(pending[0]["id"])).returncode == 0

    seen += _until(ib, "complete")
    assert [e["type"] for e in seen] == ["question", "waiting", "complete"]  # the asking turn ended WAITING
    assert seen[-1]["from"] == "painter" and "completed its goal" in str(seen[-1]["msg"])

    merged = ib.run("merge", "painter")
    assert merged.returncode == 0, merged.stderr
    assert (repo / "shed.txt").read_text() == "painted\n"
    assert "paint the shed" in git(repo, "log", "--oneline", "main")
    assert not worktree.exists()
    assert not git(repo, "branch", "--list", "agent/painter").strip()
    assert ib.run("list", "--json").stdout.strip() == "[]"
    archives = list((repo / ".ib" / "archive").glob("*-painter"))
    assert len(archives) == 1
    assert {"output.log", "agent.log", "meta.json"} <= {p.name for p in archives[0].iterdir()}
    assert "Agent merged into main" in (archives[0] / "agent.log").read_text()
    types = [json.loads(e["e"])["type"] for _id, e in stream_entries(rds, keys.events)]
    assert types.index("spawned") < types.index("question") < types.index("complete") < types.index("merged")
