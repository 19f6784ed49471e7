"""IB_EMBEDDED_PORT chooses the embedded bus's port (issue 25, point 7); `ib bus status` says which port
and why. A taken, privileged or non-numeric port is one line naming the setting, never a traceback."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bus.connection.embedded import Embedded, free_port
from tests.cli import IbRunner


@pytest.fixture
def local(repo: Path, tmp_path: Path) -> Iterator[IbRunner]:
    runner = IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool")})
    yield runner
    Embedded(str(repo)).stop()


def _one_line(done: subprocess.CompletedProcess[str], *said: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    for words in said:
        assert words in done.stderr, done.stderr


def _port(repo: Path) -> int | None:
    return urlsplit((repo / ".ib" / "redis" / "url").read_text().strip()).port


def test_the_port_is_the_one_set_and_bus_status_says_so(local: IbRunner, repo: Path) -> None:
    chosen = free_port()
    started = local.run("bus", "start", env={"IB_EMBEDDED_PORT": str(chosen)})
    assert started.returncode == 0, started.stderr
    assert f"127.0.0.1:{chosen}/0" in started.stdout and _port(repo) == chosen
    status = local.run("bus", "status", env={"IB_EMBEDDED_PORT": str(chosen)})
    assert status.returncode == 0, status.stderr
    assert f"port: {chosen} (IB_EMBEDDED_PORT)\n" in status.stdout
    unset = local.run("bus", "status")
    assert (
        f"port: {chosen}, kept from the last start while it is free (IB_EMBEDDED_PORT sets it)"
        in unset.stdout
    )


def test_a_new_port_applies_at_the_next_start_and_status_says_when(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0
    first = _port(repo)
    chosen = free_port()
    status = local.run("bus", "status", env={"IB_EMBEDDED_PORT": str(chosen)})
    assert f"port: {chosen} (IB_EMBEDDED_PORT); it listens on {first} until `ib bus stop`" in status.stdout
    assert local.run("bus", "stop").returncode == 0
    assert local.run("bus", "start", env={"IB_EMBEDDED_PORT": str(chosen)}).returncode == 0
    assert _port(repo) == chosen
    assert local.run("notify", "on the chosen port", env={"IB_EMBEDDED_PORT": str(chosen)}).returncode == 0


def test_a_taken_port_is_refused_in_one_line(local: IbRunner, repo: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        refused = local.run("bus", "start", env={"IB_EMBEDDED_PORT": str(taken)})
    _one_line(refused, f"IB_EMBEDDED_PORT {taken} is taken", "set IB_EMBEDDED_PORT to a free port")
    assert not (repo / ".ib" / "redis" / "url").exists()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("80", "must be a port from 1024 to 65535: lower ones are privileged"),
        ("six", "must be a whole number"),
        ("70000", "must be a port from 1024 to 65535"),
    ],
    ids=["privileged", "not-a-number", "too-high"],
)
def test_a_bad_port_names_the_setting(local: IbRunner, value: str, said: str) -> None:
    for command in (("bus", "start"), ("notify", "x")):  # the settings class and the hooks' reader
        _one_line(local.run(*command, env={"IB_EMBEDDED_PORT": value}), "IB_EMBEDDED_PORT", said)
