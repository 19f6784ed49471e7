"""Which agents the pane watcher looks at closely between its ticks: those that may draw a dialog no
hook tells (auto mode), while their turn runs or shows a dialog."""

from __future__ import annotations

import pytest

from bus.stores.agent_store import Agent
from worker.service.pane_watch import watched_closely


@pytest.mark.parametrize(
    ("mode", "state", "close"),
    [
        ("auto", "running", True),
        ("auto", "permission", True),  # its answer may bring the next dialog at once
        ("auto", "waiting", False),
        ("auto", "complete", False),
        ("auto", "stopped", False),
        ("acceptEdits", "running", False),  # its dialogs are told by the PermissionRequest hook
        ("default", "running", False),
        ("", "running", False),  # an agent made before modes were recorded
    ],
)
def test_watched_closely(mode: str, state: str, close: bool) -> None:
    assert watched_closely(Agent(id="agent-1", permission_mode=mode), state) is close
