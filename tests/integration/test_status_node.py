"""The status node against real Redis and real files: tricky CLAUDE.md files keep every byte outside the
block, nothing is written when nothing changed, events are debounced, the person's edits survive, a
read-only file is a clear error with nothing lost, and the worker starts the node with the first root agent
while the node stops by itself after the last."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest
import redis

from bus.connection.clients import client_for
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.messages import MessageStore
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.waiting import retry_until
from worker.errors import StatusFileError
from worker.frontends.status_block import iso_utc, read_block, splice
from worker.frontends.status_node import StatusNode, StatusNodeBusy, file_id

NOW = time.time()


@pytest.fixture
def reader(redis_url: str) -> Iterator[redis.Redis]:
    client = client_for(redis_url, blocking=True)
    yield client
    client.close()


@pytest.fixture
def claude_md(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "CLAUDE.md"
    yield path
    for item in (tmp_path, path):  # let pytest clean up what a test made read-only
        if item.exists():
            item.chmod(0o755 if item.is_dir() else 0o644)


def make_node(rds: redis.Redis, reader: redis.Redis, keys: Keys, path: Path, **options: Any) -> StatusNode:
    return StatusNode(rds, reader, keys, path, **{"debounce": 0.0, **options})


def add_agent(rds: redis.Redis, keys: Keys, agent_id: str, manager: str = "", state: str = "running") -> None:
    AgentStore(rds, keys).save(
        Agent(
            id=agent_id, goal=f"Goal of {agent_id}\nsecond line", manager=manager, created_at=NOW, state=state
        )
    )


def block(path: Path) -> dict[str, Any]:
    text = read_block(path.read_bytes())
    assert text is not None, path.read_bytes()
    found: dict[str, Any] = json.loads(text)
    return found


def message_ids(path: Path) -> list[str]:
    return [m["id"] for m in block(path)["messages"]]


def block_now(path: Path) -> dict[str, Any]:
    """The status block as it reads now, {} when caught mid-write: for `retry_until` checks, which must
    return a value to retry on rather than fail on the first look."""
    try:
        text = read_block(path.read_bytes())
        found = json.loads(text) if text is not None else {}
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def ids_now(path: Path, part: str, field: str = "id") -> list[str]:
    return [str(item.get(field)) for item in block_now(path).get(part, [])]


@contextmanager
def running(node: StatusNode) -> Iterator[threading.Thread]:
    """The node's loop in a thread; stopped (and its final write done) when the block ends."""
    failure: list[BaseException] = []

    def loop() -> None:
        try:
            node.run()
        except BaseException as e:
            failure.append(e)
            raise

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    retry_until(lambda: node.writes or failure or not thread.is_alive(), what="the first write")
    try:
        yield thread
    finally:
        node.stopping.set()
        thread.join(timeout=15)
        assert not thread.is_alive(), "the status node did not stop"
    assert not failure, failure


def caught_up(rds: redis.Redis, keys: Keys, node: StatusNode) -> bool:
    """The node's group has read and acknowledged everything on the events stream."""
    last = cast(list[tuple[str, dict[str, str]]], rds.xrevrange(keys.events, count=1))
    group = next(g for g in rds.xinfo_groups(keys.events) if g["name"] == node.group.name)
    return bool(last) and group["last-delivered-id"] == last[0][0] and group["pending"] == 0


SECTION = "# Project\n\nNotes.\n\n<ittybus>\n## ittybus\nUse `ib list`.\n</ittybus>\n\n## After\n"
STALE = SECTION.replace(
    "</ittybus>",
    '<ittybus-status>\n{"last_updated": "x", "root_agents": [], "messages": []}\n'
    "</ittybus-status>\n</ittybus>",
)


@pytest.mark.parametrize(
    ("original", "kept"),
    [
        pytest.param(None, [], id="no-file"),
        pytest.param(b"", [], id="empty-file"),
        pytest.param(b"# Project\n\nJust notes.\n", [b"# Project\n\nJust notes.\n"], id="no-section"),
        pytest.param(
            SECTION.encode(),
            [b"# Project\n\nNotes.\n\n<ittybus>\n", b"</ittybus>\n\n## After\n"],
            id="section",
        ),
        pytest.param(
            SECTION.replace("\n", "\r\n").encode(),
            [b"<ittybus>\r\n## ittybus\r\nUse `ib list`.\r\n", b"</ittybus>\r\n\r\n## After\r\n"],
            id="crlf",
        ),
        pytest.param(
            "# Projekt — ünïcode 🤖\n\nשלום\u2028same line\n<ittybus>\n</ittybus>\n".encode(),
            ["# Projekt — ünïcode 🤖\n\nשלום\u2028same line\n<ittybus>\n".encode()],
            id="unicode",
        ),
        pytest.param(
            b"# Project\n\nno newline at the end", [b"# Project\n\nno newline at the end"], id="no-eol"
        ),
        pytest.param(
            b"<ittybus>\ndocs\n</ittybus>", [b"<ittybus>\ndocs\n", b"</ittybus>"], id="section-without-eol"
        ),
        pytest.param(
            STALE.encode(),
            [b"# Project\n\nNotes.\n\n<ittybus>\n", b"</ittybus>\n\n## After\n"],
            id="stale-block",
        ),
    ],
)
def test_tricky_files_keep_every_byte_outside_the_block(
    rds: redis.Redis,
    reader: redis.Redis,
    keys: Keys,
    claude_md: Path,
    original: bytes | None,
    kept: list[bytes],
) -> None:
    if original is not None:
        claude_md.write_bytes(original)
    add_agent(rds, keys, "manager-abc")
    add_agent(rds, keys, "w1", manager="manager-abc", state="complete")
    MessageStore(rds, keys).add("manager-abc", "question", "CSS variables — or a theme provider? 🤔")

    assert make_node(rds, reader, keys, claude_md).update() is True

    after = claude_md.read_bytes()
    status = block(claude_md)
    assert [(a["id"], a["children"], a["children_complete"]) for a in status["root_agents"]] == [
        ("manager-abc", 1, 1)
    ]
    assert status["root_agents"][0]["prompt"] == "Goal of manager-abc"
    assert [(m["type"], m["content"]) for m in status["messages"]] == [
        ("question", "CSS variables — or a theme provider? 🤔")
    ]
    assert after == splice(original or b"", read_block(after) or "")  # the rest is the original's
    for piece in kept:
        assert piece in after
    if original is not None:
        assert after.startswith(original.split(b"<ittybus-status>")[0].split(b"</ittybus>")[0])
    if original and b"\r\n" in original:
        assert b"\n" not in after.replace(b"\r\n", b"")
    assert after.count(b"<ittybus-status>") == 1


def test_nothing_written_when_only_the_clock_moved(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    add_agent(rds, keys, "solo")
    node = make_node(rds, reader, keys, claude_md)
    assert node.update() is True
    first = block(claude_md)["last_updated"]
    before = claude_md.stat()
    retry_until(lambda: iso_utc(time.time()) != first, what="the clock to move on")
    assert node.update() is False
    after = claude_md.stat()
    assert (after.st_mtime_ns, after.st_ino, after.st_size) == (
        before.st_mtime_ns,
        before.st_ino,
        before.st_size,
    )
    assert block(claude_md)["last_updated"] == first


def test_events_that_change_nothing_write_nothing(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    add_agent(rds, keys, "solo")
    node = make_node(rds, reader, keys, claude_md)
    with running(node):
        before = claude_md.stat().st_mtime_ns
        for _ in range(5):
            publish(rds, keys, make_event("state", "no change", agent="solo"), 1000)
            publish(rds, keys, make_event("task_added", "not about agents"), 1000)
        retry_until(lambda: caught_up(rds, keys, node), what="the node to read the events")
        assert node.writes == 1
        assert claude_md.stat().st_mtime_ns == before


def test_many_events_are_debounced_into_few_writes(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    add_agent(rds, keys, "busy")
    node = make_node(rds, reader, keys, claude_md, debounce=3600.0, max_messages=100)
    store = MessageStore(rds, keys)
    with running(node):
        sent = [store.add("busy", "status", f"step {i}").id for i in range(30)]
        retry_until(lambda: caught_up(rds, keys, node), what="the node to read the events")
        assert node.writes == 1  # the first write; the burst waits for the debounce
        assert message_ids(claude_md) == []
    assert node.writes == 2  # the final write on stop
    assert message_ids(claude_md) == sent


def test_a_change_shows_while_the_node_runs(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    add_agent(rds, keys, "quick")
    node = make_node(rds, reader, keys, claude_md, debounce=0.2)
    with running(node):
        first = MessageStore(rds, keys).add("quick", "alert", "one").id
        retry_until(lambda: ids_now(claude_md, "messages") == [first], what="the message in the file")


def test_edits_made_between_two_updates_survive(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\r\n\r\n<ittybus>\r\n</ittybus>\r\n")
    add_agent(rds, keys, "editor")
    node = make_node(rds, reader, keys, claude_md)
    with running(node):
        edited = b"# Project, renamed \xf0\x9f\x93\x9d\r\n" + claude_md.read_bytes().split(b"\r\n", 1)[1]
        edited += b"\r\n## Added by the person\r\nno newline at the end"
        claude_md.write_bytes(edited)
        new = MessageStore(rds, keys).add("editor", "complete", "done").id
        retry_until(lambda: ids_now(claude_md, "messages") == [new], what="the message in the file")
    after = claude_md.read_bytes()
    assert after.startswith(b"# Project, renamed \xf0\x9f\x93\x9d\r\n")
    assert after.endswith(b"\r\n## Added by the person\r\nno newline at the end")
    assert after == splice(edited, read_block(after) or "")


def test_messages_are_capped_in_the_block_and_all_kept_in_redis(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    store = MessageStore(rds, keys)
    sent = [store.add("agent-1", "status", f"update {i}").id for i in range(5)]
    make_node(rds, reader, keys, claude_md, max_messages=3).update()
    assert message_ids(claude_md) == sent[-3:]
    assert [m.id for m in store.pending()] == sent


def test_read_only_file_is_a_clear_error_and_nothing_is_lost(
    ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    path = repo / "CLAUDE.md"
    path.write_bytes(b"# Mine\n")
    path.chmod(0o444)
    try:
        assert ib.run("send", "user", "? still there?").returncode == 0
        done = ib.run("status-node", "--once")
        assert done.returncode == 1
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("ib status-node: error: ")
        assert "read-only" in line and f"chmod u+w {path}" in line
        assert path.read_bytes() == b"# Mine\n"
        assert [m["text"] for m in json.loads(ib.run("messages", "--json").stdout)] == ["still there?"]
        path.chmod(0o644)
        assert ib.run("status-node", "--once").returncode == 0
        assert [m["content"] for m in block(path)["messages"]] == ["still there?"]
    finally:
        path.chmod(0o644)


def test_a_running_node_outlives_a_read_only_spell(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    add_agent(rds, keys, "patient")
    node = make_node(rds, reader, keys, claude_md)
    store = MessageStore(rds, keys)
    with running(node) as thread:
        claude_md.chmod(0o444)
        lost = store.add("patient", "alert", "while read-only").id
        retry_until(lambda: caught_up(rds, keys, node), what="the node to read the event")
        assert thread.is_alive()
        assert message_ids(claude_md) == []
        claude_md.chmod(0o644)
        later = store.add("patient", "status", "writable again").id
        retry_until(lambda: ids_now(claude_md, "messages") == [lost, later], what="both messages in the file")


def test_a_node_started_by_hand_refuses_a_read_only_file(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    claude_md.chmod(0o444)
    with pytest.raises(StatusFileError, match="read-only"):
        make_node(rds, reader, keys, claude_md).run()
    assert not rds.exists(keys.status_node(file_id(claude_md)))  # the heartbeat is released


def test_one_node_per_file(rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path) -> None:
    add_agent(rds, keys, "solo")
    with running(make_node(rds, reader, keys, claude_md)):
        with pytest.raises(StatusNodeBusy, match="already keeps"):
            make_node(rds, reader, keys, claude_md).run()
        assert make_node(rds, reader, keys, claude_md, auto=True).run() is False


def test_auto_node_stops_after_the_last_root_agent(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    claude_md.write_bytes(b"# Project\n")
    add_agent(rds, keys, "first")
    add_agent(rds, keys, "helper", manager="first")
    add_agent(rds, keys, "second")
    node = make_node(rds, reader, keys, claude_md, auto=True, create=False)
    thread = threading.Thread(target=node.run, daemon=True)
    thread.start()
    retry_until(lambda: node.writes == 1, what="the first write")
    agents = AgentStore(rds, keys)
    for gone in ("helper", "first"):
        agents.remove(gone)
        publish(rds, keys, make_event("killed", f"{gone} killed", agent=gone), 1000)
    retry_until(lambda: ids_now(claude_md, "root_agents") == ["second"], what="one root left")
    assert thread.is_alive()
    agents.remove("second")
    publish(rds, keys, make_event("merged", "second merged", agent="second"), 1000)
    thread.join(timeout=15)
    assert not thread.is_alive()
    assert block(claude_md)["root_agents"] == []  # the final write
    assert not rds.exists(keys.status_node(file_id(claude_md)))


def test_auto_node_never_creates_the_file(
    rds: redis.Redis, reader: redis.Redis, keys: Keys, claude_md: Path
) -> None:
    node = make_node(rds, reader, keys, claude_md, auto=True, create=False)
    assert node.run() is True  # no root agent: one update, then it returns
    assert not claude_md.exists()


def _node_pid(rds: redis.Redis, keys: Keys, path: Path) -> int | None:
    holder = rds.get(keys.status_node(file_id(path)))
    return int(str(holder).split(":")[1]) if holder else None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_worker_starts_the_node_with_the_first_root_agent_and_it_stops_after_the_last(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    ib.env["IB_STATUS_DEBOUNCE"] = "0.2"
    claude_md = repo / "CLAUDE.md"
    claude_md.write_bytes(b"# Repo notes\n\n<ittybus>\n</ittybus>\n")
    assert ib.run("worker", "--once").returncode == 0
    assert _node_pid(rds, keys, claude_md) is None  # no agent, no node

    spawned = ib.run("new-agent", "Paint the shed.\nfake: wait", "--name", "painter")
    assert spawned.returncode == 0, spawned.stderr
    assert ib.run("worker", "--once").returncode == 0
    pid = retry_until(lambda: _node_pid(rds, keys, claude_md), what="the status node's heartbeat")
    assert pid is not None
    retry_until(lambda: ids_now(claude_md, "root_agents") == ["painter"], what="painter in CLAUDE.md")
    assert ib.run("worker", "--once").returncode == 0
    assert _node_pid(rds, keys, claude_md) == pid  # still the one node

    assert ib.run("send", "user", "COMPLETE: shed painted", "--from", "painter").returncode == 0
    retry_until(
        lambda: ids_now(claude_md, "messages", "type") == ["complete"],
        what="the message",
    )

    assert ib.run("kill", "painter", "--force").returncode == 0
    retry_until(lambda: not _alive(pid), timeout=30, what="the status node to stop")
    assert _node_pid(rds, keys, claude_md) is None
    status = block(claude_md)
    assert status["root_agents"] == []
    assert [m["content"] for m in status["messages"]] == ["shed painted"]  # messages stay until acknowledged
    assert claude_md.read_bytes().startswith(b"# Repo notes\n\n<ittybus>\n<ittybus-status>\n")
    assert (repo / ".ib" / "status-node.log").exists()


def test_worker_leaves_a_repository_without_claude_md_alone(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    assert ib.run("new-agent", "Wait.\nfake: wait", "--name", "quiet").returncode == 0
    assert ib.run("worker", "--once").returncode == 0
    assert not (repo / "CLAUDE.md").exists()
    assert _node_pid(rds, keys, repo / "CLAUDE.md") is None
    assert ib.run("kill", "quiet", "--force").returncode == 0


def test_worker_start_can_be_switched_off(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    (repo / "CLAUDE.md").write_bytes(b"# Notes\n")
    assert ib.run("new-agent", "Wait.\nfake: wait", "--name", "off").returncode == 0
    assert ib.run("worker", "--once", env={"IB_STATUS_NODE_AUTO": "false"}).returncode == 0
    assert _node_pid(rds, keys, repo / "CLAUDE.md") is None
    assert (repo / "CLAUDE.md").read_bytes() == b"# Notes\n"
    assert ib.run("kill", "off", "--force").returncode == 0
