"""What a pushed message says: one line per event with the command that acts on it, bursts folded within
the size limit, the wire Claude Code's inbox reads, and what makes a socket path stale."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bus.inbox.session_inbox import inbox_of, session_pid
from bus.inbox.session_socket import LINE_LIMIT, problem, process_state, wire
from worker.hooks.post_tool_use import reminder
from worker.service.push_message import EXCERPT, event_line, fold


@pytest.mark.parametrize(
    ("kind", "command"),
    [
        ("permission", "ib approve builder"),
        ("question", "ib answer builder OPTION"),
        ("waiting", 'ib send builder "…"'),
        ("complete", "ib diff builder, then ib merge builder"),
        ("error", "ib look builder"),
        ("runaway", "ib look builder"),
    ],
    ids=["permission", "question", "waiting", "complete", "error", "runaway"],
)
def test_each_line_names_the_agent_what_happened_and_the_command(kind: str, command: str) -> None:
    line = event_line({"type": kind, "agent": "builder", "msg": "it happened"})
    assert line.startswith(f"builder {kind}: it happened → ")
    assert command in line


def test_a_huge_text_is_cut_and_says_so() -> None:
    line = event_line({"type": "complete", "agent": "a", "msg": "x" * 2_000_000})
    assert "… (cut)" in line and len(line) < EXCERPT + 100


def test_one_event_is_one_message_and_a_burst_is_folded_oldest_first() -> None:
    assert fold([]) == ("", [])
    text, ids = fold([("1-0", "a complete → ib diff a")])
    assert ids == ["1-0"] and text.startswith("[ittybus] [1-0] a complete")
    text, ids = fold([(f"{n}-0", f"agent-{n} complete") for n in range(100)])
    assert ids == [f"{n}-0" for n in range(100)]
    assert text.startswith("[ittybus] 100 events for you") and text.count("\n- [") == 100


def test_what_does_not_fit_waits_for_the_next_message() -> None:
    items = [(f"{n}-0", "y" * 300) for n in range(10)]
    text, ids = fold(items, limit=1_500)
    assert 0 < len(ids) < 10 and len(text) <= 1_500
    assert f"{len(ids)} of 10 events" in text


def test_the_wire_is_an_auth_line_then_a_user_message() -> None:
    auth, message = wire("T", "hello").decode().splitlines()
    assert json.loads(auth) == {"type": "auth", "token": "T"}
    assert json.loads(message) == {"type": "user", "message": {"role": "user", "content": "hello"}}
    with pytest.raises(ValueError, match="over the inbox's"):
        wire("T", "z" * LINE_LIMIT)


def test_stale_paths_are_named(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert problem(str(tmp_path / "gone")) == "its socket is gone (the session exited)"
    assert problem(str(plain)) == f"{plain} is a file, not a socket"
    assert problem(str(fifo)) == f"{fifo} is a FIFO, not a socket"


@pytest.mark.parametrize(
    ("stat", "state"),
    [
        ("1390 (claude) Z 1388 1390 1390 0 -1 4194560", "Z"),
        ("42 (a (b) c) S 1 42 42 0", "S"),
        ("7 (sh) R", "R"),
        ("", ""),
    ],
    ids=["zombie", "name-with-parentheses", "running", "empty"],
)
def test_the_process_state_is_read_after_its_name(stat: str, state: str) -> None:
    assert process_state(stat) == state


def test_the_inbox_comes_from_the_hooks_environment() -> None:
    env = {"CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/cc-socks/4242.sock", "CLAUDE_CODE_MESSAGING_TOKEN": "t"}
    assert inbox_of(env) == ("/tmp/cc-socks/4242.sock", "t")
    assert inbox_of({}) is None and inbox_of({"CLAUDE_CODE_MESSAGING_SOCKET": "relative.sock"}) is None
    assert session_pid("/tmp/cc-socks/4242.sock") == 4242 and session_pid("/x/odd.sock") == 0


@pytest.mark.parametrize(
    ("listener", "pushed", "inbox", "nags", "says_no_inbox"),
    [
        (False, False, True, True, False),
        (True, False, True, False, False),
        (False, True, True, False, False),
        (False, False, False, True, True),
    ],
    ids=["neither-path", "listener", "pushed", "no-inbox"],
)
def test_the_reminder_nags_only_when_neither_path_reaches_the_session(
    listener: bool, pushed: bool, inbox: bool, nags: bool, says_no_inbox: bool
) -> None:
    out = reminder({"hook_event_name": "PostToolUse"}, 1, listener, pushed=pushed, inbox=inbox)
    assert (out is not None) == nags
    assert ("no inbox" in (out or "")) == says_no_inbox
