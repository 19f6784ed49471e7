"""Redis restarts (SIGTERM, then started again on the same port and append-only file) under running
consumers: `ib events`, `ib events --group` and `ib listen` say so once on stderr, reconnect, and go on
with every event shown once; none of them exits."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from bus.events.envelope import EVENT_FIELD, encode, make_event
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer
from tests.waiting import retry_until

RESTARTS, EACH = 3, 10


class Lines:
    """Every line a running process printed so far, read from its pipe by a thread of its own."""

    def __init__(self, process: subprocess.Popen[str], stream: str = "stdout") -> None:
        self.lines: list[str] = []
        pipe = getattr(process, stream)
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe: object) -> None:
        for line in pipe:  # type: ignore[attr-defined]
            self.lines.append(line.rstrip("\n"))

    def messages(self) -> list[str]:
        return _messages("\n".join(self.lines))


def _messages(out: str) -> list[str]:
    return [json.loads(line)["msg"] for line in out.splitlines() if line.startswith("{")]


def _blocked_in(server: RedisServer, command: str, count: int) -> bool:
    return sum(1 for c in server.client().client_list() if c.get("cmd") == command) >= count


def _lost_in_flight(server: RedisServer, namespace: str, text: str) -> str:
    """An event the grouped follower's consumer read whose reply never reached it (Redis went down with
    it): appended and read in one transaction under that consumer's name, so the follower, blocked in its
    read, is not woken for it; it is pending for that consumer until it reads its own again. A task event,
    which the plain listener acknowledges without printing."""
    stream, client = Keys(namespace).events, server.client()
    consumers = [c["name"] for c in client.xinfo_consumers(stream, "scripts")]  # the follower's process's
    assert len(consumers) == 1, consumers
    pipe = client.pipeline(transaction=True)
    pipe.xadd(stream, {EVENT_FIELD: encode(make_event("task_added", text))})
    pipe.xreadgroup("scripts", consumers[0], {stream: ">"}, count=1)
    _id, read = pipe.execute()
    assert read, "the transaction read nothing"
    client.close()
    return text


@pytest.mark.timeout(300)
def test_followers_and_listeners_outlive_redis_restarts(
    ib: IbRunner, own_redis: RedisServer, tally: Tally, tmp_path: Path
) -> None:
    env = {"IB_REDIS_URL": own_redis.url}
    follower = ib.popen("events", env=env)
    grouped = ib.popen("events", "--group", "scripts", env=env)
    followed, grouped_out = Lines(follower), Lines(grouped)
    followed_err, grouped_err = Lines(follower, "stderr"), Lines(grouped, "stderr")
    sent: list[str] = []
    heard: list[str] = []
    listener_errors: list[str] = []
    in_flight: list[
        str
    ] = []  # the group's, read by its consumer as Redis went down (not the listener's type)
    try:
        retry_until(lambda: _blocked_in(own_redis, "xread", 1), 60, 0.05, "`ib events` to block in XREAD")
        retry_until(lambda: _blocked_in(own_redis, "xreadgroup", 1), 60, 0.05, "the group to block")
        for round_ in range(RESTARTS):
            listener = ib.popen("listen", "--timeout", "120", env=env)
            retry_until(lambda: _blocked_in(own_redis, "xreadgroup", 2), 60, 0.05, "the listener to block")
            in_flight.append(_lost_in_flight(own_redis, ib.env["IB_NAMESPACE"], f"lost-{round_}"))
            own_redis.stop()
            own_redis.start()
            for i in range(EACH):
                text = f"r{round_}-{i}"
                assert ib.run("notify", text, env=env).returncode == 0
                sent.append(text)
            out, err = listener.communicate(timeout=120)
            assert listener.returncode == 0, err
            heard += _messages(out)
            listener_errors.append(err)
            for _ in range(EACH):  # a listener exits after its first batch: the next ones print the rest
                if len(heard) >= len(sent):
                    break
                heard += _messages(ib.run("listen", "--timeout", "10", env=env).stdout)
            everything = len(sent) + len(in_flight)
            retry_until(lambda: len(followed.messages()) == everything, 60, 0.05, "`ib events` to catch up")  # noqa: B023
            retry_until(lambda: len(grouped_out.messages()) == everything, 60, 0.05, "the group to catch up")  # noqa: B023
        assert follower.poll() is None and grouped.poll() is None  # neither exited
    finally:
        for process in (follower, grouped):
            process.terminate()
            process.wait(timeout=30)
    for err in [*listener_errors, "\n".join(followed_err.lines), "\n".join(grouped_err.lines)]:
        assert "Traceback" not in err
    assert all(
        e.count("reconnecting") == 1 and e.count("connected to Redis again") == 1 for e in listener_errors
    )
    assert "\n".join(grouped_err.lines).count("reconnecting") == RESTARTS
    rows = [
        ("`ib events`", [*sent, *in_flight], followed.messages()),
        ("`ib events --group`", [*sent, *in_flight], grouped_out.messages()),
        ("`ib listen` (a new one per restart)", sent, heard),
    ]
    for who, wanted, seen in rows:
        row = tally.count(
            f"Redis restarted {RESTARTS}× (SIGTERM, AOF) under {who}",
            wanted,
            seen,
            note="no consumer exited; one 'lost ... reconnecting' and one 'connected again' line per restart"
            + (
                f"; {len(in_flight)} reads in flight as Redis went down, handled after it"
                if "group" in who
                else ""
            ),
        )
        assert (row.lost, row.twice) == (0, 0), who
