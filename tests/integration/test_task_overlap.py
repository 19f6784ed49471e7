"""Tasks whose declared files overlap, on a real Redis: with IB_OVERLAP=hold the second one waits until the
first is merged; warn claims it with a note; ignore keeps the queue's order. Through the store and `ib`."""

from __future__ import annotations

import json
import threading

import redis

from bus.tasks.merges import MergeStore
from bus.tasks.task_holds import OverlapClaims
from bus.tasks.task_store import TaskStore
from bus.tasks.task_wait import claim_wait
from bus.tasks.touches import Hold
from bus.wire.keys import Keys
from tests.cli import IbRunner

P = "repo"


def claims(rds: redis.Redis, keys: Keys, mode: str = "hold") -> OverlapClaims:
    return OverlapClaims(TaskStore(rds, keys, events_maxlen=10_000), MergeStore(rds, keys, 10_000), mode)


def two_on_one_file(c: OverlapClaims) -> None:
    c.tasks.add("Fix the sum", project=P, task_id="t1", priority=6, touches=["calc.py"])
    c.tasks.add("Fix the sign", project=P, task_id="t2", priority=5, touches=["./calc.py"])
    c.tasks.add("Write the docs", project=P, task_id="t3", priority=4, touches=["docs/"])


def test_second_task_waits_until_the_first_is_merged(rds: redis.Redis, keys: Keys) -> None:
    c = claims(rds, keys)
    two_on_one_file(c)
    first = c.claim(P, "ann")
    assert first is not None and first.id == "t1" and first.touches == ("calc.py",)
    second = c.claim(P, "bob")
    assert second is not None and second.id == "t3"  # t2 is skipped, not lost
    assert c.holds(P) == {"t2": Hold("t2", "t1", ("calc.py",))}
    assert c.claim(P, "cy") is None

    c.tasks.done("t1", "ann", "sum fixed")
    merge = c.merges.enqueue(project=P, agent="ann", branch="agent/ann", target="main", worker="w", task="t1")
    assert c.claim(P, "cy") is None  # done, but its change is not on main yet
    assert c.holds(P)["t2"].running == "t1"

    c.merges.finish(merge.replace(status="merged"))
    third = c.claim(P, "cy")
    assert third is not None and third.id == "t2" and c.holds(P) == {}


def test_done_without_a_merge_lets_go(rds: redis.Redis, keys: Keys) -> None:
    c = claims(rds, keys)
    two_on_one_file(c)
    assert [c.claim(P, a).id for a in ("ann", "bob")] == ["t1", "t3"]  # type: ignore[union-attr]
    c.tasks.done("t1", "ann")
    taken = c.claim(P, "cy")
    assert taken is not None and taken.id == "t2"


def test_warn_claims_in_order_with_a_note(rds: redis.Redis, keys: Keys) -> None:
    c = claims(rds, keys, "warn")
    two_on_one_file(c)
    assert c.claim(P, "ann").id == "t1"  # type: ignore[union-attr]
    second = c.claim(P, "bob")
    assert second is not None and second.id == "t2"
    note = c.tasks.get("t2").notes[-1]
    assert note.kind == "observation" and "overlap task t1" in note.text and "calc.py" in note.text


def test_ignore_keeps_the_queue_order(rds: redis.Redis, keys: Keys) -> None:
    c = claims(rds, keys, "ignore")
    two_on_one_file(c)
    assert [c.claim(P, a).id for a in ("ann", "bob")] == ["t1", "t2"]  # type: ignore[union-attr]
    assert c.tasks.get("t2").notes == ()


def test_claimers_racing_for_overlapping_tasks_get_one(rds: redis.Redis, keys: Keys) -> None:
    c = claims(rds, keys)
    c.tasks.add("One", project=P, task_id="t1", touches=["src"])
    c.tasks.add("Two", project=P, task_id="t2", touches=["src/calc.py"])
    got: list[str] = []
    start = threading.Barrier(8)

    def claimer(n: int) -> None:
        mine = claims(rds, keys)
        start.wait()
        task = mine.claim(P, f"agent-{n}")
        if task is not None:
            got.append(task.id)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(got) == 1
    assert [t.id for t in c.tasks.list(P, "claimed")] == got
    assert sorted(c.tasks.ready_ids(P)) == sorted({"t1", "t2"} - set(got))


def test_a_waiting_claimer_wakes_when_the_merge_ends(rds: redis.Redis, keys: Keys, redis_url: str) -> None:
    c = claims(rds, keys)
    two_on_one_file(c)
    c.tasks.delete("t3")
    assert c.claim(P, "ann").id == "t1"  # type: ignore[union-attr]
    c.tasks.done("t1", "ann")
    merge = c.merges.enqueue(project=P, agent="ann", branch="agent/ann", target="main", worker="w", task="t1")
    reader = redis.Redis.from_url(redis_url, decode_responses=True)
    waited: list[str | None] = []
    waiting = threading.Event()
    waiter = threading.Thread(
        target=lambda: waited.append(
            getattr(claim_wait(c, reader, keys, P, "bob", 20, waiting.set), "id", None)
        )
    )
    waiter.start()
    assert waiting.wait(20)
    c.merges.finish(merge.replace(status="merged"))
    waiter.join(timeout=30)
    assert waited == ["t2"]


def test_cli_shows_why_a_task_is_held(ib: IbRunner) -> None:
    assert ib.run("task", "add", "Fix the sum", "--id", "t1", "--touches", "calc.py").returncode == 0
    added = ib.run(
        "task", "add", "Fix the sign", "--id", "t2", "--priority", "4", "--touches", "calc.py,docs/"
    )
    assert added.returncode == 0, added.stderr
    assert ib.run("task", "claim", "--as", "ann").stdout == "t1\n"
    listed = ib.run("task", "list").stdout
    assert "held: overlaps t1" in next(line for line in listed.splitlines() if line.startswith("t2"))
    as_json = {t["id"]: t["held"] for t in json.loads(ib.run("task", "list", "--json").stdout)}
    assert as_json == {"t1": None, "t2": {"overlaps": "t1", "files": ["calc.py"]}}
    shown = ib.run("task", "show", "t2").stdout
    assert "touches:   calc.py, docs" in shown
    assert "held:      until t1 is merged (both change calc.py)" in shown
    refused = ib.run("task", "claim", "--as", "bob")
    assert refused.returncode == 3 and "nothing ready" in refused.stderr
    ignored = ib.run("task", "claim", "--as", "bob", env={"IB_OVERLAP": "ignore"})
    assert ignored.stdout == "t2\n"


def test_cli_refuses_bad_touches_in_one_line(ib: IbRunner) -> None:
    for given, says in [
        ("/etc/passwd", "absolute"),
        ("../x.py", "leaves the repository"),
        ("src/*.py", "globs are not supported"),
        ("", "--touches is empty"),
    ]:
        done = ib.run("task", "add", "Bad", "--touches", given)
        assert done.returncode != 0, given
        assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr
    assert ib.run("task", "list").stdout == "no tasks\n"  # nothing was added


def test_bad_overlap_setting_is_one_line(ib: IbRunner) -> None:
    done = ib.run("task", "list", env={"IB_OVERLAP": "sometimes"})
    assert done.returncode != 0
    assert "IB_OVERLAP" in done.stderr and "hold, warn, ignore" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
