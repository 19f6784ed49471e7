"""Installing as a user would: the sdist and the wheel built, the wheel installed into a fresh virtual
environment outside the checkout (tests/wheel.py, once per test run), and the installed `ib` run in a scratch
repository of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.cli import init_repo
from tests.wheel import HIDDEN, Installed, run


@pytest.mark.slow
@pytest.mark.timeout(720)  # a hang guard: building and installing the wheel (tests/wheel.py) took 250 s
def test_the_built_wheel_installs_and_runs_ib_up_ps_down(
    installed_wheel: Installed, tmp_path: Path, tmux_socket: str
) -> None:
    dist, venv = installed_wheel.dist, installed_wheel.venv
    wheels = list(dist.glob("ittybus-*-py3-none-any.whl"))
    assert len(wheels) == 1 and len(list(dist.glob("ittybus-*.tar.gz"))) == 1
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
    assert {"bus/lua/task_claim.lua", "bus/py.typed", "worker/py.typed", "bot/py.typed"} <= names
    page = {
        "web/py.typed",
        "web/templates/page.html",
        "web/static/htmx.min.js",
        "web/static/htmx.LICENSE.txt",
    }
    assert (
        page | {"web/static/page.js", "web/static/manifest.webmanifest", "web/static/icon-512.png"} <= names
    )
    assert any(name.endswith(".data/scripts/ib") for name in names)

    ib = installed_wheel.ib
    assert Path(ib).read_text().startswith(f"#!{venv}/bin/python")  # bin/ib's `#!python`, rewritten

    project = init_repo(tmp_path / "project")
    home = tmp_path / "home"
    # the README's second line: one link, so only `ib` of the environment goes on the person's PATH
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "ib").symlink_to(ib)
    person_path = os.environ.get("PATH", "/usr/bin:/bin")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(HIDDEN)},
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
    where = run([installed_wheel.python, "-c", "import worker; print(worker.__file__)"], project, env)
    assert where.startswith(str(venv)), where  # the installed package, not the checkout

    try:
        up = run([ib, "up", "--detach"], project, env)
        assert "ittybus runs in the background" in up and "bus embedded" in up
        assert "worker   " in run([ib, "ps"], project, env)
        _the_page_is_served(ib, project, env)
        assert run([ib, "task", "add", "paint the shed"], project, env).strip() == "paint-the-shed"  # Lua
        assert run(["git", "status", "--porcelain"], project) == ""  # .ib/ excluded by `ib up` itself
        assert "/.ib/" in (project / ".git" / "info" / "exclude").read_text().split()
        assert "stopped worker" in run([ib, "down"], project, env)
    finally:
        for command in (["down"], ["bus", "stop"]):
            subprocess.run([ib, *command], cwd=project, env=env, capture_output=True, timeout=60, check=False)


def _the_page_is_served(ib: str, project: Path, env: dict[str, str]) -> None:
    """`ib web` of the installed wheel (with its `web` extra) serves the page, its script and htmx."""
    web = subprocess.Popen([ib, "web"], cwd=project, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert web.stdout is not None
        address = web.stdout.readline().strip()
        assert address.startswith("http://127.0.0.1:"), address
        with httpx.Client(follow_redirects=True, timeout=30) as browser:
            page = browser.get(address)
            assert page.status_code == 200 and "Waits on you" in page.text
            base = address.split("/?", maxsplit=1)[0]
            assert browser.get(base + "/static/htmx.min.js").status_code == 200
            assert browser.get(base + "/static/page.js").status_code == 200
    finally:
        web.terminate()
        web.wait(30)
