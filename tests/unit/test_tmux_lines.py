"""`ib info`'s tmux lines: the socket and the exact command that attaches to the agent's terminal."""

from __future__ import annotations

import pytest

from worker.agents.views import tmux_lines

CASES = {
    "own-socket": (
        "ib-work",
        "ib-a1",
        False,
        ["tmux:      socket ib-work", "attach:    tmux -L ib-work attach -t ib-a1"],
    ),
    "default-server": (
        None,
        "ib-a1",
        False,
        ["tmux:      socket default", "attach:    tmux attach -t ib-a1"],
    ),
    "on-another-worker": (
        "ib work",
        "ib-a1",
        True,
        [
            "tmux:      socket ib work (on that worker's machine)",
            "attach:    tmux -L 'ib work' attach -t ib-a1",
        ],
    ),
}


@pytest.mark.parametrize(("socket", "session", "elsewhere", "lines"), CASES.values(), ids=CASES.keys())
def test_tmux_lines(socket: str | None, session: str, elsewhere: bool, lines: list[str]) -> None:
    assert tmux_lines(socket, session, elsewhere) == lines
