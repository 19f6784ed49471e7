"""`ib` run from a person's own linked git worktree (`git worktree add`): that checkout is the root,
its agents live under its own `.ib/`, and `.ib/` is excluded through the main checkout's info/exclude,
which git reads for every worktree."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.settings.repo_paths import ensure_state_dir, main_checkout, repo_root
from tests.cli import IbRunner, git
from worker.programs.claude.sandbox import sandbox_settings
from worker.programs.confinement import Confinement


@pytest.fixture
def linked(repo: Path, tmp_path: Path) -> Path:
    path = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(path))
    return path


def test_a_linked_worktree_is_a_root_of_its_own(repo: Path, linked: Path) -> None:
    (linked / "src").mkdir()
    assert repo_root(str(linked / "src")) == str(linked)
    assert repo_root(str(repo)) == str(repo)
    assert repo_root(str(linked / ".ib" / "agents" / "a1" / "repo" / "x")) == str(linked)
    assert main_checkout(str(linked)) == str(repo) and main_checkout(str(repo)) == str(repo)


def test_the_state_folder_of_a_linked_worktree_stays_out_of_git_status(repo: Path, linked: Path) -> None:
    (Path(ensure_state_dir(str(linked))) / "junk").write_text("x")
    assert git(linked, "status", "--porcelain") == ""
    assert "/.ib/" in (repo / ".git" / "info" / "exclude").read_text().split()
    ensure_state_dir(str(linked))  # a second time adds no second line
    assert (repo / ".git" / "info" / "exclude").read_text().split().count("/.ib/") == 1


@pytest.mark.parametrize(
    "content",
    ["", "not a pointer\n", "gitdir: /nonexistent/place\n", "\udcff garbage"],
    ids=["empty", "no-gitdir-line", "gone-target", "undecodable"],
)
def test_a_dot_git_file_that_points_nowhere_is_no_root(tmp_path: Path, content: str) -> None:
    top = tmp_path / "odd"
    top.mkdir()
    (top / ".git").write_bytes(content.encode("utf-8", "surrogateescape"))
    assert repo_root(str(top)) is None


def test_an_agent_spawned_from_a_linked_worktree_works_there(agents_ib: IbRunner, linked: Path) -> None:
    done = agents_ib.run("new-agent", "Do a thing.\nfake: wait", "--name", "side", cwd=linked)
    assert done.returncode == 0, done.stderr
    worktree = linked / ".ib" / "agents" / "side" / "repo"
    assert (worktree / "README.md").is_file()
    assert git(worktree, "rev-parse", "--abbrev-ref", "HEAD").strip() != "feature"
    assert git(linked, "status", "--porcelain") == ""
    listed = agents_ib.run("list", cwd=linked)
    assert listed.returncode == 0 and "side" in listed.stdout, listed.stderr
    assert agents_ib.run("kill", "side", "--force", cwd=linked).returncode == 0


def test_the_sandbox_keeps_both_git_folders_of_a_linked_root_read_only(repo: Path, linked: Path) -> None:
    wt = linked / ".ib" / "agents" / "a1" / "repo"
    confinement = Confinement(str(wt), str(linked), ["main"], "/venv/bin/ib")
    filesystem = sandbox_settings(confinement, available=True)["filesystem"]
    assert isinstance(filesystem, dict)
    common = repo / ".git"
    own = common / "worktrees" / "feature"
    read_only = filesystem["denyWrite"]
    for path in (own / "HEAD", own / "index", common / "HEAD", common / "config", common / "refs/heads/main"):
        assert str(path) in read_only
    assert len(read_only) == len(set(read_only))
