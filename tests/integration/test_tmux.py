"""worker.tmux.client against a real tmux server on a socket of its own: sessions, capture, the pane listing
and its activity stamps, errors for missing sessions and servers, and text that must reach the pane's
program exactly (the fake agent appends every message it receives to a file)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.waiting import retry_until
from worker.errors import SessionExists, SessionGone, TmuxError
from worker.tmux.client import Tmux
from worker.tmux.parse import PaneInfo


def _socket_file(name: str) -> Path:
    return Path(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", name)


@pytest.fixture
def tmux(tmux_socket: str) -> Iterator[Tmux]:
    """A Tmux on the test's own server (started by its first session), stopped afterwards (the socket file
    goes with `tmux_socket`)."""
    server = Tmux(tmux_socket, config_file="/dev/null")
    yield server
    server.kill_server()


class Receiver:
    """The fake agent in a session: it puts its terminal in raw mode with bracketed paste on, and
    appends each message submitted to it, verbatim plus a newline, to `received`."""

    def __init__(self, tmux: Tmux, root: Path, name: str = "ib-recv") -> None:
        self.tmux, self.name, self.received = tmux, name, root / "received.txt"
        command = shlex.join([sys.executable, "-m", "worker.fake.agent", ""])
        env = {"IB_FAKE_RECEIVED": str(self.received), "IB_FAKE_TRANSCRIPT_DIR": str(root / "transcripts")}
        tmux.new_session(name, root, command, env)
        self.wait_for_input_box()

    def wait_for_input_box(self) -> str:
        return self.wait_for("\n>\n", at_end=True)

    def data(self) -> bytes:
        return self.received.read_bytes() if self.received.exists() else b""

    def received_at_least(self, size: int) -> bytes:
        """What was received, once it is `size` bytes or more."""

        def enough() -> bytes:
            data = self.data()
            return data if len(data) >= size else b""

        return retry_until(enough, what=f"{size} bytes received")

    def wait_for(self, needle: str, at_end: bool = False) -> str:
        """The pane's text once `needle` is in it (or ends it)."""

        def shown() -> str:
            text = self.tmux.capture(self.name)
            return text if (text.endswith(needle) if at_end else needle in text) else ""

        return retry_until(shown, what=repr(needle))


@pytest.fixture
def receiver(tmux: Tmux, tmp_path: Path) -> Receiver:
    return Receiver(tmux, tmp_path)


def _large_text() -> str:
    line = "Enter C-c Escape; $(id) `x` \\ 'q' \"dq\" \t 日本語 🚀 -flag\n"
    text = line * (100_000 // len(line.encode()) + 1)
    return text[:100_000].rstrip("\n") + " end;"


SEND_CASES = {
    "plain": "hello world",
    "trailing-semicolon": "echo done;",
    "only-semicolon": ";",
    "two-semicolons": ";;",
    "backslash-semicolon": "path\\;",
    "tmux-separator-in-middle": "a ; kill-server ; b",
    "leading-dash": "-n --help",
    "only-dash": "-",
    "double-dash": "--",
    "key-name-enter": "Enter",
    "key-name-ctrl-c": "C-c",
    "key-name-escape": "Escape",
    "key-name-space": "Space",
    "key-names-and-semicolon": "Enter C-c Escape Space BSpace;",
    "quotes": """He said "don't" and 'left'""",
    "command-substitution": "$(rm -rf ~) `id` ${HOME} $PATH",
    "backslashes": "C:\\path\\to\\n \\\\ \\",
    "tmux-formats": "#{session_name} #(id) ## #[fg=red]",
    "tmux-braces": "{ kill-server }",
    "unicode": "Ünïcödé 日本語 ✓ ß",
    "emoji": "🚀 👩‍💻 🇫🇷 ✔️ 👍🏽",
    "tab": "col1\tcol2\t",
    "multi-line": "line one\nline two\n\nline four;",
    "multi-line-trailing-newline": "first\nsecond\n",
    "indented": "  indented\n\ttabbed",
    "long-line": "word " * 2000,
    "large-100k": _large_text(),
}


@pytest.mark.parametrize("text", SEND_CASES.values(), ids=SEND_CASES.keys())
def test_send_text_arrives_verbatim(receiver: Receiver, text: str) -> None:
    receiver.tmux.send_text(receiver.name, text)
    expected = text.encode() + b"\n"
    assert receiver.received_at_least(len(expected)) == expected


def test_send_text_without_enter_waits_for_it(receiver: Receiver) -> None:
    receiver.tmux.send_text(receiver.name, "first part, ", enter=False)
    receiver.tmux.send_text(receiver.name, "second line\nof the paste", enter=False)
    receiver.wait_for("first part, second line")
    assert receiver.data() == b""
    receiver.tmux.send_text(receiver.name, "")  # Enter alone
    assert receiver.received_at_least(1) == b"first part, second line\nof the paste\n"


def test_send_keys_presses_named_keys(receiver: Receiver) -> None:
    receiver.tmux.send_keys(receiver.name, "h", "i", "Space", "x", "BSpace", "y", ";", "Enter")
    assert receiver.received_at_least(1) == b"hi y;\n"

    receiver.tmux.send_text(receiver.name, "fake: sleep 600")
    receiver.wait_for("(esc to interrupt)")
    receiver.tmux.send_keys(receiver.name, "Escape")
    receiver.wait_for("Interrupted by user")


def test_capture_shows_the_screen_the_last_lines_or_the_history(receiver: Receiver) -> None:
    receiver.tmux.send_text(receiver.name, "shown on the screen")
    receiver.wait_for("⏺ Received: shown on the screen")

    tmux, session = receiver.tmux, "ib-counter"
    tmux.new_session(session, receiver.received.parent, "seq 1 300; exec sleep 600", {}, width=80, height=20)
    retry_until(lambda: tmux.capture(session).endswith("300\n"), what="300 on the screen")
    assert tmux.capture(session) == "".join(f"{n}\n" for n in range(282, 301))  # and the cursor's row
    assert tmux.capture(session, lines=3) == "298\n299\n300\n"
    assert tmux.capture(session, lines=50) == "".join(f"{n}\n" for n in range(251, 301))
    assert tmux.capture(session, history=True) == "".join(f"{n}\n" for n in range(1, 301))


def test_capture_joins_wrapped_lines(tmux: Tmux, tmp_path: Path) -> None:
    tmux.new_session("ib-wide", tmp_path, "printf '%0150d\\n' 7; exec sleep 600", {}, width=100, height=10)
    retry_until(lambda: tmux.capture("ib-wide"), what="the long line")
    assert tmux.capture("ib-wide") == "0" * 100 + "\n" + "0" * 49 + "7\n"
    assert tmux.capture("ib-wide", join=True) == "0" * 149 + "7\n"


def test_new_session_sets_cwd_env_and_runs_the_command(tmux: Tmux, tmp_path: Path) -> None:
    cwd = tmp_path / "work #{session_name} dir"
    cwd.mkdir()
    out = tmp_path / "out.txt"
    command = f'printf \'%s|%s|%s\\n\' "$PWD" "$IB_A" "$IB_B" > {shlex.quote(str(out))};'
    env = {"IB_A": "value with spaces; $HOME #{session_name}", "IB_B": "ends in;"}
    tmux.new_session("ib-env", cwd, command, env, remain_on_exit=True)

    written = retry_until(lambda: out.exists() and out.read_text(), what="the command's output")
    assert written == f"{cwd}|{env['IB_A']}|{env['IB_B']}\n"
    dead = retry_until(
        lambda: [p for p in tmux.panes() if p.session == "ib-env" and p.dead], what="dead pane"
    )
    assert dead[0].pid is not None
    assert tmux.pane_pid("ib-env") is None
    assert tmux.has_session("ib-env")


def test_a_kept_pane_reads_all_its_program_printed_before_it_is_dead(
    tmux: Tmux, tmux_socket: str, tmp_path: Path
) -> None:
    """tmux 3.3a marks a pane dead as its program's exit is noticed, dropping what the program printed last
    and tmux had not read yet, unless the pane is piped (3.4 reads to the end either way): an agent that
    refused to start then said nothing of why (once in six beside stress-ng). A kept pane is piped, and
    the programs that print and exit at once leave their words: all twenty nearly always. Beside stress-ng
    one pane in about 500 still lost them (the words not yet passed from the program's side of the
    terminal to tmux's when the exit is noticed), so the test allows one."""
    for n in range(20):
        tmux.new_session(f"ib-last-{n}", tmp_path, f"printf 'why {n}\\n'; exit 3", {}, remain_on_exit=True)
    piped = subprocess.run(
        ["tmux", "-L", tmux_socket, "list-panes", "-a", "-F", "#{session_name} #{pane_pipe}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(piped.stdout.split("\n")[:-1]) == sorted(f"ib-last-{n} 1" for n in range(20))
    retry_until(lambda: len([p for p in tmux.panes() if p.dead]) == 20, what="twenty dead panes")
    deaths = {n: tmux.death(f"ib-last-{n}") for n in range(20)}
    kept = [n for n, d in deaths.items() if d.last_lines == (f"why {n}",)]
    assert len(kept) >= 19, {n: d.last_lines for n, d in deaths.items()}
    assert {d.status for d in deaths.values()} <= {3, None}  # tmux 3.3a does not always have the status yet


def test_sessions_panes_and_kill(tmux: Tmux, tmp_path: Path) -> None:
    for name in ("ib-x-1", "ib-x-2", "other"):
        tmux.new_session(name, tmp_path, "exec sleep 600", {})
    assert tmux.sessions() == ["ib-x-1", "ib-x-2", "other"]
    assert tmux.sessions("ib-x-") == ["ib-x-1", "ib-x-2"]

    panes = {pane.session: pane for pane in tmux.panes()}
    assert sorted(panes) == ["ib-x-1", "ib-x-2", "other"]
    for name, pane in panes.items():
        assert pane.pid is not None
        assert pane.pid == tmux.pane_pid(name)
        assert not pane.dead
        assert pane.activity > 0
    retry_until(lambda: tmux.panes()[0].command == "sleep", what="sleep as the current command")

    tmux.kill_session("ib-x-1")
    assert not tmux.has_session("ib-x-1")
    assert tmux.sessions("ib-x-") == ["ib-x-2"]
    assert [pane.session for pane in tmux.panes()] == ["ib-x-2", "other"]


def test_names_match_exactly_never_by_prefix(tmux: Tmux, tmp_path: Path) -> None:
    tmux.new_session("ib-a10", tmp_path, "exec sleep 600", {})
    assert not tmux.has_session("ib-a1")
    with pytest.raises(SessionGone):
        tmux.send_text("ib-a1", "meant for another agent")
    with pytest.raises(SessionGone):
        tmux.kill_session("ib-a1")
    assert tmux.has_session("ib-a10")


def _pane(tmux: Tmux, session: str) -> PaneInfo:
    return next(pane for pane in tmux.panes() if pane.session == session)


def test_activity_changes_when_the_pane_prints(tmux: Tmux, tmp_path: Path) -> None:
    tmux.new_session("ib-quiet", tmp_path, "exec sleep 600", {})
    tmux.new_session("ib-loud", tmp_path, "exec cat", {})
    monitor = subprocess.run(
        ["tmux", "-L", str(tmux.socket_name), "show-options", "-gw", "monitor-activity"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert monitor.stdout == "monitor-activity off\n"  # tmux's default: the stamp moves without it
    quiet, loud = _pane(tmux, "ib-quiet").activity, _pane(tmux, "ib-loud").activity

    def printed() -> bool:  # stamps have whole seconds: print until the stamp moves
        tmux.send_text("ib-loud", "some output", enter_delay=0)
        return _pane(tmux, "ib-loud").activity > loud

    retry_until(printed, what="a newer activity stamp")
    assert _pane(tmux, "ib-quiet").activity == quiet


@pytest.mark.parametrize(
    "operation",
    [
        lambda t: t.capture("ib-missing"),
        lambda t: t.capture("ib-missing", history=True),
        lambda t: t.send_text("ib-missing", "hello"),
        lambda t: t.send_text("ib-missing", "a\nb"),
        lambda t: t.send_keys("ib-missing", "Enter"),
        lambda t: t.pane_pid("ib-missing"),
        lambda t: t.kill_session("ib-missing"),
    ],
    ids=["capture", "capture-history", "send-typed", "send-pasted", "send-keys", "pane-pid", "kill"],
)
def test_missing_session_is_gone(tmux: Tmux, tmp_path: Path, operation: Callable[[Tmux], object]) -> None:
    tmux.new_session("ib-present", tmp_path, "exec sleep 600", {})
    with pytest.raises(SessionGone) as caught:
        operation(tmux)
    message = str(caught.value)
    assert "'ib-missing'" in message
    assert f"tmux -L {tmux.socket_name} ls" in message
    assert "can't find session" in message
    assert not tmux.has_session("ib-missing")


def test_no_server_running(tmux: Tmux) -> None:
    assert tmux.sessions() == []
    assert tmux.panes() == []
    assert not tmux.has_session("ib-any")
    with pytest.raises(
        SessionGone, match=r"'ib-any' is gone: the tmux server `-L ibtest-\w+` is not running"
    ):
        tmux.send_text("ib-any", "hello")
    with pytest.raises(SessionGone):
        tmux.send_text("ib-any", "several\nlines")
    with pytest.raises(SessionGone):
        tmux.capture("ib-any")
    tmux.kill_server()  # nothing to stop


def test_kill_server_ends_sessions_and_removes_the_socket(tmux: Tmux, tmp_path: Path) -> None:
    tmux.new_session("ib-one", tmp_path, "exec sleep 600", {})
    assert _socket_file(str(tmux.socket_name)).exists()
    tmux.kill_server()
    assert not _socket_file(str(tmux.socket_name)).exists()
    assert tmux.sessions() == []


@pytest.mark.parametrize("remain_on_exit", [False, True], ids=["libtmux-new-session", "raw-new-session"])
def test_new_session_refusals(tmux: Tmux, tmp_path: Path, remain_on_exit: bool) -> None:
    tmux.new_session("ib-dup", tmp_path, "exec sleep 600", {})
    with pytest.raises(SessionExists, match="'ib-dup' already exists"):
        tmux.new_session("ib-dup", tmp_path, "exec sleep 600", {}, remain_on_exit=remain_on_exit)
    with pytest.raises(TmuxError, match="no such folder"):
        tmux.new_session("ib-nowhere", tmp_path / "missing", "exec sleep 600", {})
    with pytest.raises(TmuxError, match="cannot be a tmux session name"):
        tmux.new_session("ib.dot", tmp_path, "exec sleep 600", {})
    assert tmux.sessions() == ["ib-dup"]


def test_pasting_leaves_no_buffer_behind(receiver: Receiver) -> None:
    receiver.tmux.send_text(receiver.name, "pasted\ntext")
    receiver.received_at_least(1)
    with pytest.raises(SessionGone):
        receiver.tmux.send_text("ib-missing", "pasted\ntext")
    buffers = subprocess.run(
        ["tmux", "-L", str(receiver.tmux.socket_name), "list-buffers"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert buffers.stdout == ""


def _server_pid(tmux: Tmux) -> int:
    shown = subprocess.run(
        ["tmux", "-L", str(tmux.socket_name), "display-message", "-p", "#{pid}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(shown.stdout)


@pytest.mark.parametrize("remain_on_exit", [False, True], ids=["libtmux-new-session", "raw-new-session"])
def test_a_server_started_by_a_session_holds_no_secret(
    tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remain_on_exit: bool
) -> None:
    monkeypatch.setenv("IB_TELEGRAM_TOKEN", "123456:SECRET")
    monkeypatch.setenv("IB_REDIS_URL", "redis://:pw@127.0.0.1:6379/0")
    monkeypatch.setenv("IB_NAMESPACE", "ibtest:")
    tmux.new_session("ib-first", tmp_path, "exec sleep 600", {}, remain_on_exit=remain_on_exit)

    socket = ["tmux", "-L", str(tmux.socket_name)]
    shown = subprocess.run([*socket, "show-environment", "-g"], capture_output=True, text=True, check=True)
    names = {line.partition("=")[0] for line in shown.stdout.splitlines()}  # what the server was started with
    assert "IB_NAMESPACE" in names
    assert "IB_TELEGRAM_TOKEN" not in names
    assert "IB_REDIS_URL" not in names


def test_the_global_secrets_of_a_tainted_server_are_scrubbed(tmux: Tmux, tmp_path: Path) -> None:
    tmux.new_session("ib-first", tmp_path, "exec sleep 600", {})
    socket = ["tmux", "-L", str(tmux.socket_name)]
    subprocess.run([*socket, "set-environment", "-g", "IB_TELEGRAM_TOKEN", "1:x"], check=True)
    assert tmux.scrub_global_secrets() == ["IB_TELEGRAM_TOKEN"]
    shown = subprocess.run([*socket, "show-environment", "-g"], capture_output=True, text=True, check=True)
    assert "IB_TELEGRAM_TOKEN" not in shown.stdout


@pytest.mark.parametrize(
    "operation",
    [
        lambda t: t.capture("ib-stuck"),
        lambda t: t.has_session("ib-stuck"),
        lambda t: t.sessions(),
        lambda t: t.panes(),
        lambda t: t.send_text("ib-stuck", "a\nb"),
    ],
    ids=["capture", "has-session", "sessions", "panes", "paste"],
)
def test_a_stuck_server_is_an_error_that_names_the_fix(
    tmp_path: Path, operation: Callable[[Tmux], object]
) -> None:
    name = f"ibtest-{uuid.uuid4().hex[:10]}"
    tmux = Tmux(name, config_file="/dev/null")  # the set-up waits as long as a loaded machine needs
    try:
        tmux.new_session("ib-stuck", tmp_path, "exec sleep 600", {})
        pid = _server_pid(tmux)
        os.kill(pid, signal.SIGSTOP)
        try:
            fix = rf"did not answer in 0.5s: .* `tmux -u -L {name} .*kill-server`"
            with pytest.raises(TmuxError, match=fix):
                operation(Tmux(name, config_file="/dev/null", timeout=0.5))
        finally:
            os.kill(pid, signal.SIGCONT)
    finally:
        tmux.kill_server()


def test_everything_works_outside_a_utf8_locale(
    tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("LANG", "LC_CTYPE", "LANGUAGE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LC_ALL", "C")
    tmux.new_session("ib-c", tmp_path, "printf 'caf\\303\\251\\n'; exec sleep 600", {})
    assert tmux.sessions() == ["ib-c"]
    assert [pane.session for pane in tmux.panes()] == ["ib-c"]
    assert retry_until(lambda: tmux.capture("ib-c"), what="the text") == "café\n"
