"""The supervisor's pure half: restart backoff, crash bookkeeping, health, the stack file and `ib ps`."""

from __future__ import annotations

import pytest

from worker.service.supervisor_state import (
    MAX_DELAY,
    STABLE_AFTER,
    Probe,
    ServiceRecord,
    StackRecord,
    bus_label,
    describe_exit,
    health,
    healthy,
    next_streak,
    ps_rows,
    restart_delay,
    service_line,
    span,
    table_lines,
)

T = 1_800_000_000.0


@pytest.mark.parametrize(
    ("streak", "delay"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, MAX_DELAY), (1000, MAX_DELAY), (-1, 0.0)],
    ids=["none", "first", "second", "third", "sixth", "capped", "huge", "negative"],
)
def test_restart_delay_doubles_up_to_the_cap(streak: int, delay: float) -> None:
    assert restart_delay(streak) == delay


@pytest.mark.parametrize(
    ("streak", "ran_for", "expected"),
    [(0, 0.5, 1), (3, 0.5, 4), (3, STABLE_AFTER, 1), (5, 3600.0, 1)],
    ids=["first-crash", "crash-loop", "ran-long-enough", "ran-an-hour"],
)
def test_next_streak(streak: int, ran_for: float, expected: int) -> None:
    assert next_streak(streak, ran_for) == expected


def test_crashes_in_a_row_back_off_and_count() -> None:
    record = ServiceRecord(name="worker").started(100, T)
    record = record.crashed(-9, T + 1)
    assert (record.state, record.pid, record.restarts, record.streak) == ("backoff", None, 1, 1)
    assert record.next_start_at == T + 1 + 1.0
    record = record.started(101, T + 2).crashed(1, T + 2.5)
    assert (record.restarts, record.streak, record.last_exit) == (2, 2, 1)
    assert record.next_start_at == T + 2.5 + 2.0
    record = record.started(102, T + 5).crashed(1, T + 5 + STABLE_AFTER)
    assert (record.restarts, record.streak) == (3, 1)


RUNNING = ServiceRecord(name="worker", argv=("ib", "worker"), state="running", pid=42, started_at=T - 90)
BACKOFF = ServiceRecord(
    name="worker", state="backoff", restarts=2, last_exit=-9, last_crash_at=T - 1, next_start_at=T + 3
)
OFF = ServiceRecord(name="bot", state="off", note="set IB_TELEGRAM_TOKEN to add it")


@pytest.mark.parametrize(
    ("record", "probe", "expected", "ok"),
    [
        (RUNNING, Probe(alive=True, heartbeat=True), "ok", True),
        (RUNNING, Probe(alive=True, heartbeat=None), "ok", True),
        (RUNNING, Probe(alive=True, heartbeat=False), "no heartbeat", False),
        (RUNNING, Probe(alive=False), "down", False),
        (RUNNING, Probe(alive=True, bus=False), "no bus", False),
        (RUNNING, Probe(alive=False, bus=False), "down", False),
        (BACKOFF, Probe(alive=False), "restarting in 3s", False),
        (OFF, Probe(alive=False), "off", None),
        (RUNNING.stopped(), Probe(alive=False), "stopped", None),
    ],
    ids=[
        "ok",
        "no-heartbeat-to-check",
        "heartbeat-not-ours",
        "dead",
        "alive-bus-down",
        "dead-bus-down",
        "backoff",
        "off",
        "stopped",
    ],
)
def test_health(record: ServiceRecord, probe: Probe, expected: str, ok: bool | None) -> None:
    assert health(record, probe, T) == expected
    assert healthy(record, probe) is ok


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (None, "-"),
        (0, "exit 0"),
        (2, "exit 2"),
        (-9, "killed by SIGKILL"),
        (-15, "killed by SIGTERM"),
        (-200, "killed by signal 200"),
    ],
    ids=["none", "clean", "error", "sigkill", "sigterm", "unknown-signal"],
)
def test_describe_exit(code: int | None, text: str) -> None:
    assert describe_exit(code) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (59.9, "59s"), (60, "1m"), (3599, "59m"), (3600, "1h"), (86400 * 3, "3d"), (-5, "0s")],
    ids=["zero", "seconds", "minute", "minutes", "hour", "days", "negative"],
)
def test_span(seconds: float, text: str) -> None:
    assert span(seconds) == text


@pytest.mark.parametrize(
    ("url", "embedded", "label"),
    [
        ("redis://127.0.0.1:41234/0", True, "embedded 127.0.0.1:41234"),
        ("redis://:s3cret@bus.example:6380/2", False, "redis bus.example:6380"),
        ("rediss://user:pw@bus.example/0", False, "redis bus.example:6379"),
        ("unix:///run/redis.sock", False, "redis /run/redis.sock"),
    ],
    ids=["embedded", "password-hidden", "default-port", "unix-socket"],
)
def test_bus_label_never_shows_a_password(url: str, embedded: bool, label: str) -> None:
    assert bus_label(url, embedded) == label


def test_stack_file_round_trip_and_unknown_fields() -> None:
    stack = StackRecord(
        supervisor=7,
        started_at=T,
        bus="embedded 127.0.0.1:1",
        namespace="ib:",
        worker_id="host",
        detached=True,
        services=(RUNNING, OFF),
    )
    assert StackRecord.from_json(stack.to_json()) == stack
    newer = stack.to_json().replace('"supervisor": 7,', '"supervisor": 7, "from_the_future": 1,')
    assert StackRecord.from_json(newer) == stack


@pytest.mark.parametrize(
    "raw", ["[]", '{"services": 3}', "{}", "not json"], ids=["list", "bad", "empty", "text"]
)
def test_garbage_is_not_a_stack_file(raw: str) -> None:
    with pytest.raises(ValueError, match=r"^not a stack file: ") as caught:
        StackRecord.from_json(raw)
    assert "\n" not in str(caught.value)


# `.ib/stack.json` as the dataclass version wrote it (json.dumps of asdict): read the same
OLD_STACK_FILE = """{
  "supervisor": 4242,
  "started_at": 1800000000.5,
  "bus": "embedded 127.0.0.1:41234",
  "namespace": "ib:",
  "worker_id": "laptop",
  "detached": false,
  "services": [
    {"name": "worker", "argv": ["ib", "worker"], "state": "running", "pid": 4243, "started_at": 1800000001.0,
     "restarts": 1, "streak": 1, "last_exit": -9, "last_crash_at": 1799999990.0, "next_start_at": 0.0,
     "log": "/r/.ib/logs/worker.log", "note": ""},
    {"name": "bot", "argv": [], "state": "off", "pid": null, "started_at": 0.0, "restarts": 0, "streak": 0,
     "last_exit": null, "last_crash_at": 0.0, "next_start_at": 0.0, "log": "", "note": "set a token"}
  ]
}
"""


def test_a_stack_file_of_the_dataclass_version_reads_the_same() -> None:
    stack = StackRecord.from_json(OLD_STACK_FILE)
    worker = ServiceRecord(
        name="worker",
        argv=("ib", "worker"),
        state="running",
        pid=4243,
        started_at=1800000001.0,
        restarts=1,
        streak=1,
        last_exit=-9,
        last_crash_at=1799999990.0,
        log="/r/.ib/logs/worker.log",
    )
    bot = ServiceRecord(name="bot", state="off", note="set a token")
    assert stack == StackRecord(
        supervisor=4242,
        started_at=1800000000.5,
        bus="embedded 127.0.0.1:41234",
        namespace="ib:",
        worker_id="laptop",
        services=(worker, bot),
    )


def test_with_service_replaces_or_appends() -> None:
    stack = StackRecord(supervisor=1, started_at=T, services=(RUNNING,))
    changed = stack.with_service(BACKOFF).with_service(OFF)
    assert [s.name for s in changed.services] == ["worker", "bot"]
    assert changed.service("worker") == BACKOFF


def test_ps_rows_and_table() -> None:
    stack = StackRecord(supervisor=1, started_at=T, services=(BACKOFF, OFF))
    rows = ps_rows(stack, {"worker": Probe(alive=False)}, T)
    assert rows == [
        ("worker", "-", "backoff", "restarting in 3s", "2", "-", "killed by SIGKILL, 1s ago"),
        ("bot", "-", "off", "off", "-", "-", "-"),
    ]
    assert table_lines(("a", "bb"), [("xxx", "y")]) == ["a    bb", "xxx  y"]


@pytest.mark.parametrize(
    ("record", "probe", "line"),
    [
        (RUNNING, Probe(alive=True, heartbeat=True), "worker 42 ok"),
        (BACKOFF, Probe(alive=False), "worker restarting in 3s (killed by SIGKILL, 2 restarts)"),
        (OFF, Probe(alive=False), "bot off: set IB_TELEGRAM_TOKEN to add it"),
    ],
    ids=["running", "crashed", "off"],
)
def test_service_line(record: ServiceRecord, probe: Probe, line: str) -> None:
    assert service_line(record, probe, T) == line
