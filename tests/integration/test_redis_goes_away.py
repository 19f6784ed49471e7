"""Redis going away in the middle of a command is one clear line, not a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import redis

from bus.embedded import free_port, server_binary
from tests.cli import IbRunner
from tests.waiting import retry_until


def test_events_follower_reports_a_lost_redis(ib: IbRunner, tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    try:
        url = f"redis://127.0.0.1:{port}/0"
        retry_until(
            lambda: ib.run("bus", "status", env={"IB_REDIS_URL": url}).returncode == 0, what="redis up"
        )
        follower = ib.popen("events", env={"IB_REDIS_URL": url})
        probe = redis.Redis.from_url(url, decode_responses=True)
        retry_until(
            lambda: any(c.get("cmd") == "xread" for c in probe.client_list()),
            what="the follower to block in XREAD",
        )
        probe.close()
    finally:
        server.kill()
        server.wait()
    _out, err = follower.communicate(timeout=60)
    assert follower.returncode == 1
    assert err.startswith("ib events: error: lost the connection to Redis")
    assert "Traceback" not in err
