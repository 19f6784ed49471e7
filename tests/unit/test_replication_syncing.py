"""Whether a write's replicas may still confirm it, read off `INFO replication`
(bus.events.append_once.syncing)."""

import pytest

from bus.events.append_once import syncing

NEVER_PROMOTED = "# Replication\r\nrole:master\r\nconnected_slaves:{n}\r\nsecond_repl_offset:-1\r\n"
PROMOTED = "# Replication\r\nrole:master\r\nconnected_slaves:{n}\r\nsecond_repl_offset:5821\r\n"


@pytest.mark.parametrize(
    ("info", "attached", "wanted", "expected"),
    [
        (NEVER_PROMOTED, 1, 1, True),  # attached, still syncing
        (NEVER_PROMOTED, 0, 1, False),  # nothing will come: fail at once
        (NEVER_PROMOTED, 1, 2, False),
        (PROMOTED, 0, 1, True),  # after a failover, before Sentinel moved the replicas over
        (PROMOTED, 2, 1, True),
    ],
)
def test_syncing(info: str, attached: int, wanted: int, expected: bool) -> None:
    assert syncing(info.format(n=attached), wanted) is expected


@pytest.mark.parametrize("info", ["", "garbage", "connected_slaves:\r\n", "# Replication\r\n"])
def test_an_info_without_the_fields_is_not_syncing(info: str) -> None:
    assert syncing(info, 1) is False
