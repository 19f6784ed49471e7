"""The real Claude Code CLI (pinned) as an ittybus agent, offline against the scripted Messages API, in
the configuration a user gets (no --permission-mode, no defaultMode of the user's: acceptEdits from
ittybus) and, where they show something, in the modes a person picks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply, write
from tests.fake_anthropic.client import write_home
from tests.fake_anthropic.script import ToolUse
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN_TIMEOUT = 90.0  # a cold CLI start on 2 busy cores takes a few seconds; this is the deadline only


def _listen_until(ib: IbRunner, wanted: str) -> list[dict[str, object]]:
    """`ib listen` again and again, as the primary session does, until an event of type `wanted` arrives."""
    seen: list[dict[str, object]] = []
    while not any(e["type"] == wanted for e in seen):
        out = ib.run("listen", "--timeout", str(TURN_TIMEOUT), timeout=TURN_TIMEOUT + 30).stdout
        got = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert got, f"no {wanted} event within {TURN_TIMEOUT}s; saw {[e['type'] for e in seen]}"
        seen += got
    return seen


def test_new_agent_reaches_complete_through_the_stop_hook_in_our_mode_not_the_users(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, tmp_path: Path
) -> None:
    write_home(tmp_path / "home", [repo], {"permissions": {"defaultMode": "auto"}})  # the user's own choice
    anthropic.script(reply("Hello from the model.\n\nI HAVE COMPLETED THE GOAL"))
    spawned = claude_ib.run("new-agent", "say hello", "--name", "greeter")
    assert spawned.returncode == 0, spawned.stderr
    assert (
        "your Claude Code defaultMode 'auto'" in spawned.stderr and "starts in acceptEdits" in spawned.stderr
    )

    seen = _listen_until(claude_ib, "complete")
    complete = next(e for e in seen if e["type"] == "complete")
    assert complete["from"] == "greeter"
    prompt = (repo / ".ib" / "agents" / "greeter" / "prompt.txt").read_text(encoding="utf-8")
    assert anthropic.user_texts() == [prompt.rstrip("\n")]  # the prompt arrived byte for byte, once
    assert anthropic.pending() == 0
    retry_until(lambda: "accept edits on" in _screen(claude_ib, "greeter"), TURN_TIMEOUT, 0.2, "the footer")


def _screen(ib: IbRunner, agent: str) -> str:
    return pane_text(ib, agent, 60)


def _state(ib: IbRunner, agent: str) -> str:
    agents = json.loads(ib.run("list", "--json").stdout)
    return str(next(a["state"] for a in agents if a["id"] == agent))


def _states_published(rds: redis.Redis, keys: Keys, agent: str) -> list[str]:
    events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    return [e["data"]["to_state"] for e in events if e["type"] == "state" and e["agent"] == agent]


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def test_out_of_the_box_an_agent_asks_once_and_goes_on_when_approved(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    """No extra configuration: a sandboxed command runs unasked; a command with `$?`, which Claude Code
    cannot check before it runs, asks the person; no dialog offers auto mode. (No file edit before the
    dialog: a wide pane then shows the diff panel beside it, which `ib approve` cannot read yet.)"""
    worktree = repo / ".ib" / "agents" / "builder" / "repo"
    asking = 'touch built.txt; echo "exit=$?"'
    anthropic.script(
        reply("A scratch file.", bash("touch scratch.txt", "make a scratch file")),
        reply("Now the build.", bash(asking, "Build it")),
        reply("Built.\n\nI HAVE COMPLETED THE GOAL"),
    )
    assert claude_ib.run("new-agent", "build it", "--name", "builder").returncode == 0
    asked = retry_until(lambda: _events(rds, keys, "permission"), TURN_TIMEOUT, 0.2, "a permission event")
    assert (asked[0]["data"]["tool"], asked[0]["data"]["detail"]) == ("Bash", asking)  # type: ignore[index]
    assert (worktree / "scratch.txt").exists()  # ran unasked
    retry_until(
        lambda: "Do you want to proceed?" in _screen(claude_ib, "builder"), TURN_TIMEOUT, 0.2, "the dialog"
    )
    assert "auto mode" not in _screen(claude_ib, "builder")
    looked = claude_ib.run("worker", "--once")
    assert looked.returncode == 0, looked.stderr
    assert _state(claude_ib, "builder") == "permission"

    approved = claude_ib.run("approve", "builder")
    assert approved.returncode == 0, approved.stderr
    retry_until(lambda: _events(rds, keys, "complete"), TURN_TIMEOUT, 0.2, "complete")
    assert (worktree / "built.txt").exists()
    assert len(_events(rds, keys, "permission")) == 1


def test_manual_mode_from_the_flag_and_no_offer_of_auto_mode_after_a_turn(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    """`--permission-mode default` reaches the CLI; after a turn in manual mode Claude Code would offer to
    make auto mode the default, a dialog that swallows the next message: with auto mode off it does not."""
    anthropic.script(
        reply("Hello.\n\nI HAVE COMPLETED THE GOAL"), reply("Again.\n\nI HAVE COMPLETED THE GOAL")
    )
    spawned = claude_ib.run("new-agent", "say hello", "--name", "careful", "--permission-mode", "default")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: _events(rds, keys, "complete"), TURN_TIMEOUT, 0.2, "complete")
    retry_until(lambda: "manual mode on" in _screen(claude_ib, "careful"), TURN_TIMEOUT, 0.2, "the footer")
    sent = claude_ib.run("send", "careful", "once more")
    assert sent.returncode == 0, sent.stderr
    retry_until(lambda: len(_events(rds, keys, "complete")) == 2, TURN_TIMEOUT, 0.2, "the second turn")
    assert anthropic.user_texts()[1] == "once more"
    assert "auto mode" not in _screen(claude_ib, "careful")


def test_bypass_permissions_keeps_the_hook_and_the_sandbox(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    """Nothing asks, also as root (ittybus sets IS_SANDBOX=1 with the sandbox on) and not at start (asking
    for the mode is accepting Claude Code's warning); the PreToolUse hook still denies and the sandbox
    still holds a write the hook cannot read."""
    code = f"open({str(repo / 'py-evil.txt')!r}, 'w').write('x')"
    hooked = bash(f"echo x > {repo}/evil.txt", "escape")
    boxed = ToolUse("Bash", {"command": f"python3 -c {json.dumps(code)}", "description": "escape"})
    anthropic.script(reply(hooked), reply(boxed), reply("Tried.\n\nI HAVE COMPLETED THE GOAL"))
    spawned = claude_ib.run("new-agent", "try", "--name", "free", "--permission-mode", "bypassPermissions")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: _events(rds, keys, "complete"), TURN_TIMEOUT, 0.2, "complete")
    results = {
        str(r.get("tool_use_id")): str(r.get("content"))
        for t in anthropic.turns_taken()
        for r in t.tool_results()
    }
    assert "Path violation" in results[hooked.id]
    assert "Read-only file system" in results[boxed.id]
    assert not (repo / "evil.txt").exists() and not (repo / "py-evil.txt").exists()
    assert not _events(rds, keys, "permission")


def test_diff_panel_of_a_wide_pane_keeps_complete(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    """Agents run 200 columns wide; after a file edit Claude Code opens its diff panel on the right."""
    notes = repo / ".ib" / "agents" / "scribe" / "repo" / "notes.txt"
    anthropic.script(
        reply("Writing the notes.", write(str(notes), "first line\nsecond line\n")),
        reply("Wrote notes.txt.\n\nI HAVE COMPLETED THE GOAL"),
    )
    assert claude_ib.run("new-agent", "write notes", "--name", "scribe").returncode == 0
    assert any(e["type"] == "complete" for e in _listen_until(claude_ib, "complete"))  # the Stop hook
    retry_until(lambda: "/diff to close" in _screen(claude_ib, "scribe"), TURN_TIMEOUT, 0.2, "the diff panel")
    assert notes.read_text() == "first line\nsecond line\n"

    looked = claude_ib.run("worker", "--once")
    assert looked.returncode == 0, looked.stderr
    assert _state(claude_ib, "scribe") == "complete"
    assert "unknown" not in _states_published(rds, keys, "scribe")
