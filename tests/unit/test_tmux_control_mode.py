"""worker.tmux.control_mode: which commands a control client takes, the line it reads them from, and the
framing of its replies among notifications and output lines that look like framing."""

from __future__ import annotations

import pytest

from worker.tmux.control_mode import Reply, ReplyFramer, control_argument, control_line, controllable
from worker.tmux.parse import PANES_FORMAT

CONTROLLABLE = {
    "list-sessions": (["list-sessions", "-F", "#{session_name}"], True),
    "list-panes-all": (["list-panes", "-a", "-F", PANES_FORMAT], True),
    "list-panes-target": (["list-panes", "-t", "=a:", "-F", "#{pane_pid}"], True),
    "list-panes-own-window": (["list-panes", "-F", "#{pane_pid}"], False),
    "capture-target": (["capture-pane", "-e", "-p", "-t", "=a:"], True),
    "capture-own-pane": (["capture-pane", "-p"], False),
    "has-session": (["has-session", "-t", "=a"], True),
    "display-print-target": (["display-message", "-p", "-t", "=a:", "#{pane_width}"], True),
    "display-no-target": (["display-message", "-p", "#{socket_path}"], False),
    "display-status-line": (["display-message", "-t", "=a:", "hello"], False),
    "send-keys": (["send-keys", "-t", "=a:", "-l", "--", "x"], False),
    "kill-session": (["kill-session", "-t", "=a"], False),
    "new-session": (["new-session", "-d", "-s", "a"], False),
}


@pytest.mark.parametrize(("command", "expected"), CONTROLLABLE.values(), ids=CONTROLLABLE.keys())
def test_controllable(command: list[str], expected: bool) -> None:
    assert controllable(command) is expected


ARGUMENTS = {
    "plain": ("abc", "'abc'"),
    "empty": ("", "''"),
    "single-quote": ("it's", "'it'\\''s'"),
    "parser-characters": ("a; #{x} ~ $HOME {", "'a; #{x} ~ $HOME {'"),
    "final-semicolon": ("a;", "'a;'"),
}


@pytest.mark.parametrize(("text", "quoted"), ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_control_argument(text: str, quoted: str) -> None:
    assert control_argument(text) == quoted


def test_control_line_joins_commands() -> None:
    commands = [["has-session", "-t", "=a"], ["capture-pane", "-p", "-t", "=a:"]]
    assert control_line(commands) == "'has-session' '-t' '=a' ; 'capture-pane' '-p' '-t' '=a:'"


LINELESS = {
    "not-a-read": [["has-session", "-t", "=a"], ["send-keys", "-t", "=a:", "x"]],
    "line-break": [["display-message", "-p", "-t", "=a:", "a\nb"]],
    "carriage-return": [["display-message", "-p", "-t", "=a:", "a\rb"]],
    "nothing": [],
}


@pytest.mark.parametrize("commands", LINELESS.values(), ids=LINELESS.keys())
def test_control_line_refuses(commands: list[list[str]]) -> None:
    assert control_line(commands) is None


def _replies(lines: list[str]) -> list[Reply]:
    framer = ReplyFramer()
    return [reply for line in lines if (reply := framer.feed(line)) is not None]


FRAMES = {
    "notifications-between": (
        [
            "%begin 17 264 0",
            "%end 17 264 0",
            "%window-add @1",
            "%sessions-changed",
            "%session-changed $1 ittybus-control-1-1",
            "%begin 17 270 1",
            "ib-a",
            "%end 17 270 1",
            "%exit",
        ],
        [Reply(264, False, True, ""), Reply(270, True, True, "ib-a\n")],
    ),
    "framing-lookalikes-inside": (
        [
            "%begin 17 271 1",
            "%end 17 271 0",
            "%end 1 2 1",
            "%begin 17 272 1",
            "%error 17 271",
            "%output %1 x",
            "",
            "%end 17 271 1",
        ],
        [
            Reply(
                271, True, True, "%end 17 271 0\n%end 1 2 1\n%begin 17 272 1\n%error 17 271\n%output %1 x\n\n"
            )
        ],
    ),
    "error": (
        ["%begin 17 273 1", "can't find session: nope", "%error 17 273 1"],
        [Reply(273, True, False, "can't find session: nope\n")],
    ),
    "not-a-begin": (["%begin", "%begin 17 x 1", "%begin 17 274 1 2", "text"], []),
    "odd-characters": (
        ["%begin 17 275 1", "\x1b[31mred\x1b[39m\ta\x1fb é 💥", "%end 17 275 1"],
        [Reply(275, True, True, "\x1b[31mred\x1b[39m\ta\x1fb é 💥\n")],
    ),
}


@pytest.mark.parametrize(("lines", "expected"), FRAMES.values(), ids=FRAMES.keys())
def test_reply_framer(lines: list[str], expected: list[Reply]) -> None:
    assert _replies(lines) == expected
