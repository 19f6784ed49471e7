"""An agent spawned from a linked git worktree, with the real Claude Code CLI in its sandbox: it commits
in its own worktree, and cannot change the git files of the checkout it came from, in the linked
worktree's own git folder or in the one it shares with the main checkout."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, client_env, reply, write_home
from tests.fake_anthropic.script import ToolUse
from worker.programs.claude.sandbox import sandbox_problem

pytestmark = pytest.mark.claude
AGENT = "side"


def _bash(command: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": command[:60]})


def _append_from_python(path: Path) -> ToolUse:
    """Written inside python so that only the sandbox, not the hook, can stop it."""
    code = f"open({str(path)!r}, 'a').write('x')"
    return _bash(f"python3 -c {json.dumps(code)} && echo CHANGED")


def test_an_agent_of_a_linked_worktree_commits_and_cannot_touch_its_git_files(
    ib: IbRunner,
    tmux_socket: str,
    tmp_path: Path,
    repo: Path,
    anthropic: FakeAnthropic,
    claude_bin: Path,
) -> None:
    assert sandbox_problem() is None, f"{sandbox_problem()}: tests/run.sh installs bubblewrap and socat"
    linked = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    home = write_home(tmp_path / "home", [linked])  # not what Claude Code asks about: see below
    ib.unset_prefixes = ("IB_", "ANTHROPIC_", "CLAUDE")
    ib.env.update(
        {
            **client_env(anthropic.base_url, home),
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_AGENT_COMMAND": str(claude_bin),
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
        }
    )
    common = repo / ".git"
    own = common / "worktrees" / "feature"
    commit = _bash("echo y > work.txt && git add work.txt && git commit -qm work && git log --oneline -1")
    touch_config = _append_from_python(common / "config")
    touch_head = _append_from_python(own / "HEAD")
    anthropic.script(
        reply(commit), reply(touch_config), reply(touch_head), reply("I HAVE COMPLETED THE GOAL")
    )
    config_before = (common / "config").read_text()
    head_before = (own / "HEAD").read_text()

    # Claude Code asks to trust a worktree's main checkout, so trusting the linked worktree is not enough
    early = ib.run("new-agent", "never starts", "--name", "early", cwd=linked)
    assert early.returncode == 0, early.stderr
    assert f"Claude Code does not trust {repo} yet" in early.stderr
    assert ib.run("kill", "early", "--force", cwd=linked).returncode == 0

    write_home(home, [repo])
    spawned = ib.run("new-agent", "Commit, then try the git files.", "--name", AGENT, cwd=linked)
    assert spawned.returncode == 0, spawned.stderr
    assert "does not trust" not in spawned.stderr
    try:
        anthropic.wait_for(
            lambda log: anthropic.pending() == 0 and len([r for r in log if r.is_turn]) > 3,
            timeout=90,
            what="the scripted conversation to end",
        )
    except AssertionError as e:
        pane = ib.run("look", AGENT, "--lines", "40", cwd=linked).stdout
        raise AssertionError(f"{str(e)[:300]}\nthe agent's pane:\n{pane}") from None

    results = {
        str(r.get("tool_use_id")): str(r.get("content"))
        for request in anthropic.turns_taken()
        for r in request.tool_results()
    }
    assert "work" in results[commit.id]
    assert "CHANGED" not in results[touch_config.id] and "CHANGED" not in results[touch_head.id]
    assert (common / "config").read_text() == config_before
    assert (own / "HEAD").read_text() == head_before
    worktree = linked / ".ib" / "agents" / AGENT / "repo"
    assert git(worktree, "log", "-1", "--format=%s").strip() == "work"
    assert git(linked, "status", "--porcelain") == ""
    ib.run("kill", AGENT, "--force", cwd=linked)
