"""`npm install` works inside an agent's sandbox, with the real Claude Code CLI in its default permission
mode: for a package.json without dependencies, and for the project's own, whose one dependency is a tarball
in the repository (no registry needed, but npm goes through its cache, which ~/.npm cannot be there); then
the project's `npm test` runs. `--no-update-notifier`: npm would ask the registry for its own version."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, bash, reply
from worker.programs.claude.sandbox import sandbox_problem

pytestmark = [pytest.mark.claude, pytest.mark.timeout(240)]  # the real CLI and two npm runs
AGENT = "noder"


def _node_project(repo: Path, scratch: Path) -> None:
    """A package.json whose one dependency is a packed package in the repository, and a test script
    that needs it, committed on main."""
    package = scratch / "tiny-dep"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "tiny-dep", "version": "1.0.0"}))
    (package / "index.js").write_text("module.exports = (n) => n * 2;\n")
    pack = ["npm", "pack", "--pack-destination", str(repo)]
    subprocess.run(pack, cwd=package, check=True, capture_output=True)
    manifest = {
        "name": "nodeproj",
        "version": "1.0.0",
        "private": True,
        "dependencies": {"tiny-dep": "file:tiny-dep-1.0.0.tgz"},
        "scripts": {"test": "node test.js"},
    }
    (repo / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (repo / "test.js").write_text(
        "const double = require('tiny-dep');\n"
        "if (double(2) !== 4) { process.exit(1); }\nconsole.log('TESTS PASSED');\n"
    )
    (repo / ".gitignore").write_text("node_modules/\n")
    git(repo, "add", "package.json", "test.js", "tiny-dep-1.0.0.tgz", ".gitignore")
    git(repo, "commit", "-qm", "a node project")


def _results(anthropic: FakeAnthropic) -> dict[str, str]:
    found = {}
    for request in anthropic.turns_taken():
        for result in request.tool_results():
            content = result.get("content")
            if isinstance(content, list):
                content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            found[str(result.get("tool_use_id"))] = str(content)
    return found


def test_npm_install_and_npm_test_work_in_the_sandbox(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, tmp_path: Path
) -> None:
    assert sandbox_problem() is None, f"{sandbox_problem()}: tests/run.sh installs bubblewrap and socat"
    _node_project(repo, tmp_path)
    bare = bash(
        'mkdir bare && echo \'{"name": "bare", "version": "1.0.0"}\' > bare/package.json '
        "&& npm install --prefix bare --no-audit --no-fund --no-update-notifier 2>&1; echo npm-exit=$?"
    )
    install = bash("npm install --no-audit --no-fund --no-update-notifier 2>&1; echo npm-exit=$?")
    test = bash("npm test --no-update-notifier 2>&1; echo npm-exit=$?")
    calls = [bare, install, test]
    anthropic.script(*(reply(call) for call in calls), reply("I HAVE COMPLETED THE GOAL"))

    spawned = claude_ib.run("new-agent", "Install the project's packages and run its tests.", "--name", AGENT)
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

    worktree = repo / ".ib" / "agents" / AGENT / "repo"
    assert "npm-exit=0" in results[bare.id], results[bare.id]  # nothing to fetch: no cache needed
    assert (worktree / "bare" / "package-lock.json").is_file()
    assert "npm-exit=0" in results[install.id], results[install.id]
    assert (worktree / "node_modules" / "tiny-dep" / "index.js").is_file()
    assert "TESTS PASSED" in results[test.id] and "npm-exit=0" in results[test.id], results[test.id]
    assert (repo / ".ib" / "agents" / AGENT / "cache" / "npm" / "_cacache").is_dir()  # its own, not ~/.npm
