"""Capture real Gemini CLI pane screens, one per state, for the Gemini pane parser's fixtures.

    .venv/bin/python -m tests.fake_gemini.capture [--out tests/fixtures/gemini-0.61.0]
                                                 [--widths 80,100,200] [--hooks FILE]

Each run starts the real CLI in a tmux pane of the given width (50 rows, like an agent's) against the
scripted Gemini API, drives it through one session (start-up, a shell command and its approval dialog,
a new file and a replace with their "Apply this change?" dialogs, a turn still running, the turn's
end, an API error, /quit) and saves each screen as `<state>-<what>-w<width>.txt`: the state
worker/gemini/screen.py must read is the name's text before the first hyphen. With --hooks, every
hook event's payload (stdin of a logging hook) is appended to FILE, one JSON document a line. With --chat,
one other session instead, whose chat log (Gemini CLI's transcript) is saved as chat-two-turns.jsonl.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cli import init_repo
from tests.fake_gemini.client import gemini_binary, gemini_version
from tests.fake_gemini.pane import GeminiPane, ScreenMissing
from tests.fake_gemini.script import invalid, replace, reply, shell, write_file
from tests.fake_gemini.server import FakeGemini

IDLE = "Type your message"
RUNNING = "esc to cancel"
HOOK_EVENTS = (
    "SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool",
    "Notification", "PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection",
)  # fmt: skip


def logging_hooks(log: Path) -> dict[str, Any]:
    """A hook on every event that appends its payload to `log` (one JSON document a line)."""
    command = f"sh -c 'cat >> {shlex.quote(str(log))}; echo >> {shlex.quote(str(log))}'"
    entry = [{"matcher": "*", "hooks": [{"type": "command", "command": command, "name": "ittybus"}]}]
    return {event: entry for event in HOOK_EVENTS}


def idle(screen: str) -> bool:
    return IDLE in screen and RUNNING not in screen and "Executing Hook" not in screen


@dataclass
class Session:
    pane: GeminiPane
    out: Path
    saved: list[Path] = field(default_factory=list)

    def save(self, state: str, what: str, *, settled: bool = True) -> None:
        """The screen once it stopped changing; a working one at once (its spinner never stops)."""
        path = self.out / f"{state}-{what}-w{self.pane.width}.txt"
        path.write_text(self.pane.settle() if settled else self.pane.text(), encoding="utf-8")
        self.saved.append(path)
        print(f"saved {path}", flush=True)


def one_session(s: Session) -> None:
    """Start-up, the two dialogs, a running turn, its end, an error, /quit."""
    pane, fake = s.pane, s.pane.fake
    hold = threading.Event()
    target = pane.repo / "notes.txt"
    fake.script(
        reply("Let me run the build first.", shell("echo built > build.log && cat build.log")),
        reply("Now the notes file.", write_file(str(target), "alpha\nbeta\n")),
        reply("And one fix in it.", replace(str(target), "beta", "gamma")),
        reply("Checking the result once more.", hold=hold),
    )
    pane.wait(idle)
    s.save("idle", "startup")
    pane.type("build it and write the notes")
    pane.wait("Allow execution of")
    s.save("dialog", "shell")
    pane.keys("1")
    pane.wait("Apply this change?")
    s.save("dialog", "write-file")
    pane.keys("1")
    pane.wait(lambda screen: "Apply this change?" in screen and "gamma" in screen)
    s.save("dialog", "replace")
    pane.keys("1")
    pane.wait(lambda screen: "Checking the result" in screen and RUNNING in screen)
    s.save("working", "held-stream", settled=False)
    hold.set()
    pane.wait(lambda screen: "Checking the result" in screen and idle(screen))
    s.save("idle", "turn-end")
    fake.script(invalid("The scripted request was refused."))
    pane.type("try once more")
    pane.wait(lambda screen: "✕ [API Error" in screen and idle(screen))
    s.save("idle", "api-error")
    pane.type("/quit")
    pane.wait("Pane is dead")
    s.save("exited", "quit")


def chat_log(s: Session) -> None:
    """Not a screen: the session's chat log (a shell command and a new file, approved, then a second
    turn) saved as `chat-two-turns.jsonl`, the capture's temporary folder named /tmp/ib-gemini-capture."""
    pane, fake = s.pane, s.pane.fake
    target = pane.repo / "notes.txt"
    fake.script(
        reply("Let me run the build first.", shell("echo built > build.log && cat build.log")),
        reply("Now the notes file.", write_file(str(target), "alpha\nbeta\n")),
        reply("Built and wrote the notes.\n\nI HAVE COMPLETED THE GOAL"),
        reply("Which one?\n\nWAITING"),
    )
    pane.wait(idle)
    pane.type("build it and write the notes")
    pane.wait("Allow execution of")
    pane.keys("1")
    pane.wait("Apply this change?")
    pane.keys("1")
    pane.wait(lambda screen: "COMPLETED THE GOAL" in screen and idle(screen))
    pane.type("and the docs")
    pane.wait(lambda screen: "Which one?" in screen and idle(screen))
    pane.type("/quit")
    pane.wait("Pane is dead")
    logs = sorted((pane.home / ".gemini" / "tmp").rglob("session-*.json*"))
    if len(logs) != 1:
        raise ScreenMissing(f"expected one chat log, found {logs}")
    work = str(pane.repo.parent)
    text = logs[0].read_text(encoding="utf-8").replace(work, "/tmp/ib-gemini-capture")
    path = s.out / f"chat-two-turns{''.join(logs[0].suffixes[-1:])}"
    path.write_text(text, encoding="utf-8")
    s.saved.append(path)
    print(f"saved {path}", flush=True)


def capture(width: int, out: Path, hooks_log: Path | None, chat: bool = False) -> list[Path]:
    folder = tempfile.TemporaryDirectory(prefix="ib-gemini-capture-", ignore_cleanup_errors=True)
    with folder as tmp, FakeGemini() as fake:
        work = Path(tmp)
        pane = GeminiPane(fake, width, init_repo(work / "repo"), work / "home")
        session = Session(pane, out)
        try:
            pane.start(hooks=logging_hooks(hooks_log) if hooks_log else None)
            (chat_log if chat else one_session)(session)
        finally:
            pane.close()
        return session.saved


def main(argv: list[str] | None = None) -> int:
    version = gemini_version(gemini_binary())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(f"tests/fixtures/gemini-{version}"))
    parser.add_argument("--widths", default="80,100,200")
    parser.add_argument("--chat", action="store_true", help="save the chat log of a session instead")
    parser.add_argument("--hooks", type=Path, default=None, help="append every hook payload to this file")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    widths = [int(w) for w in args.widths.split(",")]
    for width in widths[:1] if args.chat else widths:
        try:
            capture(width, args.out, args.hooks, args.chat)
        except ScreenMissing as e:
            failed += 1
            print(f"capture: width {width} failed: {e}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
