"""Stopping with the bus gone: `ib nuke` finds the agents by their tmux sessions, `ib down` and `ib bus stop`
warn about the agents that keep running, and `ib down --all` stops everything. Fake agents on the test's
own tmux server, the repository's embedded bus."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import Embedded
from tests.cli import IbRunner


@pytest.fixture
def local(agents_ib: IbRunner, repo: Path) -> Iterator[IbRunner]:
    """`ib` with fake agents on the repository's embedded bus (no IB_REDIS_URL)."""
    runner = IbRunner(repo, {k: v for k, v in agents_ib.env.items() if k != "IB_REDIS_URL"})
    assert runner.run("bus", "start").returncode == 0  # only `ib up` or `ib bus start` makes a bus
    yield runner
    runner.run("down", timeout=60)
    Embedded(str(repo)).stop()


def sessions(socket: str) -> list[str]:
    listed = subprocess.run(
        ["tmux", "-L", socket, "ls", "-F", "#{session_name}"], capture_output=True, text=True, check=False
    )
    return listed.stdout.split()


def spawn(ib: IbRunner, *names: str) -> None:
    for name in names:
        done = ib.run("new-agent", "fake: wait", "--name", name)
        assert done.returncode == 0, done.stderr


def one_line(text: str) -> str:
    assert len(text.strip().splitlines()) == 1 and "Traceback" not in text, text
    return text.strip()


def test_nuke_without_the_bus_finds_the_agents_by_their_tmux_sessions(
    local: IbRunner, tmux_socket: str
) -> None:
    spawn(local, "alpha", "beta")
    stopped = local.run("bus", "stop")
    assert stopped.returncode == 0, stopped.stderr
    warning = one_line(stopped.stderr)
    assert warning.startswith("warning: 2 agents of this repository keep running in tmux without a bus")
    assert "alpha, beta" in warning and "`ib down --all` stops everything" in warning

    listed = local.run("list")
    assert listed.returncode == 1  # the records live on the bus; the emergency stop does not need them
    said = one_line(listed.stderr)
    assert said.startswith("ib list: error: the bus is down (")
    assert "2 agent(s) of this repository still run in tmux: alpha, beta (`ib nuke` stops them)" in said
    one_tree = local.run("nuke", "alpha")
    assert one_tree.returncode == 1
    assert "the bus is down, so the agents below alpha cannot be found" in one_line(one_tree.stderr)

    nuked = local.run("nuke", "--yes")
    assert nuked.returncode == 0, nuked.stderr
    assert one_line(nuked.stdout).startswith("nuked 2 agent(s) by their tmux sessions: alpha, beta")
    assert sessions(tmux_socket) == []

    again = local.run("nuke", "--yes")  # the agents' tmux server is gone too now
    assert again.returncode == 0, again.stderr
    assert one_line(again.stdout) == (
        "nothing to stop: no agent of this repository runs in tmux (and the bus is down)"
    )
    assert "no agent of this repository runs in tmux; `ib up` brings the bus back" in local.run("list").stderr

    assert local.run("bus", "start").returncode == 0
    shown = local.run("list")
    assert shown.returncode == 0 and "alpha" in shown.stdout and "beta" in shown.stdout


def test_nuke_with_neither_bus_nor_tmux_says_so_in_one_line(local: IbRunner, tmp_path: Path) -> None:
    spawn(local, "gamma")  # the repository has agents' sessions to look for
    assert local.run("nuke", "--yes").returncode == 0
    assert local.run("bus", "stop").returncode == 0
    no_tmux = tmp_path / "bin"  # a PATH with ib's python but no tmux
    no_tmux.mkdir()
    for program in ("git", "sh"):
        found = shutil.which(program)
        assert found is not None
        (no_tmux / program).symlink_to(found)
    done = local.run("nuke", "--yes", env={"PATH": f"{no_tmux}:{Path(sys.executable).parent}"})
    assert done.returncode == 0, done.stderr
    said = one_line(done.stdout)
    assert said.startswith("nothing to stop: ") and "tmux" in said and said.endswith("(and the bus is down)")


def test_down_warns_and_down_all_stops_agents_services_and_bus(
    local: IbRunner, repo: Path, tmux_socket: str
) -> None:
    spawn(local, "delta")
    assert local.run("up", "--detach").returncode == 0
    down = local.run("down", timeout=60)
    assert down.returncode == 0, down.stderr
    assert "stopped worker" in down.stdout
    assert one_line(down.stderr).startswith(
        "warning: 1 agent of this repository keeps running in tmux: delta"
    )

    assert local.run("up", "--detach").returncode == 0
    spawn(local, "epsilon")
    everything = local.run("down", "--all", "--yes", timeout=90)
    assert everything.returncode == 0, everything.stderr
    assert one_line(everything.stderr) == (
        "warning: this stops 2 agent(s) (delta, epsilon; unmerged work is thrown away), the services "
        f"`ib up` runs and the embedded bus in {repo}"
    )
    assert one_line(everything.stdout) == "stopped 2 agent(s) (delta, epsilon), worker and the embedded bus"
    assert sessions(tmux_socket) == []
    assert Embedded(str(repo)).alive() is None
    assert local.run("ps").returncode == 3
    assert not (repo / ".ib" / "agents" / "delta").exists()  # torn down through the bus, not just killed
    assert local.run("down").stderr == ""  # nothing left to warn about
    again = local.run("down", "--all", "--yes")
    assert again.returncode == 0 and one_line(again.stdout) == "nothing was running here"
