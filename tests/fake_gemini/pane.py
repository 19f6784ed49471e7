"""The real Gemini CLI in a tmux pane of its own, offline against the stand-in: a private HOME, a git
repository to work in, the keys a person would type, and waits on what the screen shows."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_gemini.client import client_env, gemini_binary, write_home
from tests.fake_gemini.server import FakeGemini

HEIGHT = 50
WAIT = 90.0  # seconds a screen may take to appear on two busy cores (the CLI takes ~5 s to start)
IDLE_HINT = "Type your message"  # the empty input box's placeholder: what was typed has been submitted
Sign = str | Callable[[str], bool]


class ScreenMissing(AssertionError):
    """A screen the caller waits for did not appear."""


@dataclass
class GeminiPane:
    """One Gemini CLI session: `start()` it in `repo` with the HOME at `home`, then drive it."""

    fake: FakeGemini
    width: int
    repo: Path
    home: Path
    socket: str = field(default_factory=lambda: f"ibtest-gem-{uuid.uuid4().hex[:8]}")

    def start(self, args: str = "", hooks: dict[str, Any] | None = None) -> None:
        write_home(self.home, hooks)
        variables = client_env(self.fake.base_url, self.home)
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
        command = f"env {env} {shlex.quote(str(gemini_binary()))} {args}"
        size = ["-x", str(self.width), "-y", str(HEIGHT), "-c", str(self.repo)]
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "gem", *size, command)
        self.tmux("set-option", "-t", "gem", "remain-on-exit", "on")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False)
        return done.stdout

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "gem")

    def wait(self, sign: Sign, timeout: float = WAIT) -> str:
        """Poll the pane until `sign` (a text, or a test of the whole screen) shows; return the screen."""
        check = sign if callable(sign) else (lambda screen: sign in screen)
        deadline = time.monotonic() + timeout
        while not check(screen := self.text()):
            if time.monotonic() > deadline:
                raise ScreenMissing(f"no {sign!r} on screen after {timeout}s; last screen:\n{screen}")
            time.sleep(0.1)
        return screen

    def settle(self, quiet: float = 1.5, timeout: float = WAIT) -> str:
        """Wait until the screen has not changed for `quiet` seconds (the program is ready for keys)."""
        deadline = time.monotonic() + timeout
        screen, since = self.text(), time.monotonic()
        while time.monotonic() - since < quiet:
            if time.monotonic() > deadline:
                raise ScreenMissing(f"the screen kept changing for {timeout}s")
            time.sleep(0.1)
            if (now := self.text()) != screen:
                screen, since = now, time.monotonic()
        return screen

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "gem", *keys)

    def type(self, text: str, tries: int = 3) -> None:
        """Type `text` and submit it once the input box shows it; Enter again when the box still holds it
        (an Enter that arrives while a hook runs can be lost)."""
        self.tmux("send-keys", "-t", "gem", "-l", text)
        self.wait(f"> {text}")
        for _ in range(tries):
            self.keys("Enter")
            try:
                self.wait(IDLE_HINT, timeout=10.0)
                return
            except ScreenMissing:
                continue
        raise ScreenMissing(f"{text!r} was typed but never submitted; last screen:\n{self.text()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
