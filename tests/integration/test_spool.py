"""Redis unreachable → the event is spooled, the producer exits 0; Redis back → flushed once, in order."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from urllib.parse import quote

import pytest

from bus.events import spool
from bus.events.envelope import make_event, stamped
from bus.events.publish import xadd
from bus.settings.hotconf import read_hotconf
from bus.wire.address import Address
from bus.wire.keys import Keys
from bus.wire.resp import Connection
from tests.cli import IbRunner
from tests.redis_server import RedisServer
from tests.streams import stream_entries
from tests.waiting import retry_until


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"redis://127.0.0.1:{s.getsockname()[1]}/0"


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.split("\n") if line.startswith("{")]


def test_spool_then_flush_in_order_exactly_once(ib: IbRunner, tmp_path: Path) -> None:
    down = {"IB_REDIS_URL": _closed_port()}
    for i in range(5):
        done = ib.run("notify", f"while down {i}", env=down, timeout=10)
        assert done.returncode == 0
        assert "kept in" in done.stderr and "sent when Redis answers" in done.stderr
    listing = ib.run("spool", env=down)
    assert "5 event(s)" in listing.stdout
    # Redis answers again under that URL? No: the spool belongs to its bus. Flush it onto the test bus.
    spool_dir = tmp_path / "spool"
    (source,) = spool.pending(str(spool_dir))
    target = source.target
    with Connection(Address.from_url(ib.env["IB_REDIS_URL"]), 2.0) as conn:
        sent = spool.flush(conn, str(spool_dir), target, ib.env["IB_NAMESPACE"], 1000)
        assert sent == 5
        again = spool.flush(conn, str(spool_dir), target, ib.env["IB_NAMESPACE"], 1000)
        assert again == 0
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == [f"while down {i}" for i in range(5)]


def test_next_ib_call_flushes_before_its_own_event(ib: IbRunner, tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    url = ib.env["IB_REDIS_URL"]
    for i in range(3):
        spool.append(str(spool_dir), url, ib.env["IB_NAMESPACE"], make_event("waiting", f"old {i}"))
    assert ib.run("notify", "new").returncode == 0
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == ["old 0", "old 1", "old 2", "new"]
    assert spool.pending(str(spool_dir)) == []


def test_interrupted_flush_never_publishes_twice(ib: IbRunner, tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    url, ns = ib.env["IB_REDIS_URL"], ib.env["IB_NAMESPACE"]
    for i in range(4):
        spool.append(str(spool_dir), url, ns, make_event("complete", f"e{i}"))
    path = Path(spool.spool_path(str(spool_dir), url, ns))
    copy = tmp_path / "copy.jsonl"
    shutil.copy(path, copy)
    with Connection(Address.from_url(url), 2.0) as conn:
        assert spool.flush(conn, str(spool_dir), url, ns, 1000) == 4
        shutil.copy(copy, path)  # as if the process died after publishing, before emptying the file
        assert spool.flush(conn, str(spool_dir), url, ns, 1000) == 0
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == ["e0", "e1", "e2", "e3"]


def test_damaged_spool_line_is_kept_aside_not_lost(ib: IbRunner, tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    url, ns = ib.env["IB_REDIS_URL"], ib.env["IB_NAMESPACE"]
    spool.append(str(spool_dir), url, ns, make_event("complete", "good"))
    path = Path(spool.spool_path(str(spool_dir), url, ns))
    with path.open("ab") as f:
        f.write(b'{"spool_id": "cut in ha')
    assert "1 damaged" in ib.run("spool").stdout
    assert ib.run("spool", "--flush").returncode == 0
    assert Path(str(path) + ".damaged").read_bytes().startswith(b'{"spool_id": "cut in ha')
    assert [e["msg"] for e in lines(ib.run("listen", "--timeout", "5").stdout)] == ["good"]


def test_a_line_cut_by_a_crash_never_swallows_the_next_record(ib: IbRunner, tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    url, ns = ib.env["IB_REDIS_URL"], ib.env["IB_NAMESPACE"]
    spool.append(str(spool_dir), url, ns, make_event("complete", "before"))
    path = Path(spool.spool_path(str(spool_dir), url, ns))
    with path.open("ab") as f:
        f.write(b'{"spool_id": "cut in ha')  # a producer killed half way through its write
    spool.append(str(spool_dir), url, ns, make_event("complete", "after"))
    assert ib.run("spool", "--flush").returncode == 0
    assert [e["msg"] for e in lines(ib.run("listen", "--timeout", "5").stdout)] == ["before", "after"]
    damaged = Path(str(path) + ".damaged")
    assert damaged.read_bytes() == b'{"spool_id": "cut in ha\n'
    assert (damaged.stat().st_mode & 0o777, path.stat().st_mode & 0o777) == (0o600, 0o600)


def test_a_spool_written_by_an_older_version_is_sent_once(ib: IbRunner, tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    url, ns = ib.env["IB_REDIS_URL"], ib.env["IB_NAMESPACE"]
    path = Path(spool.spool_path(str(spool_dir), url, ns))
    path.parent.mkdir(parents=True)
    event = json.dumps(make_event("complete", "from an older ib"))  # no client-made id
    old = {"spool_id": "0123456789abcdef01234567", "target": url, "namespace": ns, "event": event}
    path.write_text(json.dumps(old) + "\n")
    shutil.copy(path, tmp_path / "copy.jsonl")
    assert ib.run("spool", "--flush").returncode == 0
    shutil.copy(tmp_path / "copy.jsonl", path)  # flushed again, as after a crash before emptying it
    assert ib.run("spool", "--flush").returncode == 0
    assert [e["msg"] for e in lines(ib.run("listen", "--timeout", "5").stdout)] == ["from an older ib"]


def test_an_event_sent_again_with_its_id_is_appended_once(ib: IbRunner) -> None:
    conf = read_hotconf(environ=ib.environ(), cwd=str(ib.cwd))
    event = stamped(make_event("complete", "sent twice"))
    with Connection(Address.from_url(ib.env["IB_REDIS_URL"]), 2.0) as conn:
        first, again = xadd(conn, conf, event), xadd(conn, conf, event)
    assert first == again  # the retry is told the id of the first append
    assert [e["msg"] for e in lines(ib.run("listen", "--timeout", "5").stdout)] == ["sent twice"]


def test_spool_command_flushes_on_demand(ib: IbRunner, tmp_path: Path) -> None:
    spool.append(
        str(tmp_path / "spool"), ib.env["IB_REDIS_URL"], ib.env["IB_NAMESPACE"], make_event("question", "q")
    )
    out = ib.run("spool", "--flush").stdout
    assert "sent 1" in out
    assert ib.run("spool").stdout.strip() == "spool is empty"


@pytest.mark.parametrize("command", [["hook", "post-tool-use"]], ids=["post-tool-use"])
def test_hook_with_redis_down_is_silent(ib: IbRunner, command: list[str]) -> None:
    done = ib.run(*command, stdin='{"cwd": "/"}', env={"IB_REDIS_URL": _closed_port()}, timeout=10)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_missing_unix_socket_spools(ib: IbRunner) -> None:
    done = ib.run("notify", "x", env={"IB_REDIS_URL": "unix:///nonexistent/redis.sock"}, timeout=10)
    assert done.returncode == 0
    assert "kept in" in done.stderr


def test_unusable_spool_folder_falls_back_to_a_private_temp_folder(ib: IbRunner, tmp_path: Path) -> None:
    blocked = tmp_path / "spool"
    blocked.write_text("a file where the spool folder should be\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    down = {"IB_REDIS_URL": _closed_port(), "TMPDIR": str(temp)}
    for i in range(3):
        done = ib.run("notify", f"kept {i}", env=down, timeout=10)
        assert done.returncode == 0, done.stderr
        assert f"kept in {temp}/ittybus-spool-" in done.stderr
    (folder,) = temp.iterdir()
    assert folder.stat().st_mode & 0o777 == 0o700
    (kept,) = folder.glob("*.jsonl")
    assert [json.loads(json.loads(x)["event"])["msg"] for x in kept.read_text().splitlines()] == [
        "kept 0",
        "kept 1",
        "kept 2",
    ]
    assert "3 event(s)" in ib.run("spool", env=down).stdout


def test_fallback_folder_flushes_with_the_rest(ib: IbRunner, tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    url, ns = ib.env["IB_REDIS_URL"], ib.env["IB_NAMESPACE"]
    (tmp_path / "spool").write_text("in the way\n")
    fallback_env = {"TMPDIR": str(temp)}
    done = ib.run("notify", "x", env={**fallback_env, "IB_REDIS_URL": "unix:///nonexistent.sock"})
    assert done.returncode == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(temp))
        spool.append(str(tmp_path / "spool"), url, ns, make_event("waiting", "from the fallback"))
    (tmp_path / "spool").unlink()
    assert ib.run("notify", "now", env=fallback_env).returncode == 0
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == ["from the fallback", "now"]


def test_nothing_writable_notify_fails_in_one_line(ib: IbRunner, tmp_path: Path) -> None:
    (tmp_path / "spool").write_text("in the way\n")
    (tmp_path / "tmp").write_text("the temp dir is a file too\n")
    done = ib.run("notify", "lost?", env={"IB_REDIS_URL": _closed_port(), "TMPDIR": str(tmp_path / "tmp")})
    assert done.returncode == 1
    assert done.stderr.startswith("ib notify: error: cannot spool the event (")
    assert len(done.stderr.splitlines()) == 1


def _agent_with_nowhere_to_spool(ib: IbRunner, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of agent a1's hooks with Redis refused and both spool folders unusable (files
    in their way), and the agent's folder, where its agent.log goes."""
    (tmp_path / "spool").write_text("in the way\n")
    (tmp_path / "tmp").write_text("the temp dir is a file too\n")
    folder = ib.cwd / ".ib" / "agents" / "a1"
    folder.mkdir(parents=True)
    env = {
        "IB_REDIS_URL": _closed_port(),
        "TMPDIR": str(tmp_path / "tmp"),
        "IB_AGENT_ID": "a1",
        "IB_ROOT": str(ib.cwd),
    }
    return env, folder


def test_nothing_writable_stop_hook_says_it_and_logs_it(ib: IbRunner, tmp_path: Path) -> None:
    env, folder = _agent_with_nowhere_to_spool(ib, tmp_path)
    payload = json.dumps({"session_id": "s", "last_assistant_message": "x\nWAITING", "cwd": str(ib.cwd)})
    done = ib.run("hook", "stop", stdin=payload, env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("ib hook stop: error: cannot spool the event (")
    assert len(done.stderr.splitlines()) == 1
    assert "[hook stop] cannot spool the event" in (folder / "agent.log").read_text()


def test_a_running_worker_sends_what_was_spooled(agents_ib: IbRunner, tmp_path: Path) -> None:
    """Nothing else runs `ib`: the worker's tick finds the spooled events and sends them."""
    worker = agents_ib.popen("worker")
    try:
        url, ns = agents_ib.env["IB_REDIS_URL"], agents_ib.env["IB_NAMESPACE"]
        retry_until(lambda: agents_ib.run("bus", "status").returncode == 0, what="the bus")
        for i in range(3):
            spool.append(str(tmp_path / "spool"), url, ns, make_event("waiting", f"spooled {i}"))
        path = Path(spool.spool_path(str(tmp_path / "spool"), url, ns))
        retry_until(lambda: path.stat().st_size == 0, timeout=20, what="the worker to flush the spool")
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    got = lines(agents_ib.run("listen", "--timeout", "5", "--types", "waiting").stdout)
    assert [e["msg"] for e in got] == ["spooled 0", "spooled 1", "spooled 2"]


def test_nothing_writable_event_hook_says_it_and_logs_it(ib: IbRunner, tmp_path: Path) -> None:
    env, folder = _agent_with_nowhere_to_spool(ib, tmp_path)
    payload = {"hook_event_name": "Notification", "notification_type": "idle_prompt", "cwd": str(ib.cwd)}
    done = ib.run("hook", "event", stdin=json.dumps(payload), env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("ib hook event: error: cannot spool the event (")
    assert len(done.stderr.splitlines()) == 1
    assert "[hook event] cannot spool the event" in (folder / "agent.log").read_text()


def test_no_password_in_a_spool_file_its_records_or_ib_spool(ib: IbRunner, tmp_path: Path) -> None:
    """A bus of one's own with a password (`@`, `:` and `%` in it): the spool names it masked, and the
    flush finds the password in IB_REDIS_URL again, never on disk."""
    secret = "p@ss:w%rd"
    server = RedisServer(tmp_path / "redis", password=secret).start()
    url = f"redis://:{quote(secret, safe='')}@127.0.0.1:{server.port}/0"
    server.stop()
    own = {"IB_REDIS_URL": url}
    assert ib.run("notify", "kept while down", env=own, timeout=10).returncode == 0
    files = [p for p in (tmp_path / "spool").rglob("*") if p.is_file()]
    assert files
    for path in files:
        for shown in (secret, quote(secret, safe=""), "w%rd", "w%25rd"):
            assert shown not in path.name and shown not in path.read_text(encoding="utf-8"), path
    listing = ib.run("spool", env=own)
    assert "1 event(s) for redis://:****@127.0.0.1" in listing.stdout
    assert "w%" not in listing.stdout + listing.stderr
    elsewhere = ib.run("spool", "--flush", env={"IB_REDIS_URL": _closed_port()})
    assert elsewhere.returncode == 1 and "another bus" in elsewhere.stderr
    assert len(elsewhere.stderr.strip().splitlines()) == 1
    server.start()
    try:
        flushed = ib.run("spool", "--flush", env=own)
        assert "sent 1" in flushed.stdout, flushed.stderr
        events = stream_entries(server.client(), Keys(ib.env["IB_NAMESPACE"]).events)
        assert [json.loads(fields["e"])["msg"] for _id, fields in events] == ["kept while down"]
    finally:
        server.stop()
