"""Capture real Codex CLI pane screens, one per agent state, for the Codex screen parser's fixtures.

    .venv/bin/python -m tests.fake_openai.capture [--out tests/fixtures/codex-0.169.0]
                                                  [--widths 80,100,200] [--only NAME,...] [--list]

Each scenario starts the real `codex` in a tmux pane of the given width (50 rows, like an agent's) against
the scripted Responses API, with a private CODEX_HOME, drives it to a state and saves the screen as
`<state>-<what>-w<width>.txt` in a folder named for the CLI's version: the expected state is the name's
text before the first hyphen. Run it again for a new Codex version (IB_TEST_CODEX_BIN=/path/to/codex,
--out tests/fixtures/codex-<version>) and see what the parser reads wrong with
`pytest tests/unit/test_codex_screen.py`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tests.cli import init_repo
from tests.fake_openai.client import KEY_VARIABLE, client_env, codex_args, codex_binary, write_codex_home
from tests.fake_openai.script import add_file, exec_command, reply, server_error
from tests.fake_openai.server import FakeOpenAI
from tests.tmux_screen import TmuxScreen
from worker.markers import COMPLETION_MARKER, WAITING_MARKER

WAIT = 60.0  # seconds a screen may take to appear on two busy cores
WORKING = "esc to interrupt"
INPUT_BOX = "Ask Codex to do anything"
LOADING = "\n     loading\n"  # under the header while the session starts
TURN_END = "Worked for "
DIALOG = "Press enter to confirm or esc to cancel"
T = TypeVar("T")


class CaptureFailed(RuntimeError):
    """A screen the scenario waits for did not appear."""


@dataclass
class Stage(TmuxScreen):
    """One run of a scenario at one width: a fake API, a repository, a CODEX_HOME, a tmux pane."""

    fake: FakeOpenAI
    width: int
    work: Path
    out: Path
    socket: str = field(default_factory=lambda: f"ibcap-{uuid.uuid4().hex[:8]}")
    saved: list[Path] = field(default_factory=list)
    missing = CaptureFailed
    poll = 0.05

    @property
    def repo(self) -> Path:
        return self.work / "repo"

    def start(self, prompt: str = "", *, signals: Path | None = None) -> None:
        """Codex in a fresh pane (with `prompt` as its first message, when given); with `signals`, its
        notify program and every hook append their payloads to that file."""
        home, tmp = self.work / "codex-home", self.work / "tmp"
        tmp.mkdir(exist_ok=True)
        logger = [sys.executable, str(Path(__file__).with_name("signal_log.py")), str(signals)]
        notify = [*logger, "notify"] if signals else []
        hook = shlex.join([*logger, "hook"]) if signals else ""
        write_codex_home(home, self.fake.base_url, [self.repo], notify=notify, hook_command=hook)
        variables = client_env(home, tmp, self.work / "home")
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
        words = [
            str(codex_binary()),
            *codex_args(bypass_hook_trust=bool(signals)),
            *([prompt] if prompt else []),
        ]
        command = f"env {env} {shlex.join(words)}"
        self.open(command, self.repo)

    def wait_for_signals(
        self,
        log: Path,
        enough: Callable[[list[T]], bool],
        read: Callable[[Path], list[T]],
        timeout: float = WAIT,
    ) -> list[T]:
        """Read the signals Codex logged until `enough` of them came (a hook runs after the screen shows
        what it tells)."""
        deadline = time.monotonic() + timeout
        while not enough(found := read(log) if log.exists() else []):
            if time.monotonic() > deadline:
                raise CaptureFailed(f"not enough signals after {timeout}s: {found!r}")
            time.sleep(0.05)
        return found

    def answer(self, key: str, attempts: int = 5) -> None:
        """Press `key` in the open dialog until it closes: a key pressed the moment the dialog is drawn,
        before Codex reads keys for it, is lost."""
        for _ in range(attempts):
            self.keys(key)
            try:
                self.wait(lambda screen: DIALOG not in screen, timeout=5.0)
                return
            except CaptureFailed:
                continue
        raise CaptureFailed(f"the dialog stayed open after {attempts} presses of {key!r}")

    def save(self, state: str, what: str, screen: str) -> Path:
        path = self.out / f"{state}-{what}-w{self.width}.txt"
        path.write_text(screen, encoding="utf-8")
        self.saved.append(path)
        print(f"saved {path}", flush=True)
        return path


def _idle_with(text: str, turns: int = 0) -> Callable[[str], bool]:
    """Idle with `text` on screen, after `turns` turns have ended (each ends with a "Worked for" line)."""
    return lambda screen: (
        text in screen
        and WORKING not in screen
        and INPUT_BOX in screen
        and LOADING not in screen
        and screen.count(TURN_END) >= turns
    )


def conversation(s: Stage) -> None:
    """Start-up, the idle prompt, a running turn, its end without a marker, then one with each marker."""
    hold = threading.Event()
    s.fake.script(
        reply("Let me look at the parser first.", hold=hold),
        reply(f"The parser is fixed.\n\n{COMPLETION_MARKER}"),
        reply(f"Which database should I use, Postgres or SQLite?\n\n{WAITING_MARKER}"),
    )
    s.start()
    started = s.wait(lambda screen: "OpenAI Codex" in screen)
    if LOADING in started:
        s.save("creating", "loading", started)
    s.save("waiting", "idle-prompt", s.wait(_idle_with(INPUT_BOX)))
    s.type("fix the parser")
    s.save("running", "working", s.wait(WORKING))
    hold.set()
    s.save("waiting", "turn-end-no-marker", s.wait(_idle_with(TURN_END, turns=1)))
    s.type("now finish it")
    s.save("complete", "marker", s.wait(_idle_with(COMPLETION_MARKER, turns=2)))
    s.type("store the users")
    s.save("waiting", "marker", s.wait(_idle_with(WAITING_MARKER, turns=3)))


def escalation(s: Stage) -> None:
    """A command asking to run outside the sandbox: the approval dialog, approved, then the turn ends."""
    call = exec_command(
        "rm -rf build && echo rebuilt", escalate="Rebuilding needs to write outside the sandbox"
    )
    s.fake.script(reply("I need to rebuild.", call), reply(f"Rebuilt.\n\n{COMPLETION_MARKER}"))
    s.start("rebuild")
    s.save("permission", "exec-escalated", s.wait(DIALOG))
    s.answer("y")
    s.save("complete", "after-approval", s.wait(_idle_with(COMPLETION_MARKER, turns=1)))


def long_command(s: Stage) -> None:
    """An approval dialog whose options are too long for the pane: their labels wrap."""
    words = "rm -rf build/generated-sources build/intermediate-objects && make all-targets VERBOSE=1"
    s.fake.script(reply(exec_command(words, escalate="The build folder is outside the sandbox")))
    s.start("clean rebuild")
    s.save("permission", "exec-long-command", s.wait(DIALOG))
    s.answer("Escape")


def question_mark(s: Stage) -> None:
    """An escalated command that ends in `?` (`echo rc=$?`): its `$ …` line must not read as the
    dialog's question."""
    call = exec_command("touch built.txt; echo rc=$?", escalate="Building needs to write outside the sandbox")
    s.fake.script(reply("Building.", call))
    s.start("build it")
    s.save("permission", "exec-question-mark", s.wait(DIALOG))
    s.answer("Escape")


def denial(s: Stage) -> None:
    """The approval dialog refused with esc: Codex asks the person what to do instead."""
    call = exec_command("curl -sS https://example.com", escalate="Fetching the page needs the network")
    s.fake.script(reply("Fetching it.", call))
    s.start("fetch the page")
    s.wait(DIALOG)
    s.answer("Escape")
    s.save("waiting", "after-denial", s.wait(lambda screen: DIALOG not in screen and _idle_with("")(screen)))


def edit_outside(s: Stage) -> None:
    """A patch that writes outside the writable roots: Codex asks before applying it."""
    outside = s.work / "outside" / "notes.txt"
    s.fake.script(reply(add_file(str(outside), "one\ntwo\n")), reply("Wrote the notes."))
    s.start("write notes")
    s.save("permission", "apply-patch-outside", s.wait(DIALOG))
    s.answer("Escape")


def shell_command(s: Stage) -> None:
    """A sandboxed command that runs without asking, then a patch inside the worktree."""
    s.fake.script(
        reply(exec_command("ls && git status --short")),
        reply(add_file("notes.txt", "one\ntwo\n")),
        reply(f"Listed and wrote notes.\n\n{COMPLETION_MARKER}"),
    )
    s.start("list and write notes")
    s.save("complete", "after-tools", s.wait(_idle_with(COMPLETION_MARKER, turns=1)))


def api_error(s: Stage) -> None:
    """Every request answered 500: Codex retries, then ends the turn with an error."""
    s.fake.set_default(server_error())
    s.start("add a flag")
    s.save("error", "api-500", s.wait(_idle_with("high demand"), timeout=180.0))


def sign_in(s: Stage) -> None:
    """No login and no key (a person who never signed in to Codex): Codex asks how to sign in."""
    home, tmp = s.work / "codex-home", s.work / "tmp"
    tmp.mkdir(exist_ok=True)
    home.mkdir()
    variables = client_env(home, tmp, s.work / "home")
    del variables[KEY_VARIABLE]
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
    s.open(f"env {env} {shlex.join([str(codex_binary()), *codex_args()])}", s.repo)
    s.save("permission", "sign-in", s.wait(lambda screen: "Press enter to continue" in screen))


def quit_codex(s: Stage) -> None:
    """/quit: Codex exits and the pane is dead."""
    s.start()
    s.wait(_idle_with(INPUT_BOX))
    s.type("/quit")
    s.save("stopped", "quit", s.wait(lambda screen: "Pane is dead" in screen))


def signals(s: Stage) -> None:
    """Not a screen: the hooks.json payloads and notify JSON of a first turn (with its title thread),
    an approval and a second turn, each saved as `signals/<event>-<what>.json` (the expected reading)."""
    log = s.work / "signals.jsonl"
    call = exec_command(
        "rm -rf build && echo rebuilt", escalate="Rebuilding needs to write outside the sandbox"
    )
    s.fake.script(
        reply("I need to rebuild.", call), reply(f"Rebuilt.\n\n{COMPLETION_MARKER}"), reply("Which one?")
    )
    s.start("rebuild", signals=log)
    s.wait(DIALOG)
    s.answer("y")
    s.wait(_idle_with(COMPLETION_MARKER, turns=1))
    s.type("and the docs")
    s.wait(_idle_with("Which one?", turns=2))
    s.type("/quit")
    s.wait(lambda screen: "Pane is dead" in screen)
    s.wait(lambda screen: log.read_text().count("SessionEnd") > 0 if log.exists() else False, timeout=10.0)
    save_signals(log, s.out / "signals")


def save_signals(log: Path, out: Path) -> None:
    """Each payload as its own file, named for what ittybus must read from it."""
    out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, int] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        payload = entry["payload"]
        name = _signal_name(entry["via"], payload, seen)
        path = out / f"{name}.json"
        path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"saved {path}", flush=True)


def _signal_name(via: str, payload: dict[str, object], seen: dict[str, int]) -> str:
    if via == "notify":
        messages = payload.get("input-messages")
        first = str(messages[0]) if isinstance(messages, list) and messages else ""
        what = "none-notify-title-thread" if first.startswith("Generate a concise") else "end-notify"
    else:
        what = {
            "SessionStart": "none-hook-session-start",
            "UserPromptSubmit": "running-hook-user-prompt-submit",
            "PreToolUse": "running-hook-pre-tool-use",
            "PostToolUse": "running-hook-post-tool-use",
            "PermissionRequest": "permission-hook-permission-request",
            "Stop": "end-hook-stop",
            "SessionEnd": "stopped-hook-session-end",
        }.get(str(payload.get("hook_event_name")), f"none-hook-{payload.get('hook_event_name')}")
    if what.startswith("end-"):
        last = str(payload.get("last-assistant-message") or payload.get("last_assistant_message") or "")
        what = ("complete" if last.strip().endswith(COMPLETION_MARKER) else "waiting") + what[3:]
    seen[what] = seen.get(what, 0) + 1
    return what if seen[what] == 1 else f"{what}-{seen[what]}"


def rollout(s: Stage) -> None:
    """Not a screen: the session log ("rollout") of two turns (a command, a patch, text) saved as
    `rollout-two-turns.jsonl`, the capture's temporary folder written as /tmp/ib-codex-capture."""
    s.fake.script(
        reply("Listing first.", exec_command("ls && git status --short")),
        reply(add_file("notes.txt", "one\ntwo\n")),
        reply(f"Listed and wrote notes.\n\n{COMPLETION_MARKER}"),
        reply(f"Which one?\n\n{WAITING_MARKER}"),
    )
    s.start("list and write notes")
    s.wait(_idle_with(COMPLETION_MARKER, turns=1))
    s.type("and the docs")
    s.wait(_idle_with("Which one?", turns=2))
    s.type("/quit")
    s.wait(lambda screen: "Pane is dead" in screen)
    logs = sorted((s.work / "codex-home" / "sessions").rglob("rollout-*.jsonl"))
    if len(logs) != 1:
        raise CaptureFailed(f"expected one session log, found {logs}")
    text = logs[0].read_text(encoding="utf-8").replace(str(s.work), "/tmp/ib-codex-capture")
    path = s.out / "rollout-two-turns.jsonl"
    path.write_text(text, encoding="utf-8")
    s.saved.append(path)
    print(f"saved {path}", flush=True)


SCENARIOS: dict[str, Callable[[Stage], None]] = {
    "conversation": conversation,
    "escalation": escalation,
    "long-command": long_command,
    "question-mark": question_mark,
    "denial": denial,
    "edit-outside": edit_outside,
    "shell-command": shell_command,
    "api-error": api_error,
    "quit": quit_codex,
    "sign-in": sign_in,
    "signals": signals,
    "rollout": rollout,
}


ONE_WIDTH = {"signals", "rollout"}  # not about the screen: run once


def run_scenario(scenario: Callable[[Stage], None], width: int, out: Path) -> list[Path]:
    folder = tempfile.TemporaryDirectory(prefix="ib-codex-capture-", ignore_cleanup_errors=True)
    with folder as tmp, FakeOpenAI() as fake:
        work = Path(tmp)
        init_repo(work / "repo")
        stage = Stage(fake, width, work, out)
        try:
            scenario(stage)
        finally:
            stage.close()
        return stage.saved


def cli_version() -> str:
    done = subprocess.run([str(codex_binary()), "--version"], capture_output=True, text=True, check=True)
    return done.stdout.split()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="default: tests/fixtures/codex-<version>")
    parser.add_argument("--widths", default="80,100,200")
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--list", action="store_true", help="print the scenario names and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(SCENARIOS))
        return 0
    wanted = [n for n in args.only.split(",") if n] or list(SCENARIOS)
    unknown = [n for n in wanted if n not in SCENARIOS]
    if unknown:
        print(f"capture: error: unknown scenario {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    out = args.out or Path(f"tests/fixtures/codex-{cli_version()}")
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in wanted:
        widths = [int(w) for w in args.widths.split(",")]
        for width in widths[:1] if name in ONE_WIDTH else widths:
            try:
                run_scenario(SCENARIOS[name], width, out)
            except CaptureFailed as e:
                failed += 1
                print(f"capture: {name} at width {width} failed: {e}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
