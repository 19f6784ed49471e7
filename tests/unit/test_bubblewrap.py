"""The bubblewrap box's command line where it depends on what exists: the repository's `.env` hidden only
when there is one (bwrap cannot make a file to mount on in a read-only repository), the repository in
sight read-only even under /tmp, a PID namespace of the box's own, and /proc passed on as it is for a
program that nests its own sandbox."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from worker.programs.bubblewrap import box
from worker.programs.confinement import Confinement


def _confinement(root: Path) -> Confinement:
    own = root / ".ib" / "agents" / "a1"
    return Confinement(str(own / "repo"), str(root), (), "/opt/ib", git_dir=str(own / "git"))


def _pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_a_repository_s_env_is_hidden_after_the_repository_is_bound(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("IB_TELEGRAM_TOKEN=x\n")
    args = box(_confinement(tmp_path), [], "/nonexistent-home", ["true"])
    at = args.index(str(tmp_path / ".env"))
    assert args[at - 2 : at] == ["--ro-bind", "/dev/null"]
    assert args.index(str(tmp_path)) < at < args.index("--")
    assert args.index("/tmp") < args.index(str(tmp_path))  # the private /tmp first, the repository over it


def test_without_an_env_file_nothing_is_mounted_over_one(tmp_path: Path) -> None:
    args = box(_confinement(tmp_path), [], "/nonexistent-home", ["true"])
    assert str(tmp_path / ".env") not in args


def test_the_box_has_a_pid_namespace_and_a_proc_of_its_own(tmp_path: Path) -> None:
    args = box(_confinement(tmp_path), [], "/nonexistent-home", ["true"])
    assert "--unshare-pid" in args  # the person's other processes (the worker, tmux) out of sight
    assert "/proc" in _pairs(args, "--proc") and "/proc" not in _pairs(args, "--bind")


def test_kept_files_show_again_inside_a_hidden_place(tmp_path: Path) -> None:
    person = tmp_path / "codex"
    person.mkdir()
    login = str(person / "auth.json")
    args = box(_confinement(tmp_path), [], "/nonexistent-home", ["true"], [str(person)], [login])
    assert str(person) in _pairs(args, "--tmpfs")
    assert args.index(str(person)) < args.index(login) < args.index("--")


def test_an_ittybus_installed_under_tmp_stays_in_sight_of_the_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The box's /tmp is its own: a virtual environment under the machine's /tmp (a checkout there, a
    throw-away install) is bound back, read-only, or the program's hooks find no `ib` (exit 127)."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed (tests/run.sh installs it)")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "ib").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "prefix", str(venv))
    c = _confinement(tmp_path)
    for folder in (c.worktree, c.git_dir):
        Path(folder).mkdir(parents=True)
    args = box(c, [], "/nonexistent-home", ["sh", "-c", f"test -f {venv}/bin/ib && ! touch {venv}/bin/x"])
    assert _pairs(args, "--ro-bind").count(str(venv)) == 1
    assert subprocess.run(args, check=False, capture_output=True, timeout=30).returncode == 0
