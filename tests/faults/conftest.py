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
    """A redis-server of the test's own with an append-only file, on a free loopback port. Each write is in
    the file before Redis answers it (`appendfsync always`): with `everysec`, Redis on a loaded machine holds
    the file's writes back for up to 2 s while a background fsync runs, still answering, so a kill -9 could
    lose writes it had confirmed (a worker command read in flight, seen once in a full run), which no client
    can keep. What these tests count lost must be ittybus's doing."""
    server = RedisServer(tmp_path / "redis", ["--appendonly", "yes", "--appendfsync", "always"]).start()
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
