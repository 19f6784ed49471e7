"""The dashboard while its bus is down: the reason in words, the view it keeps with its time, and a clock
that goes on (a Redis server of the test's own, stopped under it)."""

from __future__ import annotations

import time
from pathlib import Path

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from tests.cli import init_repo
from tests.redis_server import RedisServer
from tests.waiting import retry_until
from worker.frontends.dashboard import Dashboard
from worker.runtime import Runtime


def test_a_stopped_bus_is_said_in_words_and_the_clock_goes_on(tmp_path: Path, namespace: str) -> None:
    repo = init_repo(tmp_path / "repo")
    server = RedisServer(tmp_path / "redis").start()
    rt = Runtime(Settings(redis_url=server.url, namespace=namespace), client_for(server.url), repo)
    board = Dashboard(rt, client_for(server.url, blocking=True))
    try:
        board.start()
        before = board.snapshot()
        server.stop()
        first = board.snapshot()
        later = retry_until(
            lambda: (snap := board.snapshot()).clock != first.clock and snap, what="the clock to move on"
        )
    finally:
        board.stop()
        server.stop()
    assert first.footer == (
        f"the bus is down: nothing listens at 127.0.0.1:{server.port}; showing the view of {before.clock}, "
        "waiting for it to come back"
    )
    assert "Error 111" not in later.footer and later.footer == first.footer  # the view's time stays
    for snap in (first, later):
        assert snap.clock == time.strftime("%H:%M:%S", time.localtime(snap.now))
