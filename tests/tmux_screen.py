"""A real agent CLI's screen in a tmux server of its own, driven the way a person would: start it in a pane
of a given width, read the screen, wait for what it shows, type and press keys, close the server. The
capture tools and the offline tests of the three CLIs build on it."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

HEIGHT = 50  # rows, like an agent's pane
Sign = str | Callable[[str], bool]


class TmuxScreen:
    """The pane driving a capture stage or a test pane shares. The class using it has `socket` (its own
    tmux server) and `width`, and names the error a missing screen raises."""

    socket: str
    width: int
    session: ClassVar[str] = "cap"
    missing: ClassVar[type[Exception]] = AssertionError  # what a screen that never shows raises
    wait_limit: ClassVar[float] = 60.0  # seconds a screen may take to appear on two busy cores
    poll: ClassVar[float] = 0.1
    quiet: ClassVar[float] = 1.0  # seconds of an unchanged screen that mean the program waits for keys

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False)
        return done.stdout

    def open(self, command: str, cwd: Path) -> None:
        """Run `command` in a fresh pane of `width` x HEIGHT in `cwd`; the pane stays when it exits."""
        size = ["-x", str(self.width), "-y", str(HEIGHT), "-c", str(cwd)]
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", self.session, *size, command)
        self.tmux("set-option", "-t", self.session, "remain-on-exit", "on")

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def wait(self, sign: Sign, timeout: float | None = None) -> str:
        """Poll the pane until `sign` (a text, or a test of the whole screen) shows; return the screen."""
        limit = self.wait_limit if timeout is None else timeout
        check = sign if callable(sign) else (lambda screen: sign in screen)
        deadline = time.monotonic() + limit
        while not check(screen := self.text()):
            if time.monotonic() > deadline:
                raise self.missing(f"no {sign!r} on screen after {limit}s; last screen:\n{screen}")
            time.sleep(self.poll)
        return screen

    def settle(self, quiet: float | None = None, timeout: float | None = None) -> str:
        """Wait until the screen has not changed for `quiet` seconds (the program is ready for keys)."""
        limit = self.wait_limit if timeout is None else timeout
        still = self.quiet if quiet is None else quiet
        deadline = time.monotonic() + limit
        screen, since = self.text(), time.monotonic()
        while time.monotonic() - since < still:
            if time.monotonic() > deadline:
                raise self.missing(f"the screen kept changing for {limit}s")
            time.sleep(self.poll)
            if (now := self.text()) != screen:
                screen, since = now, time.monotonic()
        return screen

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def type(self, text: str) -> None:
        """Type `text` and submit it once the input box shows it."""
        self.tmux("send-keys", "-t", self.session, "-l", text)
        self.wait(text)
        self.keys("Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
