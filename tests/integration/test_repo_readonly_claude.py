"""The person's repository is read-only to an agent, and ordinary work still succeeds, with the real Claude
Code CLI in its sandbox: from Bash (through python, so only the sandbox can stop it) the agent tries to
corrupt an object, add a branch and write info/attributes in the person's `.git`, and to change its own
repository's config and hooks (which the worker's git would obey); then it commits with `git add -A`,
installs a small project into its own venv with `pip install -e`, runs that project's tests, and says
which `python3` it has. The commit reaches the person's branch only through `ib diff` / `ib merge`.

Both in the default permission mode and in bypassPermissions: the sandbox, not a question, holds.
`IB_REPO_TABLE=<file>` writes the README's table of the default mode's run."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, bash, reply
from tests.fake_anthropic.script import ToolUse
from worker.programs.claude.sandbox import sandbox_problem

pytestmark = [pytest.mark.claude, pytest.mark.timeout(300)]  # the real CLI, a venv, a pip install
AGENT = "boxed"
PERSON_PATH = "/usr/local/bin:/usr/bin:/bin"


def _python_writes(path: Path, data: str = "x", *, make_parent: bool = False) -> ToolUse:
    """A write the PreToolUse hook cannot read (the path is built inside python): only the sandbox holds."""
    head, tail = str(path.parent), path.name
    code = (f"import os; os.makedirs({head!r}, exist_ok=True); " if make_parent else "") + (
        f"open({head!r} + '/' + {tail!r}, 'w').write({data!r})"
    )
    return bash(f"python3 -c {json.dumps(code)} && echo CHANGED")


def _tiny_project(repo: Path) -> None:
    """A project with no dependencies and a test, committed on main (setup.py: pip's offline editable
    install needs no build backend to download)."""
    (repo / "tinyproj").mkdir()
    (repo / "tinyproj" / "__init__.py").write_text("VALUE = 2\n")
    (repo / "setup.py").write_text(
        'from setuptools import setup\n\nsetup(name="tinyproj", packages=["tinyproj"])\n'
    )
    (repo / "test_tiny.py").write_text(
        "import unittest\n\nimport tinyproj\n\n\nclass T(unittest.TestCase):\n"
        "    def test_value(self):\n        self.assertEqual(tinyproj.VALUE, 2)\n"
    )
    git(repo, "add", "tinyproj", "setup.py", "test_tiny.py")
    git(repo, "commit", "-qm", "a tiny project")


WHAT = (
    "overwrite a loose object in `<root>/.git/objects`",
    "create `<root>/.git/refs/heads/evil/branch`",
    "write `<root>/.git/info/attributes`",
    "set `core.fsmonitor` in its own repository's config",
    "add a hook to its own repository",
    "`git add -A && git commit` (normal work: must succeed)",
    "`pip install -e .` into its own venv, then the tests (must succeed)",
    "`command -v python3` (`ib` started with its venv first on PATH)",
)


def _write_table(
    path: Path, rows: Iterable[tuple[str, ToolUse]], results: dict[str, str], short: dict[str, str]
) -> None:
    lines = ["| from inside the agent's sandbox | result |", "|---|---|"]
    for what, call in rows:
        text = results.get(call.id, "(no result)").strip().splitlines() or ["(no output)"]
        line = next((ln for ln in text if "Error" in ln or "error" in ln), text[-1])
        for long, name in short.items():
            line = line.replace(long, name)
        lines.append(f"| {what} | `{line[:100].replace('|', '/')}` |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _results(anthropic: FakeAnthropic) -> dict[str, str]:
    found = {}
    for request in anthropic.turns_taken():
        for result in request.tool_results():
            content = result.get("content")
            if isinstance(content, list):
                content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            found[str(result.get("tool_use_id"))] = str(content)
    return found


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_the_person_s_repository_is_read_only_and_work_succeeds(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, mode: str
) -> None:
    assert sandbox_problem() is None, f"{sandbox_problem()}: tests/run.sh installs bubblewrap and socat"
    _tiny_project(repo)
    dot_git = repo / ".git"
    blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    loose = dot_git / "objects" / blob[:2] / blob[2:]
    loose_before = loose.read_bytes()
    own = repo / ".ib" / "agents" / AGENT / "git"
    attacks = [
        _python_writes(loose, "garbage"),
        _python_writes(dot_git / "refs" / "heads" / "evil" / "branch", "0" * 40 + "\n", make_parent=True),
        _python_writes(dot_git / "info" / "attributes", "* filter=evil\n"),
        _python_writes(own / "config", "[core]\n\tfsmonitor = touch /tmp/pwned\n"),
        _python_writes(own / "hooks" / "post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n"),
    ]
    commit = bash(
        "echo y > work.txt && git add -A && git commit -qm work && git log --oneline -1 && git status -s"
    )
    install = bash(
        "python3 -m venv .venv && .venv/bin/pip install -q --no-index --no-build-isolation --no-deps -e . "
        "&& .venv/bin/python -m unittest -q test_tiny 2>&1 | tail -1"
    )
    which = bash("command -v python3")
    calls = [*attacks, commit, install, which]
    anthropic.script(*(reply(call) for call in calls), reply("I HAVE COMPLETED THE GOAL"))
    # the venv that runs `ib` first on PATH, as the old install line put it
    claude_ib.env["PATH"] = f"{Path(sys.executable).parent}:{PERSON_PATH}"
    # auto mode needs Anthropic's servers; bypassPermissions (every question skipped) must hold as well, and
    # as root Claude Code accepts it only with IS_SANDBOX=1
    claude_ib.env["IB_AGENT_COMMAND"] += f" --permission-mode {mode}"
    claude_ib.env.update({"IS_SANDBOX": "1", "IB_AGENT_ENV": "IS_SANDBOX"})
    if mode == "bypassPermissions":  # the person accepted the mode's warning once
        user_settings = Path(claude_ib.env["HOME"]) / ".claude" / "settings.json"
        user_settings.parent.mkdir(exist_ok=True)
        user_settings.write_text(json.dumps({"skipDangerousModePermissionPrompt": True}))

    spawned = claude_ib.run("new-agent", "Try the person's git, then work.", "--name", AGENT)
    assert spawned.returncode == 0, spawned.stderr
    try:
        anthropic.wait_for(
            lambda log: anthropic.pending() == 0 and len([r for r in log if r.is_turn]) > len(calls),
            timeout=90,
            what="the scripted conversation to end",
        )
    except AssertionError as e:
        pane = claude_ib.run("look", AGENT, "--lines", "40").stdout
        raise AssertionError(f"{str(e)[:300]}\nthe agent's pane:\n{pane}") from None
    results = _results(anthropic)

    table = os.environ.get("IB_REPO_TABLE")
    if table and mode == "default":
        _write_table(Path(table), zip(WHAT, calls, strict=True), results, {str(repo): "<root>"})
    changed = [call.input["command"] for call in attacks if "CHANGED" in results.get(call.id, "CHANGED")]
    assert not changed, changed
    assert loose.read_bytes() == loose_before
    assert not (dot_git / "refs" / "heads" / "evil").exists()
    assert not (dot_git / "info" / "attributes").exists()
    assert "fsmonitor" not in (own / "config").read_text()
    assert not (own / "hooks" / "post-checkout").exists()

    assert results[commit.id].strip().endswith("work"), results[commit.id]  # and `git status -s` is empty
    assert results[install.id].strip().endswith("OK"), results[install.id]
    assert results[which.id].strip() == shutil.which("python3", path=PERSON_PATH), results[which.id]

    diff = claude_ib.run("diff", AGENT, "--stat")
    assert diff.returncode == 0 and "work.txt" in diff.stdout, diff.stdout + diff.stderr
    merged = claude_ib.run("merge", AGENT)
    assert merged.returncode == 0, merged.stderr
    assert git(repo, "log", "-1", "--format=%s", "main^2").strip() == "work"
    assert git(repo, "show", "--name-only", "--format=", "main^2").split() == ["work.txt"]
    fsck = git(repo, "fsck", "--no-dangling")
    assert "error" not in fsck and "missing" not in fsck, fsck
