"""The fake agent in a real tmux server (its own socket) and a real git repository: the pane text, the
commits, the hook payloads, pasted replies and the transcript, as the worker will meet them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waiting import retry_until
from worker.fake.script import project_dir_name
from worker.programs.claude.transcript import TranscriptParser

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
BASE_KEYS = {"session_id", "transcript_path", "cwd", "hook_event_name"}
MARKER = "I HAVE COMPLETED THE GOAL"


class AgentPane:
    """One tmux server on a socket of its own with the fake agent in its only pane, and the files
    the agent's hooks and replies write to."""

    def __init__(self, root: Path) -> None:
        self.socket = f"ibfake-{uuid.uuid4().hex[:10]}"
        self.repo, self.home, self.bin = root / "repo", root / "home", root / "bin"
        self.hook_log, self.received, self.ib_calls = (
            root / "hooks.jsonl",
            root / "received.txt",
            root / "ib.txt",
        )
        self.settings = root / "settings.json"
        self.session_id = str(uuid.uuid4())
        for folder in (self.repo, self.home, self.bin):
            folder.mkdir()
        for args in (
            ["init", "-q", "-b", "main"],
            ["config", "user.email", "t@example.com"],
            ["config", "user.name", "T"],
        ):
            subprocess.run(["git", *args], cwd=self.repo, check=True)
        self.ib_calls.touch()
        ib = self.bin / "ib"  # stands in for `ib`: records its arguments
        ib.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(str(self.ib_calls))}\necho asked\n')
        ib.chmod(0o755)
        self.write_settings()

    def write_settings(self, deny_bash: str = "") -> None:
        log = f"cat >> {shlex.quote(str(self.hook_log))}; echo >> {shlex.quote(str(self.hook_log))}"
        hooks: dict[str, object] = {
            event: [{"matcher": "", "hooks": [{"type": "command", "command": log}]}] for event in HOOK_EVENTS
        }
        if deny_bash:
            answer = {
                "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": deny_bash}
            }
            command = f"cat > /dev/null; echo {shlex.quote(json.dumps(answer))}"
            hooks["PreToolUse"] = [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]
        self.settings.write_text(json.dumps({"hooks": hooks}))

    def tmux(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], input=stdin, capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self, prompt: str, **env: str) -> None:
        agent = [sys.executable, "-m", "worker.fake.agent", "--settings", str(self.settings)]
        agent += ["--session-id", self.session_id, "--dangerously-skip-permissions", prompt]
        command = f"{shlex.join(agent)}; echo '[fake agent exited]'; exec sleep 3600"
        environment = {k: v for k, v in os.environ.items() if k != "TMUX"}
        environment.update(HOME=str(self.home), PATH=f"{self.bin}:{os.environ['PATH']}", **env)
        environment["IB_FAKE_RECEIVED"] = str(self.received)
        size = ["-x", "200", "-y", "50"]
        where = ["-s", "agent", "-c", str(self.repo)]
        tmux = ["tmux", "-L", self.socket, "-f", "/dev/null"]
        subprocess.run([*tmux, "new-session", "-d", *size, *where, command], env=environment, check=True)

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "agent")

    def paste(self, text: str) -> None:
        """What the worker does with text: load it into a buffer, paste it bracketed, then Enter."""
        self.tmux("load-buffer", "-b", "reply", "-", stdin=text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "reply", "-t", "agent")
        self.tmux("send-keys", "-t", "agent", "Enter")

    def payloads(self, event: str) -> list[dict[str, object]]:
        if not self.hook_log.exists():
            return []
        lines = self.hook_log.read_text(encoding="utf-8").splitlines()
        found = [json.loads(line) for line in lines if line.strip()]
        return [p for p in found if p["hook_event_name"] == event]

    def stops(self, count: int) -> list[dict[str, object]]:
        """The first `count` Stop payloads, once there are that many."""

        def enough() -> list[dict[str, object]]:
            found = self.payloads("Stop")
            return found if len(found) >= count else []

        return retry_until(enough, what=f"Stop payload #{count}")

    def wait_for(self, needle: str) -> str:
        """The pane's text once `needle` shows in it."""

        def shown() -> str:
            text = self.text()
            return text if needle in text else ""

        return retry_until(shown, what=f"{needle!r} on the pane")

    def close(self) -> None:
        """Stop the server and remove its socket file, which tmux leaves behind."""
        tmux = ["tmux", "-L", self.socket]
        where = subprocess.run(
            [*tmux, "display-message", "-p", "#{socket_path}"], capture_output=True, text=True, check=False
        )
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        if where.returncode == 0:
            Path(where.stdout.strip()).unlink(missing_ok=True)


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[AgentPane]:
    agent = AgentPane(tmp_path)
    yield agent
    agent.close()


def steps(*lines: str) -> str:
    return "Do the task.\n" + "".join(f"fake: {line}\n" for line in lines)


def test_script_writes_commits_and_completes(pane: AgentPane) -> None:
    prompt = steps(
        "write notes.txt first line\\nsecond line", "commit Add notes", "run printf 'a\\nb\\n'", "done"
    )
    pane.start(prompt)

    stop = pane.stops(1)[0]
    assert BASE_KEYS | {"stop_hook_active", "last_assistant_message"} <= stop.keys()
    assert stop["stop_hook_active"] is False
    assert str(stop["last_assistant_message"]).endswith(MARKER)
    assert stop["cwd"] == str(pane.repo)
    assert stop["session_id"] == pane.session_id
    log = subprocess.run(
        ["git", "log", "--format=%s", "--name-only"],
        cwd=pane.repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert log.stdout.split() == ["Add", "notes", "notes.txt"]
    assert (pane.repo / "notes.txt").read_text() == "first line\nsecond line\n"

    text = pane.wait_for(MARKER)
    assert "Claude Code v2.0.0 (fake)" in text
    assert "[USER TASK]\n  Do the task." in text
    assert "⏺ Write(notes.txt)\n  ⎿  Wrote 2 lines" in text
    assert '⏺ Bash(git add -A && git commit -m "Add notes")' in text
    assert "(esc to interrupt)" not in text
    assert text.rstrip().endswith("\n>")

    start = pane.payloads("SessionStart")[0]
    assert start["source"] == "startup"
    assert start["transcript_path"] == stop["transcript_path"]
    assert pane.payloads("UserPromptSubmit")[0]["prompt"] == prompt
    pre = [(p["tool_name"], p["tool_use_id"]) for p in pane.payloads("PreToolUse")]
    post = [(p["tool_name"], p["tool_use_id"]) for p in pane.payloads("PostToolUse")]
    assert [name for name, _ in pre] == ["Write", "Bash", "Bash"]
    assert pre == post
    assert pane.payloads("PostToolUse")[2]["tool_response"] == {
        "stdout": "a\nb\n",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
    }

    transcript = Path(str(stop["transcript_path"]))
    assert (
        transcript
        == pane.home / ".claude" / "projects" / project_dir_name(str(pane.repo)) / f"{pane.session_id}.jsonl"
    )
    data = transcript.read_bytes()
    items, consumed = TranscriptParser().feed(data)
    assert consumed == len(data)
    shown = [
        (i.kind, i.tool, i.text if i.text.startswith("**") or i.tool != "Bash" else i.text[:6]) for i in items
    ]
    assert shown == [
        ("prompt", None, ""),  # a new turn starts here
        ("tool_use", "Write", "**Write**(notes.txt)"),
        ("tool_result", "Write", "Wrote 2 lines"),
        ("tool_use", "Bash", '**Bash**(git add -A && git commit -m "Add notes")'),
        ("tool_result", "Bash", "Output"),
        ("tool_use", "Bash", "**Bash**(printf 'a\\nb\\n')"),
        ("tool_result", "Bash", "Output"),
        ("text", None, f"All the steps are done.\n\n{MARKER}"),
    ]
    assert items[6].text == "Output 2 lines"


@pytest.mark.parametrize(
    "reply",
    [
        "plain answer",
        "line one\nline two\n\nline four after a blank",
        "Ünïcödé ✓ 日本語 🚀",
        """He said "don't" and left; `$HOME` \\ stays 'literal'""",
        "  indented\n\ttabbed\n",
    ],
    ids=["plain", "multi-line", "unicode", "quotes-and-shell", "whitespace"],
)
def test_pasted_reply_arrives_verbatim(pane: AgentPane, reply: str) -> None:
    pane.start(steps("ask Which colour?"))
    stop = pane.stops(1)[0]
    assert str(stop["last_assistant_message"]).endswith("WAITING")
    assert pane.ib_calls.read_text() == "ask Which colour?\n"

    pane.paste(reply)

    after = pane.stops(2)[1]
    assert str(after["last_assistant_message"]).endswith("WAITING")  # the script ended without `done`
    assert pane.received.read_bytes() == reply.encode() + b"\n"
    assert pane.payloads("UserPromptSubmit")[-1]["prompt"] == reply
    assert "⏺ Received: " + reply.split("\n", maxsplit=1)[0] in pane.text()


def test_messages_carry_steps_and_completion_repeats(pane: AgentPane) -> None:
    pane.start(steps("wait"))
    pane.stops(1)
    pane.paste("Now write it.\nfake: write later.txt made later\nfake: done Finished.")
    assert pane.stops(2)[1]["last_assistant_message"] == f"Finished.\n\n{MARKER}"
    assert (pane.repo / "later.txt").read_text() == "made later\n"

    pane.paste("anything else?")
    assert str(pane.stops(3)[2]["last_assistant_message"]).endswith(MARKER)
    assert (
        pane.received.read_text()
        == "Now write it.\nfake: write later.txt made later\nfake: done Finished.\nanything else?\n"
    )


def test_script_file_runs_before_the_prompt_steps(pane: AgentPane, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["say from the file", "write a.txt one"]))
    transcripts = tmp_path / "transcripts"
    pane.start(
        steps("say from the prompt", "done"),
        IB_FAKE_SCRIPT=str(script),
        IB_FAKE_TRANSCRIPT_DIR=str(transcripts),
    )
    stop = pane.stops(1)[0]
    assert stop["transcript_path"] == str(transcripts / f"{pane.session_id}.jsonl")
    items, _ = TranscriptParser().feed(Path(str(stop["transcript_path"])).read_bytes())
    assert [i.text for i in items if i.kind == "text"] == [
        "from the file",
        "from the prompt",
        f"All the steps are done.\n\n{MARKER}",
    ]


def test_denied_tool_does_not_run(pane: AgentPane) -> None:
    pane.write_settings(deny_bash="commits are not allowed here")
    pane.start(steps("write a.txt x", "commit Should not happen", "done"))
    stop = pane.stops(1)[0]
    log = subprocess.run(["git", "log"], cwd=pane.repo, capture_output=True, text=True, check=False)
    assert log.returncode != 0  # no commit at all
    items, _ = TranscriptParser().feed(Path(str(stop["transcript_path"])).read_bytes())
    results = [(i.tool, i.text) for i in items if i.kind == "tool_result"]
    assert results == [("Write", "Wrote 1 line"), ("Bash", "Error: commits are not allowed here")]
    assert "⎿  Error: commits are not allowed here" in pane.text()


def test_escape_interrupts_the_turn(pane: AgentPane) -> None:
    pane.start(steps("say starting", "sleep 600", "done"))
    pane.wait_for("(esc to interrupt)")
    pane.tmux("send-keys", "-t", "agent", "Escape")
    pane.wait_for("Interrupted by user")
    assert pane.payloads("Stop") == []  # an interrupted turn does not stop
    pane.paste("fake: exit")
    assert "\x1b" not in pane.wait_for("[fake agent exited]")


def test_what_is_typed_during_a_turn_shows_in_the_next_input_box(pane: AgentPane) -> None:
    """As Claude Code keeps typed-ahead text in its box: `ib send` waits for its message to show there before
    it presses Enter (a full run had it wait for ever on text typed into a turn, never drawn)."""
    gate = pane.repo / "go"
    pane.start(steps(f"run until [ -e {gate} ]; do sleep 0.1; done", "wait"))
    pane.wait_for("Bash(")
    pane.tmux("send-keys", "-t", "agent", "-l", "typed ahead")
    gate.touch()
    box = pane.wait_for("> typed ahead")
    assert box.count("typed ahead") == 1  # drawn once: in the box, not echoed into the turn as well
    pane.tmux("send-keys", "-t", "agent", "Enter")
    retry_until(lambda: pane.received.exists() and "typed ahead" in pane.received.read_text())
