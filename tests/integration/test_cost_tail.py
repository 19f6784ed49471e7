"""The worker's transcript tail records each model answer once, stamped with the agent's project and task,
across reads that cut an answer's lines apart; `ib cost` then selects them by agent, task, project and
time, also after the agent is gone, and a bad price setting is one line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries
from worker.agents.transcript_tail import TranscriptTailer
from worker.runtime import Runtime

USAGE = {"input_tokens": 10, "output_tokens": 300, "cache_creation_input_tokens": 2000}


def answer(n: int, block: str, at: dt.datetime) -> str:
    """One line of answer `n` (Claude Code writes one per content block, repeating the usage)."""
    message = {
        "id": f"msg_{n}",
        "model": "claude-sonnet-4-5",
        "role": "assistant",
        "usage": USAGE,
        "content": [{"type": "text", "text": block}],
    }
    entry = {"type": "assistant", "requestId": f"req_{n}", "timestamp": at.isoformat(), "message": message}
    return json.dumps(entry) + "\n"


def test_the_tail_counts_each_answer_once_and_ib_cost_selects(
    ib: IbRunner, rds: redis.Redis, keys: Keys, redis_url: str, namespace: str, repo: Path, tmp_path: Path
) -> None:
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), repo)
    transcript = tmp_path / "session.jsonl"
    store = AgentStore(rds, keys)
    agent = Agent(
        id="painter", project="shed", task="t-1", worker=rt.worker_id, transcript_path=str(transcript)
    )
    store.save(agent)
    now = dt.datetime.now(dt.UTC)
    second = answer(2, "Done.", now)
    with transcript.open("w") as f:
        f.write(
            answer(1, "thinking", now - dt.timedelta(days=2)) + answer(1, "Let me look.", now) + second[:30]
        )
    tail = TranscriptTailer(rt)
    tail.tick()
    assert rds.xlen(keys.usage("painter")) == 1  # the cut line waits for the next read
    store.update("painter", task="t-2")
    with transcript.open("a") as f:
        f.write(second[30:] + answer(2, "More.", now))  # the rest of answer 2, and its repeat
    tail.tick()
    tail.tick()
    entries = [fields for _id, fields in stream_entries(rds, keys.usage("painter"))]
    assert [(e["task"], e["project"], e["o"], e["cw"]) for e in entries] == [
        ("t-1", "shed", "300", "2000"),
        ("t-2", "shed", "300", "2000"),
    ]

    def total(*argv: str) -> dict[str, object]:
        run = ib.run("cost", *argv, "--json")
        assert run.returncode == 0, run.stderr
        found = json.loads(run.stdout)["total"]
        assert isinstance(found, dict)
        return found

    assert total("painter")["output"] == 600
    assert total("--task", "t-1")["answers"] == 1
    assert total("--project", "shed")["cache_write"] == 4000
    assert total("--since", "1d")["answers"] == 1  # answer 1 is as old as its first line: two days
    store.remove("painter")  # killed: its cost stays
    text = ib.run("cost", "--project", "shed").stdout.splitlines()
    assert text[0] == "cost of project shed"
    assert text[2].split()[:3] == ["painter", "claude-sonnet-4-5", "2"]
    assert text[-1] == "total: $0.02 · 5k tokens in 2 answers"
    assert total("painter")["answers"] == 2
    refused = ib.run("cost", env={"IB_PRICES": "sonnet-4.5=3,15"})
    assert refused.returncode != 0 and "IB_PRICES: bad price 'sonnet-4.5=3,15'" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_a_new_transcript_is_read_from_its_start(
    rds: redis.Redis, keys: Keys, redis_url: str, namespace: str, repo: Path, tmp_path: Path
) -> None:
    """A program that starts a new session (a fresh restart) names a new transcript, shorter than where
    the tail stopped in the old one: its answers are not skipped."""
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), repo)
    store = AgentStore(rds, keys)
    now = dt.datetime.now(dt.UTC)
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text("".join(answer(n, f"Old answer {n}, a long one.", now) for n in range(1, 4)))
    new.write_text(answer(9, "New.", now))
    store.save(Agent(id="restarted", project="shed", worker=rt.worker_id, transcript_path=str(old)))
    tail = TranscriptTailer(rt)
    tail.tick()
    store.update("restarted", transcript_path=str(new))
    tail.tick()
    texts = [fields["text"] for _id, fields in stream_entries(rds, keys.output("restarted"))]
    assert texts[-1] == "New." and len(texts) == 4
    assert rds.xlen(keys.usage("restarted")) == 4
