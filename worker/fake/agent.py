"""A stand-in for Claude Code that tests run in tmux: same command line, pane text, transcript JSONL and
hook payloads, with the work read from `fake: <step>` lines instead of a model.
Run as `python -m worker.fake.agent [--settings FILE] [--session-id ID] [PROMPT]`; see worker.fake.script."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import time
import uuid
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from worker.errors import WorkerError
from worker.fake.script import (
    Step,
    denial,
    hook_commands,
    parse_command_line,
    parse_script,
    project_dir_name,
    step_command,
    steps_in,
)
from worker.fake.terminal import Keyboard, Screen, raw_terminal
from worker.markers import COMPLETION_MARKER, WAITING_MARKER
from worker.programs.claude.transcript import summarize_result, tool_argument

VERSION = "2.0.0"
BASH_TIMEOUT = 120.0
SHOWN_OUTPUT_LINES = 3

JsonObject = dict[str, object]


class Interrupted(WorkerError):
    """The person pressed Escape or Ctrl-C: the turn stops where it is."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FakeAgent:
    """One session: the prompt's turn, then a turn for every message submitted after it."""

    def __init__(
        self, prompt: str, settings: object, session_id: str, transcript: Path, keys: Keyboard
    ) -> None:
        self.prompt, self.settings, self.session_id = prompt, settings, session_id
        self.transcript, self.keys, self.screen, self.cwd = transcript, keys, keys.screen, os.getcwd()
        self.queue: list[Step] = []
        self.completed = False
        self._parent: str | None = None

    def run(self, script: list[Step]) -> None:
        self.screen.text(f" ✻ Claude Code v{VERSION} (fake)\n   {self.cwd}\n")
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.hook("SessionStart", source="startup")
        self.queue = script
        if self.prompt:
            self.screen.bullet("[USER TASK]\n" + self.prompt, mark="> ")
            self.record_user(self.prompt)
            self.hook("UserPromptSubmit", prompt=self.prompt)
            self.queue += steps_in(self.prompt)
        if self.prompt or self.queue:
            self.turn()
        else:
            self.idle()
        while (data := self.next_submission()) is not None:
            self.receive(data)
            self.turn()

    def next_submission(self) -> bytes | None:
        while True:
            try:
                return self.keys.submissions.get(timeout=0.5)
            except queue.Empty:
                continue

    def receive(self, data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        self.screen.text("\n")
        self.screen.bullet(f"Received: {text}")
        self.record_user(text)
        if received := os.environ.get("IB_FAKE_RECEIVED"):
            with open(received, "ab") as file:
                file.write(data + b"\n")
        self.hook("UserPromptSubmit", prompt=text)
        self.queue = steps_in(text) + self.queue

    def turn(self) -> None:
        """Follow the steps up to the next reply (or the end of the script), then fire Stop."""
        self.keys.idle.clear()
        self.keys.interrupt.clear()
        try:
            while True:
                if self.keys.interrupt.is_set():
                    raise Interrupted
                step = self.queue.pop(0) if self.queue else Step("done" if self.completed else "wait")
                reply = self.follow(step)
                if reply is not None:
                    self.say(reply)
                    self.hook("Stop", stop_hook_active=False, last_assistant_message=reply)
                    break
        except Interrupted:
            self.queue.clear()
            self.screen.result(["Interrupted by user"])
            self.record_user([{"type": "text", "text": "[Request interrupted by user]"}])
        self.idle()

    def idle(self) -> None:
        self.keys.show_box()

    def follow(self, step: Step) -> str | None:
        """Do one step; the reply text when the step ends the turn."""
        path = str(Path(self.cwd, step.arg))
        if step.verb == "write":
            self.tool("Write", {"file_path": path, "content": step.text + "\n"})
        elif step.verb == "read":
            self.tool("Read", {"file_path": path})
        elif step.verb in ("commit", "ask", "run"):
            self.tool("Bash", {"command": step_command(step), "description": f"fake {step.verb} step"})
        elif step.verb == "say":
            self.say(step.arg)
        elif step.verb == "sleep":
            self.screen.spinner(True)
            interrupted = self.keys.interrupt.wait(float(step.arg))
            self.screen.spinner(False)
            if interrupted:
                raise Interrupted
        elif step.verb == "exit":
            raise SystemExit(0)
        elif step.verb in ("permission", "choose", "auto-permission"):
            dialogs = {"permission": self.permission, "choose": self.choose}
            dialogs.get(step.verb, self.auto_permission)(step.arg)
        elif step.verb == "invalid":
            self.say(f"I cannot follow the fake step {step.arg!r}: {step.text}.")
        return self.reply_to(step)

    def reply_to(self, step: Step) -> str | None:
        """The reply a turn-ending step ends the turn with; None for the others."""
        if step.verb == "ask":
            return f"I asked: {step.arg}\n\n{WAITING_MARKER}"
        if step.verb == "wait":
            return f"{step.arg or 'Waiting for your input.'}\n\n{WAITING_MARKER}"
        if step.verb == "done":
            self.completed = True
            return f"{step.arg or 'All the steps are done.'}\n\n{COMPLETION_MARKER}"
        if step.verb == "reply":
            return step.arg
        return None

    def permission(self, command: str) -> None:
        """A Bash call that needs the person's permission: the dialog, the PermissionRequest hook, and
        the call run (1, 2) or refused (3, Escape: the turn ends, as Claude Code's does)."""
        tool_input: JsonObject = {"command": command, "description": "fake permission step"}
        self.hook(
            "PermissionRequest", "Bash", tool_name="Bash", tool_input=tool_input, permission_suggestions=[]
        )
        key = self.ask_person(permission_dialog(command, self.cwd), {b"1", b"2", b"3", b"\x1b"})
        if key in (b"3", b"\x1b"):
            raise Interrupted
        self.tool("Bash", tool_input)

    def choose(self, spec: str) -> None:
        """An AskUserQuestion dialog: `QUESTION | OPTION | OPTION`; the answer goes on in the turn."""
        question, *options = [part.strip() for part in spec.split("|")]
        questions = [{"question": question, "header": "Question", "multiSelect": False,
                      "options": [{"label": o, "description": ""} for o in options]}]  # fmt: skip
        self.hook("PermissionRequest", "AskUserQuestion", tool_name="AskUserQuestion",
                  tool_input={"questions": questions})  # fmt: skip
        digits = {str(i).encode() for i in range(1, len(options) + 1)}
        key = self.ask_person(question_dialog(question, options), digits | {b"\x1b"})
        if key == b"\x1b":
            raise Interrupted
        self.say(f"You chose {options[int(key) - 1]}.")

    def auto_permission(self, command: str) -> None:
        """Auto mode behind a base URL (no hook runs): its notice, then the unnumbered No / Yes dialog."""
        tool_input: JsonObject = {"command": command, "description": "fake auto mode step"}
        if self.ask_person(AUTO_MODE_NOTICE, {b"Enter", b"BTab", b"\x1b"}) != b"Enter":
            raise Interrupted
        selected = 0  # the ❯ starts on No
        while (
            key := self.ask_person(auto_approval(command, selected), {b"Up", b"Down", b"Enter", b"\x1b"})
        ) != b"Enter":
            if key == b"\x1b":
                raise Interrupted
            selected = 1 if key == b"Down" else 0
        if selected == 0:
            raise Interrupted
        self.tool("Bash", tool_input)

    def ask_person(self, dialog: str, keys: set[bytes]) -> bytes:
        """Show `dialog` and wait for one of `keys`; the dialog is erased once answered. Keys that come in
        the first $IB_FAKE_DEAF_DIALOGS seconds after it is drawn are dropped, as Claude Code drops those
        that come before it reads keys (a second or more on a busy machine)."""
        self.keys.dialog.set()
        height = self.screen.dialog(dialog)
        if (deaf := float(os.environ.get("IB_FAKE_DEAF_DIALOGS") or 0)) > 0:
            time.sleep(deaf)
            with suppress(queue.Empty):
                while True:
                    self.keys.choices.get_nowait()
        try:
            while (key := self.keys.choices.get()) not in keys:
                continue
        finally:
            self.keys.dialog.clear()
        self.screen.erase(height)
        return key

    def say(self, text: str) -> None:
        self.screen.bullet(text)
        self.record_assistant({"type": "text", "text": text})

    def tool(self, name: str, tool_input: JsonObject) -> None:
        """Use a tool as Claude Code does: PreToolUse (which may deny it), run, result, PostToolUse."""
        tool_id = "toolu_fake_" + uuid.uuid4().hex[:20]
        self.record_assistant({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.screen.bullet(f"{name}({tool_argument(name, tool_input, self.cwd)})")
        about: JsonObject = {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_id}
        reasons = [
            denial(*self.run_hook(cmd, t, "PreToolUse", about))
            for cmd, t in hook_commands(self.settings, "PreToolUse", name)
        ]
        reason = next((r for r in reasons if r is not None), None)
        response: JsonObject = {}
        try:
            content, is_error = (reason, True) if reason else self.execute(name, tool_input, response)
        except Interrupted:
            self.record_tool_result(tool_id, "[Request interrupted by user for tool use]", True)
            raise
        self.record_tool_result(tool_id, content, is_error)
        lines = content.splitlines()
        if name == "Bash" and not is_error:
            shown = lines[:SHOWN_OUTPUT_LINES] or ["(No content)"]
            more = len(lines) - SHOWN_OUTPUT_LINES
            self.screen.result(shown + ([f"… +{more} lines"] if more > 0 else []))
        else:
            self.screen.result([summarize_result(name, tool_input, content, is_error)])
        if not is_error:
            self.hook("PostToolUse", name, tool_response=response, **about)

    def execute(self, name: str, tool_input: JsonObject, response: JsonObject) -> tuple[str, bool]:
        """Run a tool: its result content, whether it failed, and (filled in) its tool_response."""
        path = Path(str(tool_input.get("file_path", "")))
        if name == "Write":
            content = str(tool_input["content"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            response.update(type="create", filePath=str(path), content=content)
            return f"File created successfully at: {path}", False
        if name == "Read":
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as e:
                return f"File does not exist or cannot be read: {e.strerror}", True
            response.update(type="text", file={"filePath": str(path), "numLines": len(lines), "startLine": 1})
            return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(lines, 1)), False
        return self.bash(str(tool_input["command"]), response)

    def bash(self, command: str, response: JsonObject) -> tuple[str, bool]:
        proc = subprocess.Popen(
            [shutil.which("bash") or "/bin/sh", "-c", command],
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        deadline = time.monotonic() + BASH_TIMEOUT
        self.screen.spinner(True)
        try:
            while True:
                try:
                    out, err = proc.communicate(timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    if self.keys.interrupt.is_set() or time.monotonic() > deadline:
                        os.killpg(proc.pid, signal.SIGKILL)
                        out, err = proc.communicate()
                        if self.keys.interrupt.is_set():
                            raise Interrupted from None
                        return f"Command timed out after {BASH_TIMEOUT:.0f}s", True
        finally:
            self.screen.spinner(False)
        response.update(stdout=out, stderr=err, interrupted=False, isImage=False)
        output = (out + err).rstrip("\n")
        if proc.returncode:
            return f"Exit code {proc.returncode}\n{output}".rstrip("\n"), True
        return output, False

    def hook(self, event: str, tool: str | None = None, **fields: object) -> None:
        for command, timeout in hook_commands(self.settings, event, tool):
            self.run_hook(command, timeout, event, fields)

    def run_hook(self, command: str, timeout: float, event: str, fields: JsonObject) -> tuple[int, str, str]:
        """One hook command, the payload on its stdin: (exit code, stdout, stderr); failures are ignored."""
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": self.cwd,
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
        try:
            done = subprocess.run(
                ["sh", "-c", command],
                input=json.dumps(payload, ensure_ascii=False),
                cwd=self.cwd,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                env={**os.environ, "CLAUDE_PROJECT_DIR": self.cwd},
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return -1, "", ""
        return done.returncode, done.stdout, done.stderr

    def record(self, kind: str, message: JsonObject) -> None:
        """Append one transcript entry, in one write, the way Claude Code does."""
        entry_id = str(uuid.uuid4())
        entry = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": VERSION,
            "type": kind,
            "message": message,
            "uuid": entry_id,
            "timestamp": _now(),
        }
        with self.transcript.open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._parent = entry_id

    def record_user(self, content: str | list[JsonObject]) -> None:
        self.record("user", {"role": "user", "content": content})

    def record_tool_result(self, tool_id: str, content: str, is_error: bool) -> None:
        self.record_user(
            [{"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}]
        )

    def record_assistant(self, block: JsonObject) -> None:
        message_id = "msg_fake_" + uuid.uuid4().hex[:20]
        self.record(
            "assistant",
            {"id": message_id, "type": "message", "role": "assistant", "model": "fake", "content": [block]},
        )


def permission_dialog(command: str, cwd: str) -> str:
    """Claude Code 2.1.332's Bash permission dialog (its text, without the colours)."""
    rule = "─" * 60
    return (
        f"{rule}\n Bash command\n\n   {command}\n   fake permission step\n\n Do you want to proceed?\n"
        f" ❯ 1. Yes\n   2. Yes, and always allow access to {cwd} from this project\n   3. No\n\n"
        " Esc to cancel · Tab to amend\n"
    )


AUTO_MODE_NOTICE = (
    "─" * 60 + "\n  Auto mode can't check actions in this session\n\n"
    "  Auto mode's safety check runs on the server. Your requests go through\n"
    "  127.0.0.1, and the check isn't getting through.\n\n"
    "  Enter to stay in auto mode · shift+Tab to leave for accept edits mode and\n  stop · Esc to cancel\n"
)
"""Claude Code 2.1.332's notice before auto mode's first approval behind a base URL (shortened)."""


def auto_approval(command: str, selected: int) -> str:
    """Claude Code 2.1.332's auto-mode approval dialog, the ❯ on option `selected` (0 No, 1 Yes)."""
    marks = ["❯" if i == selected else " " for i in range(2)]
    return (
        f"{'─' * 60}\n Bash command\n\n   {command}\n   fake auto mode step\n\n"
        " │ Auto mode can't check actions in this session, so this one needs your\n │ approval\n\n"
        f" Do you want to proceed?\n {marks[0]} No\n {marks[1]} Yes\n\n Esc to cancel · Tab to amend\n"
    )


def question_dialog(question: str, options: list[str]) -> str:
    """Claude Code 2.1.332's AskUserQuestion dialog."""
    rule = "─" * 60
    numbered = [f"{'❯' if i == 1 else ' '} {i}. {option}" for i, option in enumerate(options, 1)]
    more = len(options) + 1
    return "\n".join(
        [rule, " ☐ Question", question, *numbered, f"  {more}. Type something.", rule,
         f"  {more + 1}. Chat about this", "Enter to select · ↑/↓ to navigate · Esc to cancel", ""]
    )  # fmt: skip


def _load_json(path: str | None) -> tuple[object, str]:
    if not path:
        return None, ""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")), ""
    except (OSError, ValueError) as e:
        return None, f"cannot read {path}: {e}"


def _exit_on_signal(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    line = parse_command_line(sys.argv[1:] if argv is None else argv)
    session_id = line.session_id or str(uuid.uuid4())
    override = os.environ.get("IB_FAKE_TRANSCRIPT_DIR")
    folder = (
        Path(override) if override else Path.home() / ".claude" / "projects" / project_dir_name(os.getcwd())
    )
    settings, problem = _load_json(line.settings)
    script_path = os.environ.get("IB_FAKE_SCRIPT")
    try:
        script = parse_script(Path(script_path).read_text(encoding="utf-8")) if script_path else []
    except OSError as e:
        script = [Step("invalid", str(script_path), f"cannot read the script: {e.strerror}")]
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGHUP, _exit_on_signal)
    screen = Screen()
    with raw_terminal(sys.stdin.fileno()):
        if problem:
            screen.text(f"settings: {problem}\n")
        keys = Keyboard(sys.stdin.fileno(), screen)
        keys.start()
        FakeAgent(line.prompt, settings, session_id, Path(folder, f"{session_id}.jsonl"), keys).run(script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
