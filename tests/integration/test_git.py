"""worker.git.repo.Git against real repositories in tmp_path: agents' worktrees and branches, what a branch
changed, rebases that conflict or are refused, and merges into the main checkout, into a branch checked out
nowhere (merge commit made beside + compare-and-swap) and into a branch checked out in another worktree."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import git, init_repo
from worker.errors import GitError, WorkerError
from worker.git import landing
from worker.git.repo import Git

AGENT = "agent/a1"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository on `main` whose `.ib/` is excluded, as ib sets it up."""
    path = init_repo(tmp_path / "repo")
    with (path / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".ib/\n")
    return path


@pytest.fixture
def g(repo: Path) -> Git:
    return Git(repo)


def agent_path(repo: Path, agent: str = "a1") -> Path:
    return repo / ".ib" / "agents" / agent / "repo"


@pytest.fixture
def agent(repo: Path, g: Git) -> Path:
    """An agent's worktree on `agent/a1`, from main."""
    path = agent_path(repo)
    g.add_worktree(path, AGENT, "main")
    return path


def commit(path: Path, name: str, text: str, message: str) -> str:
    (path / name).parent.mkdir(parents=True, exist_ok=True)
    (path / name).write_text(text)
    git(path, "add", name)
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD").strip()


def sha(path: Path, rev: str = "HEAD") -> str:
    return git(path, "rev-parse", rev).strip()


def parents(path: Path, rev: str) -> list[str]:
    return git(path, "rev-list", "--parents", "-n", "1", rev).split()[1:]


def snapshot(path: Path) -> tuple[str, str, dict[str, bytes]]:
    """HEAD, the porcelain status and every file's bytes (outside .git and .ib) of a working tree."""
    files = {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and p.relative_to(path).parts[0] not in (".git", ".ib")
    }
    return sha(path), git(path, "status", "--porcelain"), files


def git_path(path: Path, name: str) -> Path:
    return path / git(path, "rev-parse", "--git-path", name).strip()


# -- repository --------------------------------------------------------------------------------------------


def test_repository_facts(repo: Path, g: Git, agent: Path) -> None:
    assert g.current_branch() == "main"
    assert g.current_branch(agent) == AGENT
    assert g.branch_exists("main")
    assert g.branch_exists(AGENT)
    assert not g.branch_exists("agent/nope")
    assert g.head() == sha(repo)
    git(repo, "checkout", "-q", "--detach")
    assert g.current_branch() is None


# -- worktrees and branches --------------------------------------------------------------------------------


def test_add_and_remove_worktree(repo: Path, g: Git) -> None:
    path = agent_path(repo)
    g.add_worktree(path, AGENT, "main")
    assert (path / "README.md").read_text() == "test repo\n"
    listed = g.worktrees()
    assert [info.path for info in listed] == [repo.resolve(), path.resolve()]
    assert listed[1].branch == AGENT
    assert listed[1].head == sha(repo, "main")
    assert not listed[1].detached

    g.remove_worktree(path)
    assert not path.exists()
    assert [info.path for info in g.worktrees()] == [repo.resolve()]
    g.delete_branch(AGENT)
    assert not g.branch_exists(AGENT)


def test_remove_worktree_whose_folder_is_gone(repo: Path, g: Git, agent: Path) -> None:
    shutil.rmtree(agent)
    g.remove_worktree(agent)
    assert [info.path for info in g.worktrees()] == [repo.resolve()]
    g.remove_worktree(agent)  # twice is fine
    g.delete_branch(AGENT)  # no longer checked out anywhere
    assert not g.branch_exists(AGENT)


def test_remove_worktree_with_changes_needs_force(g: Git, agent: Path) -> None:
    (agent / "README.md").write_text("work in progress\n")
    with pytest.raises(GitError, match="remove it with force") as caught:
        g.remove_worktree(agent)
    assert caught.value.command[:1] == ("git",)
    assert caught.value.stderr
    assert (agent / "README.md").read_text() == "work in progress\n"
    g.remove_worktree(agent, force=True)
    assert not agent.exists()


def test_remove_refuses_what_is_not_a_linked_worktree(repo: Path, g: Git, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(GitError, match="not a linked worktree"):
        g.remove_worktree(other)
    with pytest.raises(GitError, match="not a linked worktree"):
        g.remove_worktree(repo)
    assert other.is_dir()
    assert (repo / "README.md").is_file()


def test_add_worktree_refuses_an_existing_branch(repo: Path, g: Git, agent: Path) -> None:
    with pytest.raises(GitError, match=r"already exists.*git branch -D agent/a1"):
        g.add_worktree(agent_path(repo, "a2"), AGENT, "main")
    assert not agent_path(repo, "a2").exists()


@pytest.mark.parametrize(
    ("branch", "base"),
    [("agent/bad name", "main"), ("-x", "main"), ("agent/x..y", "main"), ("agent/ok", "--orphan")],
    ids=["space", "leading-dash", "double-dot", "option-as-base"],
)
def test_add_worktree_refuses_bad_names(repo: Path, g: Git, branch: str, base: str) -> None:
    with pytest.raises(GitError):
        g.add_worktree(agent_path(repo, "bad"), branch, base)
    assert not agent_path(repo, "bad").exists()


def test_delete_unmerged_branch_needs_force(g: Git, agent: Path) -> None:
    commit(agent, "a.txt", "a\n", "agent work")
    g.remove_worktree(agent)
    with pytest.raises(GitError, match="needs force"):
        g.delete_branch(AGENT)
    g.delete_branch(AGENT, force=True)
    assert not g.branch_exists(AGENT)


# -- what a branch changed ---------------------------------------------------------------------------------


def test_ahead_diff_and_stat(repo: Path, g: Git, agent: Path) -> None:
    first = commit(agent, "src/a.py", "one\ntwo\n", "Add a")
    second = commit(agent, "README.md", "test repo\nmore\n", "Extend the readme")
    commit(repo, "main-only.txt", "later on main\n", "Main moves on")

    commits = g.ahead(AGENT, "main")
    assert [(c.sha, c.subject) for c in commits] == [(second, "Extend the readme"), (first, "Add a")]
    assert g.ahead("main", AGENT)[0].subject == "Main moves on"

    diff = g.diff("main", AGENT)
    assert "+++ b/src/a.py" in diff
    assert "+more" in diff
    assert "main-only.txt" not in diff  # three dots: what the branch changed, not what main did since
    stat = g.diff("main", AGENT, stat=True)
    assert "src/a.py" in stat
    assert "2 files changed, 3 insertions(+)" in stat
    assert g.log(AGENT, "main").splitlines() == [f"{second[:7]} Extend the readme", f"{first[:7]} Add a"]
    assert g.ahead("main", "main") == []


def test_unknown_revision_is_a_git_error(g: Git) -> None:
    with pytest.raises(GitError, match="nope"):
        g.ahead("nope", "main")
    with pytest.raises(GitError, match="not a commit"):
        g.rev_parse("nope")


# -- rebase ------------------------------------------------------------------------------------------------


def test_rebase_onto_a_moved_main(repo: Path, g: Git, agent: Path) -> None:
    commit(agent, "a.txt", "agent\n", "Agent work")
    main_tip = commit(repo, "m.txt", "main\n", "Main work")
    (agent / "scratch.txt").write_text("untracked, kept\n")

    result = g.rebase(agent, "main")

    assert result.ok
    assert result.conflicts == []
    assert result.head == sha(agent)
    assert parents(agent, "HEAD") == [main_tip]
    assert (agent / "m.txt").read_text() == "main\n"
    assert (agent / "scratch.txt").read_text() == "untracked, kept\n"
    assert g.current_branch(agent) == AGENT
    assert [c.subject for c in g.ahead(AGENT, "main")] == ["Agent work"]


def test_rebase_that_is_up_to_date(g: Git, agent: Path) -> None:
    before = sha(agent)
    assert g.rebase(agent, "main").ok
    assert sha(agent) == before


def test_rebase_conflict_leaves_the_worktree_as_it_was(repo: Path, g: Git, agent: Path) -> None:
    commit(agent, "ok.txt", "fine\n", "Agent: no conflict here")
    commit(agent, "README.md", "agent version\n", "Agent: readme")
    commit(repo, "README.md", "main version\n", "Main: readme")
    (agent / "scratch.txt").write_text("untracked\n")
    before = snapshot(agent)

    result = g.rebase(agent, "main")

    assert not result.ok
    assert result.conflicts == ["README.md"]
    assert result.head == before[0]
    assert snapshot(agent) == before
    assert g.current_branch(agent) == AGENT
    assert not g.rebase_in_progress(agent)
    assert not git_path(agent, "rebase-merge").exists()
    assert not git_path(agent, "rebase-apply").exists()


@pytest.mark.parametrize("staged", [False, True], ids=["unstaged", "staged"])
def test_rebase_refuses_uncommitted_changes(repo: Path, g: Git, agent: Path, staged: bool) -> None:
    commit(repo, "m.txt", "main\n", "Main work")
    (agent / "README.md").write_text("not committed yet\n")
    if staged:
        git(agent, "add", "README.md")
    before = snapshot(agent)

    with pytest.raises(GitError, match=r"uncommitted changes \(README.md\).*[Cc]ommit or stash them first"):
        g.rebase(agent, "main")

    assert snapshot(agent) == before
    assert (agent / "README.md").read_text() == "not committed yet\n"


def test_rebase_onto_nothing_is_an_error(g: Git, agent: Path) -> None:
    before = snapshot(agent)
    with pytest.raises(GitError):
        g.rebase(agent, "no-such-branch")
    assert snapshot(agent) == before
    assert not g.rebase_in_progress(agent)


# -- merge -------------------------------------------------------------------------------------------------


def test_merge_into_the_checked_out_main(repo: Path, g: Git, agent: Path) -> None:
    tip = commit(agent, "a.txt", "agent\n", "Agent work")
    old = sha(repo)
    (repo / "notes.txt").write_text("the person's untracked notes\n")

    result = g.merge_into("main", AGENT, "Merge agent a1")

    assert result.ok
    assert result.conflicts == []
    assert (repo / "a.txt").read_text() == "agent\n"  # the checkout's files moved with its branch
    assert [c.sha for c in result.commits] == [tip]
    assert result.sha == sha(repo, "main") == sha(repo)
    assert parents(repo, "main") == [old, tip]
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "Merge agent a1"
    assert (repo / "a.txt").read_text() == "agent\n"
    assert (repo / "notes.txt").read_text() == "the person's untracked notes\n"
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"


def test_merge_refuses_a_dirty_main_checkout(repo: Path, g: Git, agent: Path) -> None:
    commit(agent, "a.txt", "agent\n", "Agent work")
    (repo / "README.md").write_text("the person's edit\n")
    (repo / "staged.txt").write_text("staged by the person\n")
    git(repo, "add", "staged.txt")
    before = snapshot(repo)

    with pytest.raises(GitError, match=r"main checkout .* has uncommitted changes") as caught:
        g.merge_into("main", AGENT, "Merge agent a1")

    assert "commit or stash them, then merge again" in str(caught.value)
    assert isinstance(caught.value, WorkerError)
    assert snapshot(repo) == before
    assert (repo / "README.md").read_text() == "the person's edit\n"


def test_merge_into_a_branch_checked_out_nowhere(repo: Path, g: Git, agent: Path) -> None:
    git(repo, "branch", "release")
    old_release = sha(repo, "release")
    main_before = snapshot(repo)
    tip = commit(agent, "a.txt", "agent\n", "Agent work")

    result = g.merge_into("release", AGENT, "Merge agent a1 into release")

    assert result.ok
    assert result.sha == sha(repo, "release")
    assert parents(repo, "release") == [old_release, tip]
    assert git(repo, "show", "release:a.txt") == "agent\n"
    assert snapshot(repo) == main_before  # the main checkout was not touched
    assert [info.path for info in g.worktrees()] == [repo.resolve(), agent.resolve()]
    reflog = git(repo, "reflog", "-1", "--format=%gs", "release")
    assert "ittybus: merge agent/a1 into release" in reflog


def test_merge_into_a_branch_that_moves_meanwhile_is_refused(repo: Path, g: Git, agent: Path) -> None:
    """The merge commit is made first, the branch moved after with its old tip as the guard: another
    writer's move in between wins and nothing of the merge lands."""
    git(repo, "branch", "release")
    old = sha(repo, "release")
    new, conflicts = g.merge_commit(old, commit(agent, "a.txt", "agent\n", "Agent work"), "Merge a1")
    assert new is not None and conflicts == []
    moved_to = commit(repo, "m.txt", "main\n", "Main work")
    git(repo, "update-ref", "refs/heads/release", moved_to)  # the other writer

    with pytest.raises(GitError, match="release moved while agent/a1 was being merged into it"):
        landing.move_unchecked_out(g, "release", old, new, AGENT)

    assert sha(repo, "release") == moved_to  # the other writer's move stands


def test_a_checked_out_branch_that_moved_meanwhile_is_refused_and_left_as_it_is(
    repo: Path, g: Git, agent: Path
) -> None:
    old = sha(repo, "main")
    new, _conflicts = g.merge_commit(old, commit(agent, "a.txt", "agent\n", "Agent work"), "Merge a1")
    assert new is not None
    moved_to = commit(repo, "m.txt", "main\n", "Main work")
    before = snapshot(repo)

    with pytest.raises(GitError, match="main moved while agent/a1 was being merged into it"):
        landing.move(g, landing.Journal("main", AGENT, old, new, str(repo)))

    assert sha(repo, "main") == moved_to and snapshot(repo) == before
    assert not git_path(repo, landing.JOURNAL).exists()


def test_merge_conflict_in_the_main_checkout(repo: Path, g: Git, agent: Path) -> None:
    commit(agent, "README.md", "agent version\n", "Agent: readme")
    commit(agent, "other.txt", "fine\n", "Agent: other")
    commit(repo, "README.md", "main version\n", "Main: readme")
    before = snapshot(repo)

    result = g.merge_into("main", AGENT, "Merge agent a1")

    assert not result.ok
    assert result.sha is None
    assert result.conflicts == ["README.md"]
    assert len(result.commits) == 2
    assert git(repo, "status", "--porcelain") == ""
    assert not g.merge_in_progress()
    assert not git_path(repo, "MERGE_HEAD").exists()
    assert snapshot(repo) == before


def test_merge_conflict_into_a_branch_checked_out_nowhere(repo: Path, g: Git, agent: Path) -> None:
    git(repo, "branch", "release")
    commit(agent, "README.md", "agent version\n", "Agent: readme")
    git(repo, "checkout", "-q", "release")
    release_tip = commit(repo, "README.md", "release version\n", "Release: readme")
    git(repo, "checkout", "-q", "main")
    before = snapshot(repo)

    result = g.merge_into("release", AGENT, "Merge agent a1 into release")

    assert not result.ok
    assert result.conflicts == ["README.md"]
    assert sha(repo, "release") == release_tip
    assert snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == ""
    assert [info.path for info in g.worktrees()] == [repo.resolve(), agent.resolve()]


def test_merge_into_a_branch_checked_out_in_another_worktree(repo: Path, g: Git, agent: Path) -> None:
    manager = agent_path(repo, "m1")
    g.add_worktree(manager, "agent/m1", "main")
    old = sha(manager)
    tip = commit(agent, "a.txt", "agent\n", "Worker work")

    result = g.merge_into("agent/m1", AGENT, "Merge worker a1 into manager m1")

    assert result.ok
    assert sha(manager) == result.sha == sha(repo, "agent/m1")
    assert parents(manager, "HEAD") == [old, tip]
    assert (manager / "a.txt").read_text() == "agent\n"
    assert git(manager, "status", "--porcelain") == ""


def test_merge_refuses_a_dirty_worktree_holding_the_target(repo: Path, g: Git, agent: Path) -> None:
    manager = agent_path(repo, "m1")
    g.add_worktree(manager, "agent/m1", "main")
    commit(agent, "a.txt", "agent\n", "Worker work")
    (manager / "a.txt").write_text("manager's unfinished edit of the same file\n")
    before = snapshot(manager)

    with pytest.raises(GitError, match=r"worktree .* where agent/m1 is checked out, has uncommitted changes"):
        g.merge_into("agent/m1", AGENT, "Merge")

    assert snapshot(manager) == before


def test_merge_keeps_unstaged_edits_of_files_the_branch_does_not_touch(
    repo: Path, g: Git, agent: Path
) -> None:
    """The status block ittybus keeps in CLAUDE.md, or the person's own edits, must not block a merge."""
    commit(agent, "a.txt", "agent\n", "Agent work")
    (repo / "README.md").write_text("the person's edit, not committed\n")

    result = g.merge_into("main", AGENT, "Merge agent a1")

    assert result.ok
    assert (repo / "a.txt").read_text() == "agent\n"
    assert (repo / "README.md").read_text() == "the person's edit, not committed\n"
    assert git(repo, "status", "--porcelain") == " M README.md\n"


def test_merge_refuses_a_target_that_is_being_rebased(repo: Path, g: Git, agent: Path) -> None:
    commit(agent, "README.md", "agent version\n", "Agent: readme")
    commit(repo, "README.md", "main version\n", "Main: readme")
    subprocess.run(
        ["git", "rebase", "main"], cwd=agent, capture_output=True, check=False
    )  # stops on a conflict
    other = agent_path(repo, "a2")
    g.add_worktree(other, "agent/a2", "main")
    commit(other, "b.txt", "b\n", "Other work")
    before = sha(repo, AGENT)

    with pytest.raises(GitError, match="being rebased"):
        g.merge_into(AGENT, "agent/a2", "Merge")

    assert sha(repo, AGENT) == before
    assert g.rebase_in_progress(agent)
    git(agent, "rebase", "--abort")


def test_merge_with_nothing_to_merge(repo: Path, g: Git, agent: Path) -> None:
    old = sha(repo)
    result = g.merge_into("main", AGENT, "Merge")
    assert result.ok
    assert result.sha == old == sha(repo)
    assert result.commits == []


def test_merge_of_a_missing_branch(g: Git) -> None:
    with pytest.raises(GitError, match="no branch agent/ghost"):
        g.merge_into("main", "agent/ghost", "Merge")


@pytest.mark.parametrize("checked_out", [True, False], ids=["in-main-checkout", "in-temporary-worktree"])
def test_commits_without_any_identity_use_ittybus(
    repo: Path, g: Git, agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, checked_out: bool
) -> None:
    commit(agent, "a.txt", "agent\n", "Agent work")
    commit(repo, "m.txt", "main\n", "Main work")
    if not checked_out:
        git(repo, "branch", "release")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for variable in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "EMAIL",
        "GIT_CONFIG_GLOBAL",
    ):
        monkeypatch.delenv(variable, raising=False)
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")

    assert g.rebase(agent, "main").ok  # rebasing rewrites commits: it needs a committer too
    target = "main" if checked_out else "release"
    result = g.merge_into(target, AGENT, "Merge")

    assert result.ok
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", target).strip() == (
        "ittybus <ittybus@localhost>|ittybus <ittybus@localhost>"
    )


def test_commits_use_the_repository_identity(repo: Path, g: Git, agent: Path) -> None:
    commit(agent, "a.txt", "agent\n", "Agent work")
    result = g.merge_into("main", AGENT, "Merge")
    assert result.ok
    assert git(repo, "log", "-1", "--format=%an <%ae>", "main").strip() == "Test <test@example.com>"


# -- failures ----------------------------------------------------------------------------------------------


def test_errors_name_the_folder(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(GitError, match="does not exist"):
        Git(missing).head()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(GitError, match=f"failed in {re.escape(str(empty))} .*not a git repository"):
        Git(empty).status_short()
