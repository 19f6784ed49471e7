"""Writing the status block to a real CLAUDE.md: atomic replace, no write when nothing changed, the file's
mode and symlink kept, and a clear `StatusFileError` for a read-only file or folder, the file left intact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.errors import StatusFileError, WorkerError
from worker.frontends.claude_md import write_if_changed
from worker.frontends.status_block import read_block, splice

BLOCK = '{\n  "last_updated": "2026-01-11T15:30:00Z",\n  "root_agents": [],\n  "messages": []\n}'
OTHER_BLOCK = BLOCK.replace('"messages": []', '"messages": [{"id": "m1"}]')
ORIGINAL = "# Project\r\n\r\nNotes — ünïcode 🤖\r\n<ittybus>\r\ndocs\r\n</ittybus>".encode()


@pytest.fixture
def claude_md(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "CLAUDE.md"
    path.write_bytes(ORIGINAL)
    yield path
    for item in (tmp_path, path):  # let pytest clean up what a test made read-only
        if item.exists():
            item.chmod(0o755 if item.is_dir() else 0o644)


def test_writes_the_block_atomically_keeping_the_mode(claude_md: Path) -> None:
    claude_md.chmod(0o640)
    inode = claude_md.stat().st_ino
    assert write_if_changed(claude_md, BLOCK) is True
    assert claude_md.read_bytes() == splice(ORIGINAL, BLOCK)
    assert claude_md.stat().st_mode & 0o777 == 0o640
    assert claude_md.stat().st_ino != inode  # a new file took the old one's place
    assert sorted(p.name for p in claude_md.parent.iterdir()) == ["CLAUDE.md"]


def test_unchanged_block_writes_nothing(claude_md: Path) -> None:
    write_if_changed(claude_md, BLOCK)
    before = claude_md.stat()
    assert write_if_changed(claude_md, BLOCK) is False
    after = claude_md.stat()
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)


def test_a_changed_block_replaces_the_old_one_and_keeps_the_persons_edits(claude_md: Path) -> None:
    write_if_changed(claude_md, BLOCK)
    edited = claude_md.read_bytes().replace(b"docs\r\n", b"docs\r\nmy note\r\n") + b"\r\ntail"
    claude_md.write_bytes(edited)
    assert write_if_changed(claude_md, OTHER_BLOCK) is True
    assert claude_md.read_bytes() == splice(edited, OTHER_BLOCK)
    assert read_block(claude_md.read_bytes()) == OTHER_BLOCK.replace("\n", "\r\n")


def test_a_missing_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    assert write_if_changed(path, BLOCK) is True
    assert path.read_bytes() == splice(b"", BLOCK)


def test_a_symlinked_file_stays_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    target.write_bytes(b"# Agents\n")
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(target.name)
    assert write_if_changed(link, BLOCK) is True
    assert link.is_symlink()
    assert target.read_bytes() == splice(b"# Agents\n", BLOCK)


def test_read_only_file_is_refused_and_left_intact(claude_md: Path) -> None:
    claude_md.chmod(0o444)
    with pytest.raises(StatusFileError) as caught:
        write_if_changed(claude_md, BLOCK)
    message = str(caught.value)
    assert str(claude_md) in message
    assert "read-only" in message
    assert f"chmod u+w {claude_md}" in message
    assert claude_md.read_bytes() == ORIGINAL
    assert sorted(p.name for p in claude_md.parent.iterdir()) == ["CLAUDE.md"]


def test_read_only_folder_is_refused_and_file_left_intact(claude_md: Path) -> None:
    claude_md.parent.chmod(0o555)
    with pytest.raises(StatusFileError, match=r"folder .* is read-only") as caught:
        write_if_changed(claude_md, BLOCK)
    assert str(claude_md.parent) in str(caught.value)
    assert claude_md.read_bytes() == ORIGINAL


def test_status_file_error_is_a_worker_error() -> None:
    assert issubclass(StatusFileError, WorkerError)


def test_a_file_that_needs_no_change_is_not_touched_even_when_read_only(claude_md: Path) -> None:
    write_if_changed(claude_md, BLOCK)
    claude_md.chmod(0o444)
    assert write_if_changed(claude_md, BLOCK) is False
