"""`ib watch` (the dashboard, plain mode: a snapshot on each change) while its Redis restarts, cleanly
(SIGTERM) and by a crash (kill -9): it keeps running, says in words that the bus is down and which view
it keeps (never a raw "Error 111 connecting to …"), comes back by itself, and shows every event once."""

from __future__ import annotations

import signal

import pytest

from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.faults.test_consumers_outlive_redis import Lines
from tests.redis_server import RedisServer, hung_up_on
from tests.waiting import retry_until

RESTARTS, EACH = 2, 8
KNOCKS = 6
TITLE = "ittybus · "


def last_snapshot(lines: list[str]) -> list[str]:
    """The lines of the last whole snapshot printed (each starts with the title line, ends with a blank)."""
    whole: list[str] = []
    for start in (i for i, line in enumerate(lines) if line.startswith(TITLE)):
        end = next((j for j in range(start, len(lines)) if not lines[j]), None)
        if end is not None:
            whole = lines[start:end]
    return whole


def shown_messages(lines: list[str], sent: list[str]) -> list[str]:
    """Each sent message once per event row of the last snapshot that shows it."""
    rows = last_snapshot(lines)
    return [text for text in sent for row in rows if row.rstrip().endswith(f" {text}")]


def outage_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "the bus is down" in line]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_watch_outlives_redis_restarts(ib: IbRunner, own_redis: RedisServer, tally: Tally, sig: int) -> None:
    env = {"IB_REDIS_URL": own_redis.url, "COLUMNS": "100"}
    watch = ib.popen("watch", "--plain", env=env)
    out, err = Lines(watch), Lines(watch, "stderr")
    sent: list[str] = []
    try:
        for round_ in range(RESTARTS):
            for i in range(EACH):
                text = f"w{round_}-{i}"
                assert ib.run("notify", text, env=env).returncode == 0
                sent.append(text)
            retry_until(lambda: len(shown_messages(out.lines, sent)) == len(sent), 60, 0.1, "events shown")
            own_redis.stop(sig)
            with hung_up_on(own_redis.port) as knocks:  # away for a while: several tries to reconnect
                retry_until(lambda: outage_lines(out.lines[-40:]), 60, 0.1, "the dashboard to say so")
                retry_until(lambda: knocks.count >= KNOCKS, 60, 0.05, "the dashboard to try again and again")
            own_redis.start()
        retry_until(lambda: not outage_lines(last_snapshot(out.lines)), 60, 0.1, "the dashboard to come back")
        for i in range(EACH):
            text = f"after-{i}"
            assert ib.run("notify", text, env=env).returncode == 0
            sent.append(text)
        retry_until(
            lambda: len(shown_messages(out.lines, sent)) >= len(sent), 60, 0.1, "the last events shown"
        )
        assert watch.poll() is None, "\n".join(err.lines)
    finally:
        watch.terminate()
        watch.wait(timeout=30)
    printed = "\n".join(out.lines + err.lines)
    assert "Traceback" not in printed
    raw = ("Error 111", "Connection refused", "(104,", "Connection closed by server")
    assert not [word for word in raw if word in printed], outage_lines(out.lines)
    said = sorted(set(outage_lines(out.lines)))
    # in words (the footer is cut to the width): why, then which view is kept
    assert said and all(line.strip().startswith("the bus is down: ") for line in said), said
    name = "SIGTERM" if sig == signal.SIGTERM else "kill -9"
    row = tally.count(
        f"Redis restarted {RESTARTS}× ({name}, AOF) under `ib watch --plain` "
        "(`test_watch_outlives_redis.py`)",
        sent,
        shown_messages(out.lines, sent),
        note=f"the dashboard kept running and came back by itself; meanwhile its footer said {said[0]!r}",
    )
    assert (row.lost, row.twice) == (0, 0)
