"""What a branch changes, as the merge queue records it for its order (Git.change_size), on real git: a
binary file counts one line, a rename both its paths, a deletion its lines, a name with control characters
comes back as it is on disk, and the target's later commits do not count."""

from __future__ import annotations

from pathlib import Path

from tests.cli import git, init_repo
from worker.git.parse import ChangeSize
from worker.git.repo import Git


def test_change_size_of_a_branch(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / "old.txt").write_text("a\nb\n")
    (repo / "gone.txt").write_text("1\n2\n3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "agent/x")
    git(repo, "mv", "old.txt", "new.txt")
    git(repo, "rm", "-q", "gone.txt")
    (repo / "logo.bin").write_bytes(b"\x00\x01\x02\x03")
    (repo / "tab\there.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "work")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main moved on\n")
    git(repo, "commit", "-qam", "later on main")

    size = Git(repo).change_size("main", "agent/x")

    assert size == ChangeSize(
        ("gone.txt", "logo.bin", "new.txt", "old.txt", "tab\there.py"), 3 + 1 + 2 + 2 + 1
    )
    assert Git(repo).change_size("main", "main") == ChangeSize()
