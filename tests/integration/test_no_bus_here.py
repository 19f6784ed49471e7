"""A command that acts on agents, run by mistake in a repository with no ittybus, says so in one line and
leaves the repository as it was: no bus started, no `.ib/`, nothing written into `.git/info/exclude`
(issue 34). Only `ib up` and `ib bus start` make a bus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import Embedded
from tests.cli import IbRunner


@pytest.fixture
def bare(repo: Path, tmp_path: Path) -> Iterator[IbRunner]:
    """`ib` with no IB_REDIS_URL in a repository where no bus was ever started."""
    yield IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool")})
    Embedded(str(repo)).stop()  # only if a regression started one


def _exclude(repo: Path) -> str:
    found = repo / ".git" / "info" / "exclude"
    return found.read_text() if found.exists() else ""


@pytest.mark.parametrize(
    "args",
    [("approve", "agent-1"), ("list",), ("send", "agent-1", "hello"), ("kill", "agent-1")],
    ids=["approve", "list", "send", "kill"],
)
def test_a_command_in_a_repository_without_ittybus_says_so_and_starts_nothing(
    bare: IbRunner, repo: Path, args: tuple[str, ...]
) -> None:
    excluded = _exclude(repo)
    done = bare.run(*args)
    assert done.returncode == 1, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    assert "there is no ittybus in" in done.stderr and "`ib up`" in done.stderr
    assert not (repo / ".ib").exists()
    assert _exclude(repo) == excluded
    assert Embedded(str(repo)).alive() is None


def test_bus_start_makes_the_bus_and_then_commands_use_it(bare: IbRunner, repo: Path) -> None:
    assert bare.run("bus", "start").returncode == 0
    listed = bare.run("list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "no agents"
