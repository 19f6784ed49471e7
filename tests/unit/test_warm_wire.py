"""Which command lines the warm server runs (worker.cli.warm.wire.served)."""

from __future__ import annotations

import pytest

from worker.cli.warm.wire import served


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["list"], True),
        (["task", "list"], True),
        (["worker", "--once"], True),  # one pass and out: a command like the others
        (["worker", "--once", "-v"], True),
        (["worker"], False),  # the service: its own process, supervised by pid and command line
        (["worker", "-v"], False),
        (["up"], False),
        (["bot"], False),
        (["mcp"], False),
        (["watch"], False),
        (["bus", "start"], False),
    ],
)
def test_served(argv: list[str], expected: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IB_WARM", raising=False)
    assert served(argv) is expected


def test_ib_warm_0_serves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IB_WARM", "0")
    assert not served(["list"])
