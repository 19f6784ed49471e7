"""Installing as a user would: build the sdist and the wheel, install the wheel into a fresh virtual
environment outside the checkout, and run the installed `ib` in a scratch repository of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

from tests.cli import init_repo

CHECKOUT = Path(__file__).resolve().parents[2]


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 60.0) -> str:
    """`args` run to success; its stdout."""
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def copy_checkout(target: Path) -> Path:
    """The tracked files as they are in the working tree, so the build never writes into the checkout."""
    listed = run(["git", "ls-files", "-z"], CHECKOUT)
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_built_wheel_installs_and_runs_ib_up_ps_down(tmp_path: Path, tmux_socket: str) -> None:
    source = copy_checkout(tmp_path / "src")
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], tmp_path, timeout=240)
    wheels = list(dist.glob("ittybus-*-py3-none-any.whl"))
    assert len(wheels) == 1 and len(list(dist.glob("ittybus-*.tar.gz"))) == 1
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
    assert {"bus/lua/task_claim.lua", "bus/py.typed", "worker/py.typed", "bot/py.typed"} <= names
    assert any(name.endswith(".data/scripts/ib") for name in names)

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    run([str(venv / "bin" / "pip"), "install", "-q", str(wheels[0])], tmp_path, timeout=240)
    ib = str(venv / "bin" / "ib")
    assert Path(ib).read_text().startswith(f"#!{venv}/bin/python")  # bin/ib's `#!python`, rewritten

    project = init_repo(tmp_path / "project")
    home = tmp_path / "home"
    # the README's second line: one link, so only `ib` of the environment goes on the person's PATH
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "ib").symlink_to(ib)
    person_path = os.environ.get("PATH", "/usr/bin:/bin")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("IB_", "TMUX", "PYTHON", "VIRTUAL_ENV"))},
        "HOME": str(home),
        "PATH": f"{home / '.local' / 'bin'}{os.pathsep}{person_path}",
        "IB_TMUX_SOCKET": tmux_socket,
        "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
        "IB_SPOOL_DIR": str(tmp_path / "spool"),
    }
    for tool in ("python3", "pip"):
        assert shutil.which(tool, path=env["PATH"]) == shutil.which(tool, path=person_path), tool
    ib = "ib"  # by name from here on, as the person runs it
    version = run([ib, "--version"], project, env)
    assert version.startswith("ib (ittybus) ") and version.strip().split()[-1][0].isdigit()
    python = str(venv / "bin" / "python")
    where = run([python, "-c", "import worker; print(worker.__file__)"], project, env)
    assert where.startswith(str(venv)), where  # the installed package, not the checkout

    try:
        up = run([ib, "up", "--detach"], project, env)
        assert "ittybus runs in the background" in up and "bus embedded" in up
        assert "worker   " in run([ib, "ps"], project, env)
        assert run([ib, "task", "add", "paint the shed"], project, env).strip() == "paint-the-shed"  # Lua
        assert run(["git", "status", "--porcelain"], project) == ""  # .ib/ excluded by `ib up` itself
        assert "/.ib/" in (project / ".git" / "info" / "exclude").read_text().split()
        assert "stopped worker" in run([ib, "down"], project, env)
    finally:
        for command in (["down"], ["bus", "stop"]):
            subprocess.run([ib, *command], cwd=project, env=env, capture_output=True, timeout=60, check=False)
