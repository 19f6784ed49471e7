"""The sandbox and read-block sections of an agent's settings.json, and `ib info`'s sandbox line."""

from __future__ import annotations

import json
from pathlib import Path

from worker.programs.claude.sandbox import permission_settings, sandbox_line, sandbox_settings
from worker.programs.confinement import Confinement


def _repo(tmp_path: Path) -> Path:
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    for name in ("HEAD", "index", "config"):
        (git / name).write_text("x")
    (git / "refs" / "heads" / "main").write_text("0" * 40)
    return tmp_path / "repo"


def test_a_worktree_agent_gets_its_worktree_and_nothing_else(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    wt = root / ".ib" / "agents" / "a1" / "repo"
    got = sandbox_settings(Confinement(str(wt), str(root), ["main", "gone"], "/venv/bin/ib"), available=True)
    assert got["enabled"] is True and got["failIfUnavailable"] is True
    assert got["autoAllowBashIfSandboxed"] is True and got["allowUnsandboxedCommands"] is False
    assert got["excludedCommands"] == ["ib:*", "/venv/bin/ib:*"]
    fs = got["filesystem"]
    assert isinstance(fs, dict)
    assert fs["allowRead"] == [str(wt)]
    assert {str(root / ".ib"), str(root / ".env"), "~/.ssh", "~/.aws"} <= set(fs["denyRead"])
    git = root / ".git"
    # only paths that exist: a missing packed-refs or branch would get an unreadable stand-in
    assert fs["denyWrite"] == [
        str(git / "HEAD"),
        str(git / "index"),
        str(git / "config"),
        str(git / "refs/heads/main"),
    ]
    assert "allowWrite" not in fs  # never /tmp: a repository below it would become writable
    hidden = [v["name"] for v in got["credentials"]["envVars"]]  # type: ignore[index]
    assert "ANTHROPIC_API_KEY" in hidden and "IB_REDIS_URL" in hidden


def test_an_agent_with_its_own_repository_writes_none_of_the_person_s_git(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    folder = root / ".ib" / "agents" / "a1"
    wt, own, bin_, cache = folder / "repo", folder / "git", folder / "bin", folder / "cache"
    (own / "hooks").mkdir(parents=True)
    (own / "info").mkdir()
    (own / "config").write_text("x")
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {own}\n")
    confinement = Confinement(
        str(wt), str(root), [], "/venv/bin/ib", git_dir=str(own), bin=str(bin_), cache=str(cache)
    )
    fs = sandbox_settings(confinement, available=True)["filesystem"]
    assert isinstance(fs, dict)
    assert fs["denyWrite"] == [
        str(root / ".git"),  # whole: objects, refs, info/, packed-refs, config, hooks
        str(own / "config"),  # what the worker's own git commands there would obey
        str(own / "hooks"),
        str(own / "info"),
        str(wt / ".git"),  # which repository the work tree names
    ]
    assert fs["allowWrite"] == [str(own), str(cache)]  # the cache: npm's (~/.npm is read-only)
    assert fs["allowRead"] == [str(wt), str(own), str(bin_), str(cache)]


def test_an_agent_without_worktree_reads_no_state_folder(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    got = sandbox_settings(Confinement(str(root), str(root), [], "/venv/bin/ib"), available=True)
    fs = got["filesystem"]
    assert isinstance(fs, dict) and "allowRead" not in fs and str(root / ".ib") in fs["denyRead"]


def test_an_agent_without_worktree_writes_its_own_cache_and_reads_its_bin(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    folder = root / ".ib" / "agents" / "a1"
    bin_, cache = str(folder / "bin"), str(folder / "cache")
    confinement = Confinement(str(root), str(root), [], "/ib", bin=bin_, cache=cache)
    fs = sandbox_settings(confinement, available=True)["filesystem"]
    assert isinstance(fs, dict)
    assert fs["allowWrite"] == [cache] and fs["allowRead"] == [bin_, cache]


def test_no_sandbox_here_means_off_and_said_in_info(tmp_path: Path) -> None:
    assert sandbox_settings(Confinement("/w", "/r", [], "/ib"), available=False) == {"enabled": False}
    off = tmp_path / "off.json"
    off.write_text(json.dumps({"sandbox": {"enabled": False}}))
    assert sandbox_line(off).startswith("sandbox:   none (")
    on = tmp_path / "on.json"
    on.write_text(json.dumps({"sandbox": {"enabled": True}}))
    assert sandbox_line(on).startswith("sandbox:   on")
    assert sandbox_line(tmp_path / "missing.json").startswith("sandbox:   none (")


def test_file_tools_and_mentions_read_only_the_worktree() -> None:
    assert permission_settings() == {"blockFileToolReadsOutsideWorkingDirectories": True}
