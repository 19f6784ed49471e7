"""`ib` inside Claude Code's sandbox (it marks its commands with SANDBOX_RUNTIME=1): it reaches the bus
as it is or fails in one line, and never starts an embedded Redis of its own there."""

from __future__ import annotations

import re
from pathlib import Path

import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries

SANDBOX = {"SANDBOX_RUNTIME": "1"}


def test_a_sandboxed_ib_without_a_bus_fails_in_one_line(ib: IbRunner, repo: Path) -> None:
    for bus in ({"IB_REDIS_URL": "redis://127.0.0.1:1/0"}, {"IB_REDIS_URL": ""}):  # closed port; embedded
        for args in (("notify", "lost?"), ("task", "done", "t1"), ("kill", "a1")):
            done = ib.run(*args, env={**SANDBOX, **bus})
            assert done.returncode == 1, done
            assert done.stderr == (
                f"ib {args[0]}: error: cannot reach the bus from inside the sandbox; run ib as a command of "
                "its own (not after `&&` or `;`, in a pipe, a subshell or a script)\n"
            )
            assert not re.search(r"\d{13}-\d", done.stdout)
    assert not (repo / ".ib" / "redis").exists()  # no embedded Redis started in the sandbox's view


def test_a_sandboxed_ib_that_reaches_the_bus_works(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    done = ib.run("notify", "landed", env=SANDBOX)
    assert done.returncode == 0, done.stderr
    assert any(entry_id == done.stdout.strip() for entry_id, _ in stream_entries(rds, keys.events))


def test_help_needs_no_bus(ib: IbRunner) -> None:
    done = ib.run("notify", "--help", env={**SANDBOX, "IB_REDIS_URL": "redis://127.0.0.1:1/0"})
    assert done.returncode == 0 and "ib notify" in done.stdout
