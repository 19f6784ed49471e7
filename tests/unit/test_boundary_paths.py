"""Path arguments of an agent's `ib` command: checked on the file actually opened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from worker.boundary.paths import READ, WRITE, PathOutside, confined


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    wt = tmp_path / "root" / ".ib" / "agents" / "atk" / "repo"
    wt.mkdir(parents=True)
    (wt / "body.md").write_text("the body\n")
    (tmp_path / "root" / ".ib" / "redis").mkdir()
    (tmp_path / "root" / ".ib" / "redis" / "url").write_text("redis://:secret@127.0.0.1:1/0\n")
    (tmp_path / "root" / "README.md").write_text("the person's\n")
    return wt


def test_a_file_in_the_worktree_is_read_through_its_descriptor(worktree: Path) -> None:
    opened = confined("--body-file", str(worktree / "body.md"), str(worktree), READ)
    assert opened.startswith("/proc/self/fd/")
    assert Path(opened).read_text() == "the body\n"


@pytest.mark.parametrize(
    "path",
    [
        "//{root}/.ib/redis/url",
        "{wt}/../../../redis/url",
        "{wt}/link-to-url",
        "{wt}/dir-link/url",
        "{wt}/hard-link",
        "/etc/passwd",
    ],
    ids=["double-slash", "dot-dot", "symlink", "symlinked-folder", "hard-link", "absolute"],
)
def test_reading_outside_the_worktree_is_refused(worktree: Path, path: str) -> None:
    root = worktree.parents[3]
    (worktree / "link-to-url").symlink_to(root / ".ib" / "redis" / "url")
    (worktree / "dir-link").symlink_to(root / ".ib" / "redis")
    os.link(root / ".ib" / "redis" / "url", worktree / "hard-link")
    with pytest.raises(PathOutside) as refused:
        confined("--body-file", path.format(root=root, wt=worktree), str(worktree), READ)
    assert "\n" not in str(refused.value) and "--body-file" in str(refused.value)


def test_a_symlink_swapped_in_after_the_check_cannot_redirect_the_read(worktree: Path) -> None:
    opened = confined("--body-file", str(worktree / "body.md"), str(worktree), READ)
    (worktree / "body.md").unlink()
    (worktree / "body.md").symlink_to(worktree.parents[3] / ".ib" / "redis" / "url")
    assert Path(opened).read_text() == "the body\n"  # the file checked, not what the name now leads to


@pytest.mark.parametrize(
    "path", ["{root}/x.png", "{wt}/out-link/x.png", "{wt}/png-link"], ids=["root", "folder-link", "file-link"]
)
def test_writing_outside_the_worktree_is_refused(worktree: Path, path: str) -> None:
    root = worktree.parents[3]
    (worktree / "out-link").symlink_to(root)
    (worktree / "png-link").symlink_to(root / "README.md")
    with pytest.raises(PathOutside):
        confined("--png", path.format(root=root, wt=worktree), str(worktree), WRITE)
    assert (root / "README.md").read_text() == "the person's\n"
    assert not (root / "x.png").exists()


def test_writing_in_the_worktree_goes_to_the_checked_file(worktree: Path) -> None:
    opened = confined("--png", str(worktree / "shot.png"), str(worktree), WRITE)
    Path(opened).write_bytes(b"PNG")
    assert (worktree / "shot.png").read_bytes() == b"PNG"


def test_a_fifo_does_not_hang_and_a_missing_file_is_one_line(worktree: Path) -> None:
    os.mkfifo(worktree / "pipe")
    assert confined("--body-file", str(worktree / "pipe"), str(worktree), READ).startswith("/proc/self/fd/")
    with pytest.raises(PathOutside, match=r"cannot open --body-file .*No such file"):
        confined("--body-file", str(worktree / "missing"), str(worktree), READ)
