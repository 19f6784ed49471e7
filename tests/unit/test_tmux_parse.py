"""worker.tmux.parse: escaping for tmux's command line, the typed-or-pasted choice, the parsers of
list-panes / list-sessions / capture-pane output, and tmux error lines turned into our errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.errors import SessionExists, SessionGone, TmuxError
from worker.tmux.parse import (
    MAX_TYPED_BYTES,
    PANES_FORMAT,
    SEPARATOR,
    Failure,
    PaneInfo,
    capture_text,
    check_session_name,
    command_line,
    env_arguments,
    failure,
    format_literal,
    needs_capture,
    pane_target,
    parse_panes,
    parse_sessions,
    paste_bytes,
    session_target,
    tmux_argument,
    tmux_error,
    typed,
)


def tmux_reads(args: list[str]) -> list[list[str]]:
    """What tmux 3.3 makes of its command-line arguments (cmd_parse_from_arguments): an argument ending
    in `;` ends a command and loses the `;`, unless a `\\` precedes it, which then becomes the `;`."""
    commands: list[list[str]] = [[]]
    for given_arg in args:
        arg, end = given_arg, False
        if arg.endswith(";"):
            arg = arg[:-1]
            if arg.endswith("\\"):
                arg = arg[:-1] + ";"
            else:
                end = True
        if not end or arg:
            commands[-1].append(arg)
        if end:
            commands.append([])
    return [command for command in commands if command]


@pytest.mark.parametrize(
    ("text", "argument"),
    [
        ("plain", "plain"),
        ("", ""),
        ("end;", "end\\;"),
        (";", "\\;"),
        (";;", ";\\;"),
        ("a\\;", "a\\\\;"),
        ("mid; dle", "mid; dle"),
        ("-x", "-x"),
        ("\\", "\\"),
    ],
    ids=["plain", "empty", "trailing-semicolon", "only-semicolon", "two-semicolons", "backslash-semicolon",
         "inner-semicolon", "dash", "backslash"],
)  # fmt: skip
def test_tmux_argument(text: str, argument: str) -> None:
    assert tmux_argument(text) == argument
    assert tmux_reads(["send-keys", "-l", "--", argument]) == [["send-keys", "-l", "--", text]]


@given(st.text())
def test_tmux_reads_back_any_argument(text: str) -> None:
    assert tmux_reads(["send-keys", "-l", tmux_argument(text)]) == [["send-keys", "-l", text]]


@pytest.mark.parametrize(
    ("commands", "args"),
    [
        ([["has-session", "-t", "=a"]], ["has-session", "-t", "=a"]),
        ([["load-buffer", "-"], ["paste-buffer", "-d"]], ["load-buffer", "-", ";", "paste-buffer", "-d"]),
        ([["new-session", "echo hi;"], ["set", "x"]], ["new-session", "echo hi\\;", ";", "set", "x"]),
    ],
    ids=["one", "chained", "argument-ending-in-semicolon"],
)
def test_command_line(commands: list[list[str]], args: list[str]) -> None:
    assert command_line(*commands) == args
    assert tmux_reads(args) == commands


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words", True),
        ("end;", True),
        ("-starts with a dash", True),
        ("Enter", True),
        ("Ünïcödé 🚀 👩‍💻", True),
        ("$(rm -rf /) `x` \\ 'q' \"dq\"", True),
        ("x" * MAX_TYPED_BYTES, True),
        ("x" * (MAX_TYPED_BYTES + 1), False),
        ("é" * (MAX_TYPED_BYTES // 2 + 1), False),
        ("two\nlines", False),
        ("carriage\rreturn", False),
        ("a\ttab", False),
        ("an \x1b escape", False),
        ("a \x7f delete", False),
        ("a \x85 C1 control", False),
        ("lone \ud800 surrogate", False),
    ],
    ids=["plain", "semicolon", "dash", "key-name", "unicode", "shell", "at-limit", "over-limit",
         "over-limit-in-bytes", "newline", "cr", "tab", "escape", "del", "c1", "surrogate"],
)  # fmt: skip
def test_typed(text: str, expected: bool) -> None:
    assert typed(text) is expected


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ("a\nb", b"a\nb"),
        ("caf\u00e9 🚀", "café 🚀".encode()),
        ("x\x1b[201~then keys", b"xthen keys"),
        ("\x1b[200~inner\x1b[201~", b"inner"),
        ("\x1b[A arrow stays", b"\x1b[A arrow stays"),
        ("lone \ud800", b"lone ?"),
    ],
    ids=["lines", "unicode", "paste-end-marker", "paste-start-marker", "other-escape", "surrogate"],
)
def test_paste_bytes(text: str, data: bytes) -> None:
    assert paste_bytes(text) == data


def _pane_line(*fields: str) -> str:
    return SEPARATOR.join(fields)


@pytest.mark.parametrize(
    ("output", "panes"),
    [
        ("", []),
        (
            _pane_line("ib-a", "123", "0", "1700000000", "claude") + "\n",
            [PaneInfo("ib-a", 123, False, "claude", 1700000000)],
        ),
        (
            _pane_line("ib-a", "123", "0", "1700000000", "node")
            + "\n"
            + _pane_line("ib-b", "456", "1", "1700000005", "bash")
            + "\n",
            [
                PaneInfo("ib-a", 123, False, "node", 1700000000),
                PaneInfo("ib-b", 456, True, "bash", 1700000005),
            ],
        ),
        (_pane_line("s", "", "0", "", "") + "\n", [PaneInfo("s", None, False, "", 0)]),
        (
            _pane_line("s", "7", "0", "1", "odd" + SEPARATOR + "name") + "\n",
            [PaneInfo("s", 7, False, "odd" + SEPARATOR + "name", 1)],
        ),
        ("garbage line\n" + _pane_line("s", "7", "0", "1", "sh"), [PaneInfo("s", 7, False, "sh", 1)]),
    ],
    ids=["empty", "one", "two-one-dead", "blank-fields", "separator-in-command", "malformed-skipped"],
)
def test_parse_panes(output: str, panes: list[PaneInfo]) -> None:
    assert parse_panes(output) == panes


def test_panes_format_asks_for_the_parsed_fields() -> None:
    assert PANES_FORMAT.split(SEPARATOR) == [
        "#{session_name}",
        "#{pane_pid}",
        "#{pane_dead}",
        "#{window_activity}",
        "#{pane_current_command}",
    ]


@pytest.mark.parametrize(
    ("output", "prefix", "names"),
    [
        ("", "", []),
        ("ib-a\nib-b\nother\n", "", ["ib-a", "ib-b", "other"]),
        ("ib-a\nib-b\nother\n", "ib-", ["ib-a", "ib-b"]),
        ("ib-a\n\nother", "zz", []),
    ],
    ids=["none", "all", "prefix", "no-match"],
)
def test_parse_sessions(output: str, prefix: str, names: list[str]) -> None:
    assert parse_sessions(output, prefix) == names


@pytest.mark.parametrize(
    ("output", "lines", "text"),
    [
        ("", None, ""),
        ("\n\n\n", None, ""),
        ("a\nb\n\n\n\n", None, "a\nb\n"),
        ("a  \n\nb \n\n", None, "a\n\nb\n"),
        ("1\n2\n3\n4\n\n\n", 2, "3\n4\n"),
        ("1\n2\n", 5, "1\n2\n"),
        ("1\n2\n", 0, ""),
        ("  indented\n", None, "  indented\n"),
    ],
    ids=["empty", "blank-rows", "trailing-rows", "trailing-spaces", "last-lines", "fewer-than-asked", "zero",
         "leading-space-kept"],
)  # fmt: skip
def test_capture_text(output: str, lines: int | None, text: str) -> None:
    assert capture_text(output, lines) == text


@pytest.mark.parametrize(
    ("activity", "captured_at", "expected"),
    [
        (100, None, True),
        (100, 100.5, True),  # output later in the second of the capture has the same stamp
        (101, 100.5, True),
        (99, 100.5, False),
        (100, 101.0, False),
    ],
    ids=["never-captured", "same-second", "later-second", "older", "quiet-since"],
)
def test_needs_capture(activity: int, captured_at: float | None, expected: bool) -> None:
    assert needs_capture(activity, captured_at) is expected


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("ib-3f2a-agent-1", True),
        ("a_b@c+d", True),
        ("", False),
        ("a.b", False),
        ("a:b", False),
        ("#{pane_id}", False),
        ("with space", False),
        ("=a", False),
        ("-flag", False),
    ],
    ids=["usual", "allowed-punctuation", "empty", "dot", "colon", "format", "space", "equals", "dash-first"],
)
def test_check_session_name(name: str, valid: bool) -> None:
    if valid:
        assert check_session_name(name) == name
    else:
        with pytest.raises(TmuxError, match="cannot be a tmux session name"):
            check_session_name(name)


def test_targets_match_exact_names() -> None:
    assert session_target("ib-a") == "=ib-a"
    assert pane_target("ib-a") == "=ib-a:"


@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({}, []),
        ({"A": "1", "B_2": "x=y; $HOME #{s}"}, ["-e", "A=1", "-e", "B_2=x=y; $HOME #{s}"]),
        ({"EMPTY": ""}, ["-e", "EMPTY="]),
    ],
    ids=["none", "values-kept-as-they-are", "empty-value"],
)
def test_env_arguments(env: dict[str, str], args: list[str]) -> None:
    assert env_arguments(env) == args


@pytest.mark.parametrize(
    "key", ["", "A=B", "1ST", "has space"], ids=["empty", "equals", "digit-first", "space"]
)
def test_env_arguments_refuse_bad_keys(key: str) -> None:
    with pytest.raises(TmuxError, match="environment variable name"):
        env_arguments({key: "v"})


@pytest.mark.parametrize(
    ("text", "literal"),
    [("/tmp/plain", "/tmp/plain"), ("/tmp/a#b", "/tmp/a##b"), ("/x/#{session_name}", "/x/##{session_name}")],
    ids=["plain", "hash", "format"],
)
def test_format_literal(text: str, literal: str) -> None:
    assert format_literal(text) == literal


@pytest.mark.parametrize(
    ("stderr", "kind"),
    [
        ("no server running on /tmp/tmux-0/ib\n", Failure.NO_SERVER),
        ("error connecting to /tmp/tmux-0/ib (No such file or directory)\n", Failure.NO_SERVER),
        ("error connecting to /tmp/tmux-0/ib (Connection refused)\n", Failure.NO_SERVER),
        ("server exited unexpectedly\n", Failure.NO_SERVER),
        ("lost server\n", Failure.NO_SERVER),
        ("can't find session: ib-a\n", Failure.NO_SESSION),
        ("can't find pane: %3\n", Failure.NO_SESSION),
        ("can't find window: 2\n", Failure.NO_SESSION),
        ("duplicate session: ib-a\n", Failure.DUPLICATE),
        ("error connecting to /tmp/tmux-0/ib (Permission denied)\n", Failure.OTHER),
        ("unknown command: frob\n", Failure.OTHER),
        ("", Failure.OTHER),
    ],
    ids=["no-server", "no-socket", "refused", "server-exited", "lost-server", "no-session", "no-pane",
         "no-window", "duplicate", "permission", "unknown", "silent"],
)  # fmt: skip
def test_failure(stderr: str, kind: Failure) -> None:
    assert failure(stderr) is kind


@pytest.mark.parametrize(
    ("stderr", "socket", "error", "words"),
    [
        (
            "can't find session: ib-a",
            "t1",
            SessionGone,
            ["'ib-a'", "-L t1", "`tmux -L t1 ls`", "start the agent"],
        ),
        (
            "no server running on /tmp/tmux-0/t1",
            "t1",
            SessionGone,
            ["'ib-a'", "not running", "Start the agent"],
        ),
        ("can't find session: ib-a", None, SessionGone, ["default tmux server", "`tmux ls`"]),
        ("duplicate session: ib-a", "t1", SessionExists, ["already exists", "kill-session -t =ib-a"]),
        (
            "unknown command: frob",
            None,
            TmuxError,
            ["tmux send-keys failed", "'ib-a'", "unknown command: frob"],
        ),
    ],
    ids=["gone", "no-server", "default-server", "duplicate", "other"],
)
def test_tmux_error(stderr: str, socket: str | None, error: type[TmuxError], words: list[str]) -> None:
    found = tmux_error("send-keys", "ib-a", socket, stderr)
    assert type(found) is error
    for word in words:
        assert word in str(found)
