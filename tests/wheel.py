"""ittybus as a user installs it: the sdist and the wheel built from the tracked files, the wheel installed
with its `web` extra into a fresh virtual environment outside the checkout. Built once per test run and
shared by the tests that run the installed `ib` (a build and an install take 60 to 250 s on two busy
cores): the first test process to need it builds it under a file lock, the others wait for it and reuse it.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
BUILD_TIMEOUT = 480.0  # seconds for the build, and again for the install: 250 s together were seen at load 20
HIDDEN = ("IB_", "TMUX", "PYTHON", "VIRTUAL_ENV")  # what of this process the installed `ib` must not see


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 60.0) -> str:
    """`args` run to success; its stdout."""
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Installed:
    """The built distributions in `dist` and the virtual environment `venv` the wheel went into."""

    dist: Path
    venv: Path

    @property
    def ib(self) -> str:
        return str(self.venv / "bin" / "ib")

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def runs(self, pid: int) -> bool:
        """Whether process `pid` is this environment's `ib`, run by the python its `#!` line names (the
        venv's, as pip wrote it)."""
        interpreter = Path(self.ib).read_text().splitlines()[0].removeprefix("#!")
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        return interpreter.startswith(self.python) and argv[:2] == [interpreter.encode(), self.ib.encode()]


def copy_checkout(target: Path) -> Path:
    """The tracked files as they are in the working tree, so the build never writes into the checkout."""
    listed = run(["git", "ls-files", "-z"], CHECKOUT)
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def build_and_install(folder: Path) -> Installed:
    """Build the sdist and the wheel of a copy of the checkout, then install the wheel with its `web` extra
    (its dependencies from the package index) into a new virtual environment; all in `folder`."""
    source = copy_checkout(folder / "src")
    built = Installed(folder / "dist", folder / "venv")
    build = [sys.executable, "-m", "build", "--outdir", str(built.dist), str(source)]
    run(build, folder, timeout=BUILD_TIMEOUT)
    wheels = list(built.dist.glob("ittybus-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    run([sys.executable, "-m", "venv", str(built.venv)], folder)
    pip = str(built.venv / "bin" / "pip")
    run([pip, "install", "-q", f"{wheels[0]}[web]"], folder, timeout=BUILD_TIMEOUT)
    return built


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Held by one process of the test run at a time (the lock goes with the process, however it ends)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def installed_once(folder: Path) -> Installed:
    """The wheel built and installed in `folder`, a folder every process of the test run shares: by this
    process if none did yet. A failed build fails every test that needs it with the first one's reason,
    rather than building again."""
    folder.mkdir(parents=True, exist_ok=True)
    done, failed = folder / "installed", folder / "failed.txt"
    with _locked(folder / "lock"):
        if failed.exists():
            pytest.fail(f"building or installing the wheel failed in another test:\n{failed.read_text()}")
        if done.exists():
            return Installed(folder / "dist", folder / "venv")
        try:
            built = build_and_install(folder)
        except (AssertionError, subprocess.TimeoutExpired) as e:
            failed.write_text(str(e))
            raise
        done.touch()
        return built


__all__ = ["CHECKOUT", "HIDDEN", "Installed", "installed_once", "run"]
