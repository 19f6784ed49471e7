"""Who runs `ib`: read from real process trees, never from the process's own environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from worker.boundary.identity import caller_at, caller_of, parent_of

PROBE = (
    "import os; from worker.boundary.identity import caller_of; c = caller_of(os.getpid()); "
    "print(c.id if c else 'person', c.role if c else '', c.environ.get('IB_WORKER_ID', '') if c else '')"
)
REPO = Path(__file__).resolve().parents[2]


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
    env.update(extra, PYTHONPATH=str(REPO))
    return env


def _probe_under(outer: dict[str, str], inner_prefix: str) -> str:
    """The probe run by `sh -c` (the agent's shell) started with `outer`, behind `inner_prefix`."""
    line = f"{inner_prefix} {sys.executable} -c {PROBE!r}"
    done = subprocess.run(["sh", "-c", line], env=outer, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_person_has_no_agent_ancestor() -> None:
    assert _probe_under(_clean_env(), "") == "person"


def test_own_environment_does_not_make_an_agent() -> None:
    assert _probe_under(_clean_env(), "IB_AGENT_ID=victim IB_AGENT_ROLE=manager") == "person"


@pytest.mark.parametrize(
    "inner",
    [
        "IB_AGENT_ID=victim IB_AGENT_ROLE=manager IB_WORKER_ID=forged",
        "env -i IB_AGENT_ID=victim PYTHONPATH=$PYTHONPATH",
        'IB_AGENT_ID=victim sh -c \'exec "$0" "$@"\'',  # an extra shell of the agent's, with the lie
    ],
    ids=["prefix", "env-i", "nested-shell"],
)
def test_the_outermost_agent_ancestor_names_the_caller(inner: str) -> None:
    outer = _clean_env(IB_AGENT_ID="atk", IB_AGENT_ROLE="worker", IB_WORKER_ID="w1")
    assert _probe_under(outer, inner) == "atk worker w1"


def test_parent_of_reads_a_command_name_with_parentheses(tmp_path: Path) -> None:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "stat").write_bytes(b"7 (a) b (c)) S 3 7 7 0 -1")
    assert parent_of(7, str(tmp_path)) == 3
    assert parent_of(8, str(tmp_path)) is None


def test_a_parent_loop_or_unreadable_environ_ends_the_walk(tmp_path: Path) -> None:
    for pid, parent in ((5, 6), (6, 5)):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_bytes(f"{pid} (x) S {parent} 0".encode())
    (tmp_path / "6" / "environ").write_bytes(b"IB_AGENT_ID=atk\0IB_AGENT_WORKTREE=/w\0OTHER=1\0")
    found = caller_of(5, str(tmp_path))
    assert found is not None and (found.id, found.worktree, found.role) == ("atk", "/w", "worker")
    assert "OTHER" not in found.environ


AGENT_CALLER = (
    "from worker.boundary.identity import agent_caller; c = agent_caller(); "
    "print(c.id if c else 'person', c.role if c else '')"
)


def _agent_caller_under(outer: dict[str, str], inner_prefix: str) -> str:
    line = f"{inner_prefix} {sys.executable} -c {AGENT_CALLER!r}"
    done = subprocess.run(["sh", "-c", line], env=outer, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_relays_mark_narrows_a_person_to_the_agent_it_names() -> None:
    """The worker's relay runs an agent's sandboxed command as `IB_RELAYED=1 IB_AGENT_ID=<agent> ib ...`:
    a process with no agent ancestor is a person's, so the mark can only take rights away."""
    relayed = "IB_RELAYED=1 IB_AGENT_ID=a1 IB_AGENT_ROLE=worker"
    assert _agent_caller_under(_clean_env(), relayed) == "a1 worker"
    assert _agent_caller_under(_clean_env(), "IB_AGENT_ID=a1") == "person"  # no mark: a person


def test_inside_an_agent_the_relays_mark_changes_nothing() -> None:
    outer = _clean_env(IB_AGENT_ID="atk", IB_AGENT_ROLE="worker")
    assert _agent_caller_under(outer, "IB_RELAYED=1 IB_AGENT_ID=victim IB_AGENT_ROLE=manager") == "atk worker"


def test_the_process_that_owns_a_socket_names_its_agent_itself(tmp_path: Path) -> None:
    """The relay asks about the Claude Code process holding the proxy's socket: its own environment
    counts, which `caller_of` (ancestors only) leaves out."""
    for pid, parent, environ in ((5, 1, b"IB_AGENT_ID=a1\0IB_AGENT_ROLE=manager\0"), (1, 0, b"HOME=/\0")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_bytes(f"{pid} (claude) S {parent} 1 1 0".encode())
        (tmp_path / str(pid) / "environ").write_bytes(environ)
    found = caller_at(5, str(tmp_path))
    assert found is not None and (found.id, found.role, found.pid) == ("a1", "manager", 5)
    assert caller_of(5, str(tmp_path)) is None and caller_at(1, str(tmp_path)) is None
