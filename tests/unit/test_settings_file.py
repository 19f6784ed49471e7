"""The one reader of settings files: a regular file's text, nothing for no file, `/dev/null` as empty, and
one line naming the file and why for a folder, a device, a file over the cap, a binary or non-UTF-8 one.
(A FIFO and a link to /dev/zero: tests/integration/test_bad_settings_files.py, under a timeout.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bus.errors import ConfigError
from bus.settings.settings_file import MAX_BYTES, read_text


def _refusal(path: Path, cap: int = MAX_BYTES) -> str:
    with pytest.raises(ConfigError) as caught:
        read_text(str(path), cap)
    said = str(caught.value)
    assert "\n" not in said and said.startswith(str(path))
    return said


def test_a_regular_file_is_read_with_universal_newlines(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_bytes(b"A=1\r\nB=\xc3\xa9\rC=3\n")
    assert read_text(str(path)) == "A=1\nB=é\nC=3\n"


def test_no_file_and_a_dangling_link_are_nothing(tmp_path: Path) -> None:
    assert read_text(str(tmp_path / "absent")) is None
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    assert read_text(str(tmp_path / "link")) is None


def test_a_link_to_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("A=1\n")
    (tmp_path / ".env").symlink_to(tmp_path / "real")
    assert read_text(str(tmp_path / ".env")) == "A=1\n"


def test_dev_null_in_its_place_reads_as_empty(tmp_path: Path) -> None:
    """How an agent's box hides the repository's `.env` (a bind of /dev/null): no settings, no refusal."""
    (tmp_path / ".env").symlink_to(os.devnull)
    assert read_text(str(tmp_path / ".env")) == ""


def test_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").mkdir()
    assert "is a folder, not a regular file" in _refusal(tmp_path / ".env")


def test_a_device_is_refused_naming_where_the_link_leads(tmp_path: Path) -> None:
    (tmp_path / ".env").symlink_to("/dev/urandom")
    said = _refusal(tmp_path / ".env")
    assert said.startswith(f"{tmp_path / '.env'} (a link to /dev/urandom) is a character device")


@pytest.mark.parametrize(
    ("size", "refused"),
    [(100, None), (101, "101 bytes"), (10_240, "10.0 KiB")],
    ids=["at-cap", "one-over", "far-over"],
)
def test_the_cap(tmp_path: Path, size: int, refused: str | None) -> None:
    path = tmp_path / ".env"
    path.write_text("a" * size)
    if refused:
        assert f"is {refused}, over the 100 bytes ittybus reads" in _refusal(path, cap=100)
    else:
        assert read_text(str(path), cap=100) == "a" * size


def test_the_default_cap_is_one_mebibyte(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("a" * (MAX_BYTES + 1))
    assert "is 1.0 MiB, over the 1 MiB ittybus reads of a settings file" in _refusal(path)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"A=1\n\x00", "is binary (a NUL byte at byte 4), not text"),
        (b"A=\xff\n", "is not UTF-8 text (byte 2 is 0xff)"),
        (b"A=\xc3", "is not UTF-8 text (byte 2 is 0xc3)"),
    ],
    ids=["nul", "bad-byte", "cut-sequence"],
)
def test_what_is_not_text_is_refused(tmp_path: Path, data: bytes, says: str) -> None:
    path = tmp_path / ".env"
    path.write_bytes(data)
    assert says in _refusal(path)
