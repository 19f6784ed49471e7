"""The real Gemini CLI in a tmux pane of its own, offline against the stand-in: a private HOME, a git
repository to work in, the keys a person would type, and waits on what the screen shows."""

from __future__ import annotations

import shlex
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_gemini.client import client_env, gemini_binary, write_home
from tests.fake_gemini.server import FakeGemini
from tests.tmux_screen import TmuxScreen

IDLE_HINT = "Type your message"  # the empty input box's placeholder: what was typed has been submitted


class ScreenMissing(AssertionError):
    """A screen the caller waits for did not appear."""


@dataclass
class GeminiPane(TmuxScreen):
    """One Gemini CLI session: `start()` it in `repo` with the HOME at `home`, then drive it."""

    fake: FakeGemini
    width: int
    repo: Path
    home: Path
    socket: str = field(default_factory=lambda: f"ibtest-gem-{uuid.uuid4().hex[:8]}")
    session = "gem"
    missing = ScreenMissing
    wait_limit = 90.0  # the CLI takes ~5 s to start on two busy cores
    quiet = 1.5

    def start(self, args: str = "", hooks: dict[str, Any] | None = None) -> None:
        write_home(self.home, hooks)
        variables = client_env(self.fake.base_url, self.home)
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
        command = f"env {env} {shlex.quote(str(gemini_binary()))} {args}"
        self.open(command, self.repo)

    def type(self, text: str, tries: int = 3) -> None:
        """Type `text` and submit it once the input box shows it; Enter again when the box still holds it
        (an Enter that arrives while a hook runs can be lost)."""
        self.tmux("send-keys", "-t", self.session, "-l", text)
        self.wait(f"> {text}")
        for _ in range(tries):
            self.keys("Enter")
            try:
                self.wait(IDLE_HINT, timeout=10.0)
                return
            except ScreenMissing:
                continue
        raise ScreenMissing(f"{text!r} was typed but never submitted; last screen:\n{self.text()}")
