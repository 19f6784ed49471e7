"""Capture real Gemini CLI pane screens, one per state, for the Gemini pane parser's fixtures.

    .venv/bin/python -m tests.fake_gemini.capture [--out tests/fixtures/gemini-0.61.0]
                                                 [--widths 80,100,200] [--hooks FILE]
                                                 [--chat | --chat-errors]

Each run starts the real CLI in a tmux pane of the given width (50 rows, like an agent's) against the
scripted Gemini API, drives it through one session (start-up, a shell command and its approval dialog,
a new file and a replace with their "Apply this change?" dialogs, a turn still running, the turn's
end, an API error, the usage-limit dialog of a used-up quota with and without its reset, /quit) and saves
each screen as `<state>-<what>-w<width>.txt`: the state worker/tmux/gemini_screen.py must read is the
name's text before the first hyphen. With --hooks, every hook event's payload (stdin of a logging hook) is
appended to FILE, one JSON document a line. With --chat, one other session instead, whose chat log (Gemini
CLI's transcript) is saved as chat-two-turns.jsonl; with --chat-errors, one whose turns API errors end,
saved as chat-api-errors.jsonl.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tests.cli import init_repo
from tests.fake_gemini.client import gemini_binary, gemini_version
from tests.fake_gemini.pane import GeminiPane, ScreenMissing
from tests.fake_gemini.script import ApiError, daily_quota, invalid, quota, replace, reply, shell, write_file
from tests.fake_gemini.server import NOTHING_SCRIPTED, FakeGemini
from worker.tmux.gemini_screen import input_text

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
    usage_limits(s)
    submit(pane, "/quit")  # not `type`: it waits for the input box, which Gemini CLI no longer draws
    pane.wait("Pane is dead")
    s.save("exited", "quit")


def usage_limits(s: Session) -> None:
    """The dialog of a used-up quota, with the reset the API's RetryInfo names and without one (a per-day
    quota), each answered "2. Stop", which ends the turn with the error."""
    pane = s.pane
    ask_until_limited(pane, quota(3600), "and now")
    s.save("limited", "usage-limit-reset")
    pane.keys("2")
    pane.wait(lambda screen: "Suggested retry after" in screen and idle(screen))
    ask_until_limited(pane, daily_quota(), "and again")
    s.save("limited", "usage-limit-daily")
    pane.keys("2")
    pane.wait(lambda screen: "exhausted your daily quota" in screen and idle(screen))
    s.save("idle", "quota-error")


LIMIT_DIALOG = "Usage limit reached"


def ask_until_limited(pane: GeminiPane, error: ApiError, prompt: str, tries: int = 3) -> None:
    """Send prompts, every request answered with `error` (a used-up quota), until Gemini CLI shows its
    usage-limit dialog: 0.61.0 ends some such turns at once with the error, and asks on others."""
    pane.fake.set_default(error)
    try:
        for n in range(tries):
            text = f"{prompt} ({n + 1})"
            submit(pane, text)
            pane.wait(partial(limited_or_ended, prompt=text))
            if LIMIT_DIALOG in pane.text():
                return
    finally:  # the quota comes back: a 429 left as the answer keeps /quit from ending the session
        pane.fake.set_default(reply(NOTHING_SCRIPTED))
    raise ScreenMissing(f"no {LIMIT_DIALOG!r} dialog after {tries} prompts; last screen:\n{pane.text()}")


def submit(pane: GeminiPane, text: str, tries: int = 3) -> None:
    """Type `text` and press Enter until it leaves the input box (`GeminiPane.type` waits for the empty
    box, which a dialog hides, and presses Enter again meanwhile: that would answer the dialog)."""
    pane.tmux("send-keys", "-t", pane.session, "-l", text)
    pane.wait(f"> {text}")
    for _ in range(tries):
        pane.keys("Enter")
        try:
            pane.wait(lambda screen: input_text(screen) != text, timeout=10.0)
            return
        except ScreenMissing:
            continue
    raise ScreenMissing(f"{text!r} was typed but never submitted; last screen:\n{pane.text()}")


def limited_or_ended(screen: str, prompt: str) -> bool:
    """Whether the screen shows the usage-limit dialog, or `prompt`'s turn ended on an API error."""
    return LIMIT_DIALOG in screen or ended_on_error(screen, prompt)


def ended_on_error(screen: str, prompt: str) -> bool:
    """Whether the screen is idle, `prompt` the last prompt sent on it, and an API error follows it."""
    if not idle(screen):
        return False
    error = False
    for line in reversed(screen.splitlines()):
        error = error or line.startswith("✕ [API Error")
        if line.startswith(" > ") and IDLE not in line:
            return error and line.strip() == f"> {prompt}"
    return False


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
    _save_chat(s, "chat-two-turns")


def chat_errors(s: Session) -> None:
    """Not a screen: the chat log of turns that API errors ended (a 400; a quota with its reset, then a
    per-day one, each dialog answered "2. Stop"), after one answered turn: `chat-api-errors.jsonl`."""
    pane, fake = s.pane, s.pane.fake
    fake.script(reply("Ready.\n\nWAITING"), invalid("The scripted request was refused."))
    pane.wait(idle)
    pane.type("get ready")
    pane.wait(lambda screen: "Ready." in screen and idle(screen))
    pane.type("try once more")
    pane.wait(lambda screen: "✕ [API Error" in screen and idle(screen))
    ask_until_limited(pane, quota(3600), "and now")
    pane.keys("2")
    pane.wait(lambda screen: "Suggested retry after" in screen and idle(screen))
    ask_until_limited(pane, daily_quota(), "and again")
    pane.keys("2")
    pane.wait(lambda screen: "exhausted your daily quota" in screen and idle(screen))
    submit(pane, "/quit")
    pane.wait("Pane is dead")
    _save_chat(s, "chat-api-errors")


def _save_chat(s: Session, name: str) -> None:
    """The session's one chat log saved as `name`, the capture's temporary folder named
    /tmp/ib-gemini-capture."""
    pane = s.pane
    logs = sorted((pane.home / ".gemini" / "tmp").rglob("session-*.json*"))
    if len(logs) != 1:
        raise ScreenMissing(f"expected one chat log, found {logs}")
    work = str(pane.repo.parent)
    text = logs[0].read_text(encoding="utf-8").replace(work, "/tmp/ib-gemini-capture")
    path = s.out / f"{name}{''.join(logs[0].suffixes[-1:])}"
    path.write_text(text, encoding="utf-8")
    s.saved.append(path)
    print(f"saved {path}", flush=True)


SESSIONS = {"screens": one_session, "chat": chat_log, "chat-errors": chat_errors}


def capture(width: int, out: Path, hooks_log: Path | None, session_name: str = "screens") -> list[Path]:
    folder = tempfile.TemporaryDirectory(prefix="ib-gemini-capture-", ignore_cleanup_errors=True)
    with folder as tmp, FakeGemini() as fake:
        work = Path(tmp)
        pane = GeminiPane(fake, width, init_repo(work / "repo"), work / "home")
        session = Session(pane, out)
        try:
            pane.start(hooks=logging_hooks(hooks_log) if hooks_log else None)
            SESSIONS[session_name](session)
        finally:
            pane.close()
        return session.saved


def main(argv: list[str] | None = None) -> int:
    version = gemini_version(gemini_binary())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(f"tests/fixtures/gemini-{version}"))
    parser.add_argument("--widths", default="80,100,200")
    parser.add_argument("--chat", action="store_true", help="save the chat log of a session instead")
    parser.add_argument(
        "--chat-errors", action="store_true", help="save the chat log of turns API errors ended instead"
    )
    parser.add_argument("--hooks", type=Path, default=None, help="append every hook payload to this file")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    widths = [int(w) for w in args.widths.split(",")]
    name = "chat" if args.chat else "chat-errors" if args.chat_errors else "screens"
    for width in widths if name == "screens" else widths[:1]:
        try:
            capture(width, args.out, args.hooks, name)
        except ScreenMissing as e:
            failed += 1
            print(f"capture: width {width} failed: {e}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
