"""The fault suite: real faults (Redis killed, processes killed mid-step, poison entries, no disk) and
the count of what was lost or delivered twice. The counts are written at the end (tests/faults/tally.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.tally import Tally, report_path, table
from tests.redis_server import RedisServer

_TALLY = Tally()


@pytest.fixture(scope="session")
def tally() -> Tally:
    return _TALLY


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test's own with an append-only file, on a free loopback port."""
    server = RedisServer(tmp_path / "redis", ["--appendonly", "yes", "--appendfsync", "everysec"]).start()
    yield server
    server.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _TALLY.rows:
        return
    path = report_path()
    _TALLY.write(path)
    terminalreporter.write_sep("-", f"faults survived (written to {path})")
    rows = [r.__dict__ for r in _TALLY.rows]
    terminalreporter.write_line(table(rows))
