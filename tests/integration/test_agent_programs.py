"""Choosing the agent program (`--cli`, IB_DEFAULT_CLI, a task's `--cli`) and its bad inputs (issue 21):
an unknown name, a program not installed, a version outside the tested range. Real `ib`, git, tmux and
Redis; the installed Codex and Gemini CLIs answer `--version`; the fake agent stands in for Claude Code
behind a wrapper that reports a chosen version."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.waiting import retry_until
from worker.programs import probe
from worker.programs.codex.program import VERSION_SHAPE as CODEX_SHAPE
from worker.programs.gemini.program import VERSION_SHAPE as GEMINI_SHAPE

KNOWN = "use one of: claude, codex, gemini"


def _nothing_made(repo: Path, tmux_socket: str, name: str, rds: redis.Redis, keys: Keys) -> None:
    """No folder, branch, tmux session or record for `name`."""
    assert not (repo / ".ib" / "agents" / name).exists()
    assert git(repo, "branch", "--list", f"agent/{name}") == ""
    sessions = subprocess.run(
        ["tmux", "-L", tmux_socket, "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert name not in sessions
    assert not rds.exists(keys.agent(name))


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # one clear line, never a traceback
    return lines[0]


def test_an_unknown_cli_is_refused_listing_the_known_ones(
    agents_ib: IbRunner, repo: Path, tmux_socket: str, rds: redis.Redis, keys: Keys
) -> None:
    line = _one_error_line(agents_ib.run("new-agent", "do it", "--name", "odd", "--cli", "cursor"))
    assert line == f"ib new-agent: error: --cli 'cursor' is not an agent program ittybus knows; {KNOWN}"
    _nothing_made(repo, tmux_socket, "odd", rds, keys)
    task = _one_error_line(agents_ib.run("task", "add", "Do it", "--cli", "cursor"))
    assert task == f"ib task: error: --cli 'cursor' is not an agent program ittybus knows; {KNOWN}"
    default = agents_ib.run("new-agent", "do it", "--name", "odd", env={"IB_DEFAULT_CLI": "cursor"})
    assert _one_error_line(default) == (  # a setting: checked where every setting is read, with its source
        "ib new-agent: error: bad configuration: IB_DEFAULT_CLI: must be one of claude, codex, gemini "
        "(empty: claude) (got 'cursor') (set in the environment)"
    )
    _nothing_made(repo, tmux_socket, "odd", rds, keys)


def _bare_path(tmp_path: Path) -> str:
    """A PATH with git and tmux only: no agent program on it."""
    folder = tmp_path / "bare-bin"
    folder.mkdir()
    for tool in ("git", "tmux"):
        found = shutil.which(tool)
        assert found is not None
        (folder / tool).symlink_to(found)
    return str(folder)


@pytest.mark.parametrize(
    ("cli", "install"),
    [
        ("codex", "npm install -g @openai/codex@0.169.0"),
        ("gemini", "npm install -g @google/gemini-cli@0.61.0"),
    ],
)
def test_a_cli_not_installed_is_refused_before_anything_is_made(
    agents_ib: IbRunner,
    repo: Path,
    tmux_socket: str,
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
    cli: str,
    install: str,
) -> None:
    done = agents_ib.run(
        "new-agent", "do it", "--name", "absent", "--cli", cli, env={"PATH": _bare_path(tmp_path)}
    )
    line = _one_error_line(done)
    assert line.startswith(f"ib new-agent: error: {cli.capitalize()} CLI (`{cli}`) is not installed"), line
    assert line.endswith(install), line
    _nothing_made(repo, tmux_socket, "absent", rds, keys)


def test_claude_code_not_installed_says_how_to_install_it(
    agents_ib: IbRunner, repo: Path, tmux_socket: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    env = {"PATH": _bare_path(tmp_path), "IB_AGENT_COMMAND": "claude"}
    line = _one_error_line(agents_ib.run("new-agent", "do it", "--name", "absent", env=env))
    assert (
        "Claude Code (`claude`) is not installed" in line
        and "npm install -g @anthropic-ai/claude-code" in line
    )
    _nothing_made(repo, tmux_socket, "absent", rds, keys)


@pytest.mark.parametrize(
    ("command", "shape", "version"),
    [("codex", CODEX_SHAPE, (0, 169, 0)), ("gemini", GEMINI_SHAPE, (0, 61, 0))],
)
def test_the_installed_clis_report_their_tested_versions(
    command: str, shape: str, version: tuple[int, int, int]
) -> None:
    assert probe.reported_version(command, shape) == version
    assert probe.reported_version(command, "^no such shape") is None  # another program's answer


def _claude_reporting(tmp_path: Path, version: str) -> str:
    """A `claude` that says it is `version` and runs the fake agent for everything else."""
    wrapper = tmp_path / "claude"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then echo "{version} (Claude Code)"; exit 0; fi\n'
        f'exec {sys.executable} -m worker.fake.agent "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.mark.parametrize(("version", "side"), [("2.0.0", "older"), ("2.2.0", "newer")])
def test_a_version_outside_the_tested_range_warns_and_still_starts(
    agents_ib: IbRunner, tmp_path: Path, version: str, side: str
) -> None:
    env = {"IB_AGENT_COMMAND": _claude_reporting(tmp_path, version), "HOME": str(tmp_path)}
    done = agents_ib.run("new-agent", "fake: wait Here", "--name", "aged", env=env)
    assert done.returncode == 0, done.stderr
    warning = (
        f"ib new-agent: note: Claude Code {version} is {side} than the versions ittybus was tested with "
        "(2.1.78 to 2.1.332); starting it anyway. The tested one: "
        "npm install -g @anthropic-ai/claude-code@2.1.332"
    )
    assert warning in done.stderr.splitlines(), done.stderr

    def shown() -> bool:
        listed = json.loads(agents_ib.run("list", "--json", env=env).stdout)
        return any(a["id"] == "aged" and a["state"] not in ("creating", "stopped") for a in listed)

    retry_until(shown, timeout=40, what="the agent started")


def test_new_agent_and_task_add_keep_the_chosen_cli(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    done = agents_ib.run("new-agent", "fake: wait Here", "--name", "chosen", "--cli", "claude")
    assert done.returncode == 0, done.stderr
    assert rds.hget(keys.agent("chosen"), "program") == "claude"
    rows = [line.split() for line in agents_ib.run("list").stdout.splitlines()]
    assert rows[0][:4] == ["id", "state", "role", "cli"]
    assert [row[2:4] for row in rows if row[0] == "chosen"] == [["manager", "claude"]]
    assert "cli:       claude" in agents_ib.run("info", "chosen").stdout
    added = agents_ib.run("task", "add", "Port it", "--cli", "gemini")
    assert added.returncode == 0, added.stderr
    task = json.loads(agents_ib.run("task", "show", added.stdout.strip(), "--json").stdout)
    assert task["cli"] == "gemini"


def test_an_agent_for_a_task_runs_the_tasks_cli_unless_told_otherwise(
    agents_ib: IbRunner, repo: Path, tmux_socket: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    added = agents_ib.run("task", "add", "Port it", "--cli", "gemini", "--body", "fake: wait Here")
    assert added.returncode == 0, added.stderr
    task = added.stdout.strip()
    # the task's CLI is the one checked: Gemini CLI, not on this PATH
    bare = {"PATH": _bare_path(tmp_path)}
    refused = _one_error_line(agents_ib.run("new-agent", "--task", task, "--name", "porter", env=bare))
    assert refused.startswith("ib new-agent: error: Gemini CLI (`gemini`) is not installed"), refused
    _nothing_made(repo, tmux_socket, "porter", rds, keys)
    assert rds.hget(keys.task(task), "status") == "ready"  # the claim was given back
    done = agents_ib.run("new-agent", "--task", task, "--name", "porter", "--cli", "claude")
    assert done.returncode == 0, done.stderr
    assert rds.hget(keys.agent("porter"), "program") == "claude"


INSTALLS = {
    "codex": "npm install -g @openai/codex@0.169.0",
    "gemini": "npm install -g @google/gemini-cli@0.61.0",
}


@pytest.mark.parametrize("cli", INSTALLS)
def test_a_cli_under_tmp_is_refused_naming_the_path(
    agents_ib: IbRunner, repo: Path, tmux_socket: str, rds: redis.Redis, keys: Keys, tmp_path: Path, cli: str
) -> None:
    # as after `npm install --prefix /tmp/x …`: the program first on PATH lies under /tmp, which the box
    # Codex and Gemini agents run in replaces with an empty one (bwrap: execvp codex: No such file…)
    installed = shutil.which(cli)
    assert installed is not None
    under_tmp = tmp_path / "x" / "bin"
    under_tmp.mkdir(parents=True)
    (under_tmp / cli).symlink_to(installed)
    env = {"PATH": f"{under_tmp}:{_bare_path(tmp_path)}"}
    line = _one_error_line(agents_ib.run("new-agent", "do it", "--name", "boxed", "--cli", cli, env=env))
    title = f"{cli.capitalize()} CLI"
    assert line == (
        f"ib new-agent: error: {title} at {under_tmp / cli} cannot run in the agent's bubblewrap box, "
        f"whose /tmp is an empty one of its own: install it outside /tmp ({INSTALLS[cli]}) and put that "
        "first on PATH"
    )
    _nothing_made(repo, tmux_socket, "boxed", rds, keys)


@pytest.mark.parametrize("cli", [*INSTALLS, "claude"])
def test_a_program_that_is_a_broken_symlink_is_refused_naming_it(
    agents_ib: IbRunner, repo: Path, tmux_socket: str, rds: redis.Redis, keys: Keys, tmp_path: Path, cli: str
) -> None:
    bare = _bare_path(tmp_path)
    link = Path(bare) / cli
    link.symlink_to(tmp_path / "gone" / f"{cli}.js")
    env = {"PATH": bare, "IB_AGENT_COMMAND": cli}
    line = _one_error_line(agents_ib.run("new-agent", "do it", "--name", "broken", "--cli", cli, env=env))
    assert f" at {link} is a broken symlink (to {tmp_path / 'gone' / cli}.js" in line, line
    assert "reinstall it" in line
    _nothing_made(repo, tmux_socket, "broken", rds, keys)
