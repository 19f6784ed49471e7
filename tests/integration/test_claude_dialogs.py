"""The real Claude Code CLI (pinned), offline against the scripted Messages API: its dialogs surfaced as
events and answered with ib approve / deny / answer (plan mode's too), ib send that submits verbatim, and
ib resume of a conversation that never started. Agents run as configured out of the box (acceptEdits)
unless a test names another mode."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, Request, ask_user_question, bash, exit_plan_mode, reply
from tests.fake_anthropic.client import write_home
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 60.0  # deadline for one turn of a cold CLI on 2 busy cores
APPROVED = 'touch approved.txt; echo "exit=$?"'


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def _turns_at_least(count: int, log: list[Request]) -> bool:
    return sum(r.is_turn for r in log) >= count


def _wait_event(rds: redis.Redis, keys: Keys, kind: str, count: int = 1) -> dict[str, object]:
    found = retry_until(lambda: len(got := _events(rds, keys, kind)) >= count and got, TURN, what=kind)
    return found[count - 1]


def _plans(rds: redis.Redis, keys: Keys, count: int) -> list[str]:
    """The plans the permission events told, once `count` have: the hook's event carries the plan; the pane
    watcher may tell the same dialog a moment before, by its shape (kind `plan`, no plan text)."""

    def told() -> list[str] | None:
        shown = _events(rds, keys, "permission")
        plans = [str(e["data"]["plan"]) for e in shown if e["data"]["plan"]]  # type: ignore[index]
        return plans if len(plans) >= count else None

    found: list[str] = retry_until(told, TURN, what=f"{count} plan(s)")
    kinds = {e["data"]["kind"] for e in _events(rds, keys, "permission")}  # type: ignore[index]
    assert kinds == {"plan"}, kinds
    return found


def _spawn(ib: IbRunner, name: str, goal: str, *options: str) -> None:
    done = ib.run("new-agent", goal, "--name", name, *options)
    assert done.returncode == 0, done.stderr


def test_permission_dialog_approved_then_denied_with_a_reason(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    # sandboxed commands run without asking (autoAllowBashIfSandboxed); one with `$?`, which Claude Code
    # cannot check before it runs, still asks
    anthropic.script(
        reply("Making it.", bash(APPROVED, "make a file")),
        reply("Another one.", bash('touch denied.txt; echo "exit=$?"', "make another file")),
        reply("Understood, I use the fixtures.\n\nWAITING"),
    )
    _spawn(claude_ib, "asker", "make two files")
    worktree = repo / ".ib" / "agents" / "asker" / "repo"
    first = _wait_event(rds, keys, "permission")
    assert (first["data"]["tool"], first["data"]["detail"]) == ("Bash", APPROVED)  # type: ignore[index]
    retry_until(lambda: "Do you want to proceed?" in pane_text(claude_ib, "asker"), TURN)

    typed = claude_ib.run("send", "asker", "yes")
    assert typed.returncode == 1
    assert typed.stderr.strip() == (
        "ib send: error: asker shows a permission dialog (Do you want to proceed?); nothing was typed. "
        "Answer it with ib approve asker [--always] or ib deny asker [REASON]"
    )
    approved = claude_ib.run("approve", "asker")
    assert approved.returncode == 0, approved.stderr
    retry_until((worktree / "approved.txt").exists, TURN, what="the approved command ran")
    again = claude_ib.run("approve", "asker", "--prompt", str(first["data"]["prompt_id"]))  # type: ignore[index]
    assert "already answered" in again.stderr

    second = _wait_event(rds, keys, "permission", 2)
    retry_until(lambda: "Do you want to proceed?" in pane_text(claude_ib, "asker"), TURN)
    denied = claude_ib.run("deny", "asker", "use the fixtures instead")
    assert denied.returncode == 0, denied.stderr
    _wait_event(rds, keys, "waiting")
    assert not (worktree / "denied.txt").exists()
    # Claude Code tells the model the call was refused, then the reason arrives byte for byte
    said = anthropic.user_texts()[-1].splitlines()
    assert (said[0], said[-1]) == ("[Request interrupted by user for tool use]", "use the fixtures instead")
    assert second["data"]["prompt_id"] != first["data"]["prompt_id"]  # type: ignore[index]
    nothing = claude_ib.run("approve", "asker")
    assert (nothing.returncode, nothing.stderr.strip()) == (
        1,
        "ib approve: error: asker shows no dialog; nothing to answer (see ib look asker)",
    )


def test_ask_user_question_answered_with_the_option_keys(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    anthropic.script(
        reply("A question first.", ask_user_question("Which database should I use?", ["Postgres", "SQLite"])),
        reply("SQLite it is.\n\nI HAVE COMPLETED THE GOAL"),
    )
    _spawn(claude_ib, "chooser", "pick a database")
    asked = _wait_event(rds, keys, "question")
    # the hook's event (the tool's options) or, when Claude Code drew the dialog first, the pane watcher's
    # (the options as drawn, then "Type something." and "Chat about this"): the same shape
    assert (asked["data"]["question"], asked["data"]["options"][:2]) == (  # type: ignore[index]
        "Which database should I use?",
        [{"number": 1, "label": "Postgres"}, {"number": 2, "label": "SQLite"}],
    )
    retry_until(lambda: "Which database should I use?" in pane_text(claude_ib, "chooser"), TURN)
    answered = claude_ib.run("answer", "chooser", "SQLite")
    assert answered.returncode == 0, answered.stderr
    _wait_event(rds, keys, "complete")
    assert len(_events(rds, keys, "question")) == 1
    results = [r for request in anthropic.turns_taken() for r in request.tool_results()]
    assert '"Which database should I use?"="SQLite"' in str(results[-1]["content"])
    assert not rds.exists(keys.question(str(asked["data"]["question_id"])))  # type: ignore[index]


def test_plan_mode_shows_its_plan_and_keep_planning_then_approve_answer_it(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    first, second = (
        "1. Add a --verbose flag\n2. Test it",
        "1. Add a --verbose flag\n2. Document it\n3. Test it",
    )
    anthropic.script(
        reply("Here is my plan.", exit_plan_mode(first)),
        reply("A better plan.", exit_plan_mode(second)),
        reply("Planned and done.\n\nI HAVE COMPLETED THE GOAL"),
    )
    _spawn(claude_ib, "planner", "add a verbose flag", "--permission-mode", "plan")
    assert _plans(rds, keys, 1) == [first]
    retry_until(lambda: "Exit plan mode?" in pane_text(claude_ib, "planner"), TURN)
    kept = claude_ib.run("deny", "planner", "document it too")  # Keep planning, and say why
    assert kept.returncode == 0, kept.stderr

    assert _plans(rds, keys, 2) == [first, second]
    retry_until(lambda: "Exit plan mode?" in pane_text(claude_ib, "planner"), TURN)
    approved = claude_ib.run("approve", "planner")
    assert approved.returncode == 0, approved.stderr
    _wait_event(rds, keys, "complete")
    assert anthropic.user_texts()[-1].splitlines()[-1] == "document it too"
    results = [r for request in anthropic.turns_taken() for r in request.tool_results()]
    assert not results[-1].get("is_error")  # the approved ExitPlanMode call


def test_keep_planning_without_a_reason_ends_the_turn_with_one_waiting_event(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    """Claude Code runs no Stop hook for the turn a refused plan interrupts: the deny tells it."""
    anthropic.script(reply("Here is my plan.", exit_plan_mode("1. Add a --verbose flag")))
    _spawn(claude_ib, "planner", "add a verbose flag", "--permission-mode", "plan")
    _wait_event(rds, keys, "permission")
    retry_until(lambda: "Exit plan mode?" in pane_text(claude_ib, "planner"), TURN)
    kept = claude_ib.run("deny", "planner")
    assert kept.returncode == 0, kept.stderr
    waiting = _wait_event(rds, keys, "waiting")
    assert waiting["msg"] == (
        "Agent planner is waiting for input (the plan-approval dialog (Exit plan mode?) was denied)"
    )
    retry_until(lambda: "Rejected Claude's plan" in pane_text(claude_ib, "planner"), TURN)
    assert len(_events(rds, keys, "waiting")) == 1 and anthropic.pending() == 0


def test_send_submits_verbatim(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    texts = [
        "-n is the flag",
        "look at @README.md",
        "first line\n  second line\n\nfourth: ünïcode ✓",
        ("0123456789" * 1000),
    ]
    anthropic.script(reply("Ready.\n\nWAITING"), *[reply(f"Got {i}.\n\nWAITING") for i in range(len(texts))])
    _spawn(claude_ib, "reader", "wait for my messages")
    _wait_event(rds, keys, "waiting")
    for count, text in enumerate(texts, start=2):
        sent = claude_ib.run("send", "reader", text)
        assert sent.returncode == 0, sent.stderr
        anthropic.wait_for(functools.partial(_turns_at_least, count), TURN, f"turn {count}")
        _wait_event(rds, keys, "waiting", count)
    assert [_unwrapped(text) for text in anthropic.user_texts()[1:]] == texts


def _unwrapped(text: str) -> str:
    """Claude Code sends a paste inside <pasted_content id=...> tags; the bytes inside are ours."""
    found = re.search(r'<pasted_content id="[^"]*">\n(.*)\n</pasted_content id="[^"]*">', text, re.S)
    return found.group(1) if found else text


def test_resume_of_a_conversation_that_never_started(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
    tmux_socket: str,
) -> None:
    write_home(tmp_path / "home", [])  # nothing trusted: the agent stops at the folder-trust dialog
    anthropic.script(reply("Hello.\n\nI HAVE COMPLETED THE GOAL"))
    spawned = claude_ib.run("new-agent", "say hello", "--name", "late")
    assert spawned.returncode == 0, spawned.stderr
    assert "Claude Code does not trust" in spawned.stderr
    retry_until(lambda: "Yes, I trust this folder" in pane_text(claude_ib, "late"), TURN)
    refused = claude_ib.run("deny", "late")  # "No, exit": Claude Code ends before any conversation
    assert refused.returncode == 0, refused.stderr
    retry_until(lambda: _pane_dead(claude_ib, tmux_socket, "late"), TURN, what="Claude Code exited")

    resumed = claude_ib.run("resume", "late")
    assert resumed.returncode == 0, resumed.stderr
    assert "had no conversation yet: started a fresh one" in resumed.stdout
    retry_until(lambda: "Yes, I trust this folder" in pane_text(claude_ib, "late"), TURN)
    assert claude_ib.run("approve", "late").returncode == 0
    complete = _wait_event(rds, keys, "complete")
    assert complete["from"] == "late"
    assert anthropic.user_texts()[0].startswith("say hello") or "say hello" in anthropic.user_texts()[0]


def _pane_dead(ib: IbRunner, socket: str, agent: str) -> bool:
    session = next(a["session"] for a in json.loads(ib.run("list", "--json").stdout) if a["id"] == agent)
    shown = subprocess.run(
        ["tmux", "-L", socket, "list-panes", "-t", session, "-F", "#{pane_dead}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return shown.stdout.strip() == "1"
