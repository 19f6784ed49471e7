"""The real Claude Code CLI in a pane 200 columns wide: after a file edit it opens its diff panel on the
right, and the permission dialogs that follow are drawn beside it. ib send refuses, ib approve and ib deny
(with a reason, typed into the input box under the panel) answer them, and the turn completes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply, write
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 60.0  # deadline for one turn of a cold CLI on 2 busy cores
WIDTH = 200  # wide enough for the diff panel (it opens at 120 columns)
MARK = 'touch marked.txt; echo "exit=$?"'  # `$?`: Claude Code cannot check it before it runs, so it asks
SIGN = 'touch signed.txt; echo "exit=$?"'


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def _pane_width(ib: IbRunner, socket: str, agent: str) -> int:
    session = next(a["session"] for a in json.loads(ib.run("list", "--json").stdout) if a["id"] == agent)
    shown = subprocess.run(
        ["tmux", "-L", socket, "display-message", "-p", "-t", session, "#{pane_width}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(shown.stdout)


def _beside_the_panel(screen: str) -> bool:
    """The dialog is up and every one of its lines ends in the panel's border."""
    lines = screen.rstrip().splitlines()
    asking = [line for line in lines if "Do you want to proceed?" in line]
    return bool(asking) and asking[-1].rstrip().endswith("│") and lines[-1].rstrip().endswith("│")


def test_a_dialog_beside_the_diff_panel_is_told_refused_to_send_and_approved(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, repo: Path, tmux_socket: str
) -> None:
    worktree = repo / ".ib" / "agents" / "noter" / "repo"
    anthropic.script(
        reply("Writing the notes.", write(str(worktree / "notes.txt"), "first line\nsecond line\n")),
        reply("Marking them.", bash(MARK, "mark the notes")),
        reply("Signing them.", bash(SIGN, "sign the notes")),
        reply("Noted and marked, not signed.\n\nI HAVE COMPLETED THE GOAL"),
    )
    spawned = claude_ib.run("new-agent", "write notes", "--name", "noter")  # the default mode: acceptEdits
    assert spawned.returncode == 0, spawned.stderr
    assert _pane_width(claude_ib, tmux_socket, "noter") == WIDTH

    asked = retry_until(lambda: _events(rds, keys, "permission"), TURN, what="a permission event")
    assert (asked[0]["data"]["tool"], asked[0]["data"]["detail"]) == ("Bash", MARK)  # type: ignore[index]
    assert (worktree / "notes.txt").exists()  # written without asking, and the panel shows its diff
    retry_until(lambda: _beside_the_panel(pane_text(claude_ib, "noter")), TURN, what="the panel")

    typed = claude_ib.run("send", "noter", "yes")
    assert (typed.returncode, typed.stderr.strip()) == (
        1,
        "ib send: error: noter shows a permission dialog (Do you want to proceed?); nothing was typed. "
        "Answer it with ib approve noter [--always] or ib deny noter [REASON]",
    )
    approved = claude_ib.run("approve", "noter")
    assert approved.returncode == 0, approved.stderr
    retry_until((worktree / "marked.txt").exists, TURN, what="the approved command ran")

    retry_until(lambda: len(_events(rds, keys, "permission")) == 2, TURN, what="the second permission event")
    retry_until(lambda: _beside_the_panel(pane_text(claude_ib, "noter")), TURN, what="the panel")
    denied = claude_ib.run("deny", "noter", "leave them unsigned")
    assert denied.returncode == 0, denied.stderr
    retry_until(lambda: _events(rds, keys, "complete"), TURN, what="the turn's complete event")
    assert not (worktree / "signed.txt").exists()
    assert anthropic.user_texts()[-1].splitlines()[-1] == "leave them unsigned"
    assert len(_events(rds, keys, "permission")) == 2  # each dialog told once
