"""worker.tmux.server's mapping of libtmux's exceptions to ours: each names the session and the server,
and says what to do; a failed tmux call keeps tmux's own words and their meaning (gone, exists)."""

from __future__ import annotations

import pytest
from libtmux import exc

from worker.errors import SessionExists, SessionGone, TmuxError
from worker.tmux.server import TmuxFailed, libtmux_error

MAPPED = {
    "tmux-failed-no-session": (
        TmuxFailed("capture-pane", "can't find session: ib-a\n"),
        SessionGone,
        ["'ib-a' is gone", "-L sock", "can't find session"],
    ),
    "tmux-failed-no-server": (
        TmuxFailed("has-session", "no server running on /tmp/tmux-0/sock\n"),
        SessionGone,
        ["is not running", "Start the agent again"],
    ),
    "tmux-failed-duplicate": (
        TmuxFailed("new-session", "duplicate session: ib-a\n"),
        SessionExists,
        ["'ib-a' already exists", "kill-session -t =ib-a"],
    ),
    "tmux-failed-other": (TmuxFailed("send-keys", "unknown key: Nope\n"), TmuxError, ["unknown key: Nope"]),
    "session-exists": (exc.TmuxSessionExists("Session named ib-a exists"), SessionExists, ["stop it first"]),
    "object-does-not-exist": (
        exc.TmuxObjectDoesNotExist("pane_id", "%9", "list-panes", ("-t", "%9")),
        SessionGone,
        ["'ib-a' is gone", "Could not find pane_id=%9"],
    ),
    "bad-session-name": (exc.BadSessionName("contains periods", "ib.a"), TmuxError, ["letters, digits"]),
    "no-tmux": (exc.TmuxCommandNotFound(), TmuxError, ["install tmux 3.3"]),
    "version-too-low": (exc.VersionTooLow("tmux 2.9 is too old"), TmuxError, ["install tmux 3.3"]),
    "any-other": (exc.LibTmuxException("something odd"), TmuxError, ["libtmux failed", "something odd"]),
}


@pytest.mark.parametrize(("error", "ours", "said"), MAPPED.values(), ids=MAPPED.keys())
def test_libtmux_error(error: exc.LibTmuxException, ours: type[TmuxError], said: list[str]) -> None:
    mapped = libtmux_error(error, "ib-a", "sock")
    assert type(mapped) is ours
    for words in said:
        assert words in str(mapped)


def test_libtmux_error_for_the_whole_server() -> None:
    mapped = libtmux_error(exc.LibTmuxException("odd"), None, None)
    assert str(mapped) == "libtmux failed for tmux on the default tmux server: odd"
