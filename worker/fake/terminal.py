"""The fake agent's terminal: raw mode with bracketed paste, a keyboard thread that turns input into
submitted lines and interrupts (decoding in worker.fake.script), and pane output shaped like Claude Code's."""

from __future__ import annotations

import os
import queue
import select
import shutil
import sys
import termios
import threading
import tty
from collections.abc import Iterator
from contextlib import contextmanager

from worker.fake.script import KeyDecoder, KeyEvent

SPINNER = "✻ Working… (esc to interrupt)"
ESCAPE_WAIT = 0.05  # how long a lone ESC waits for the rest of an escape sequence


@contextmanager
def raw_terminal(fd: int) -> Iterator[None]:
    """Raw input (every key as it comes, no signals from Ctrl-C) with bracketed paste on; restored after.

    Output processing stays on, so "\\n" still starts a new line. A stdin that is not a terminal is
    read as it is.
    """
    saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    if saved is not None:
        tty.setraw(fd)
        attrs = termios.tcgetattr(fd)
        attrs[1] |= termios.OPOST | termios.ONLCR
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    sys.stdout.write("\x1b[?2004h")
    sys.stdout.flush()
    try:
        yield
    finally:
        sys.stdout.write("\x1b[?2004l")
        sys.stdout.flush()
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class Keyboard:
    """Reads the terminal on a thread: submitted lines go to a queue, Escape sets `interrupt`, and
    typing is echoed while `idle` (the input box is on screen); what was typed during a turn shows in the
    next input box, as Claude Code keeps what is typed ahead in its box."""

    def __init__(self, fd: int, screen: Screen) -> None:
        self.fd, self.screen, self.decoder = fd, screen, KeyDecoder()
        self.submissions: queue.Queue[bytes | None] = queue.Queue()
        self.interrupt, self.idle = threading.Event(), threading.Event()
        self.dialog = threading.Event()  # a dialog is on screen: keys are choices, not typing
        self.choices: queue.Queue[bytes] = queue.Queue()
        self._typing = threading.Lock()  # the typed line and its echo change together

    def show_box(self) -> None:
        """Draw the input box with what was typed ahead in it; from now on typing is echoed."""
        with self._typing:
            self.screen.input_box()
            self.screen.raw(bytes(self.decoder.line))
            self.idle.set()

    def start(self) -> None:
        threading.Thread(target=self._read, name="keyboard", daemon=True).start()

    def _read(self) -> None:
        while True:
            timeout = ESCAPE_WAIT if self.decoder.escape_pending else None
            data = os.read(self.fd, 4096) if select.select([self.fd], [], [], timeout)[0] else None
            if data == b"":
                self.submissions.put(None)
                return
            with self._typing:
                self._handle(self.decoder.flush_escape() if data is None else self.decoder.feed(data))

    def _handle(self, events: list[KeyEvent]) -> None:
        for event in events:
            if event.kind in ("submit", "eof"):
                self.submissions.put(event.data if event.kind == "submit" else None)
            elif self.dialog.is_set() and event.kind in ("echo", "interrupt", "key"):
                self.decoder.line.clear()
                self.choices.put(b"\x1b" if event.kind == "interrupt" else event.data)
            elif event.kind == "key":
                continue  # arrows and a bare Enter move nothing in the input box
            elif event.kind == "interrupt":
                self.interrupt.set()
            elif self.idle.is_set():
                self.screen.raw(event.data)


class Screen:
    """Pane output shaped like Claude Code's: `⏺ ` bullets, `  ⎿  ` results, a spinner, an input box."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def raw(self, data: bytes) -> None:
        with self._lock:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    def text(self, text: str) -> None:
        self.raw(text.encode())

    def bullet(self, text: str, mark: str = "⏺ ", indent: str = "  ") -> None:
        first, *rest = text.splitlines() or [""]
        self.text(f"\n{mark}{first}\n" + "".join(f"{indent}{line}\n" if line else "\n" for line in rest))

    def result(self, lines: list[str]) -> None:
        self.text("".join(("  ⎿  " if i == 0 else "     ") + line + "\n" for i, line in enumerate(lines)))

    def spinner(self, on: bool) -> None:
        self.text(SPINNER if on else "\r\x1b[2K")

    def dialog(self, text: str) -> int:
        """Draw a dialog under the conversation; returns its height, for `erase`."""
        self.text(text)
        return text.count("\n")

    def erase(self, lines: int) -> None:
        """Remove the last `lines` lines (an answered dialog), as Claude Code redraws its screen."""
        self.text(f"\x1b[{lines}A\r\x1b[J" if lines else "")

    def input_box(self) -> None:
        self.text("\n" + "─" * min(shutil.get_terminal_size().columns, 80) + "\n> ")
