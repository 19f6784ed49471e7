"""The README's quick start, verbatim, with the real Claude Code as the agent in its default configuration
(no permission mode set anywhere) on the embedded bus: `ib listen` wakes for the agent's first dialog, and
again for the end of its turn once the dialog is approved."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import Embedded
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply

pytestmark = pytest.mark.claude
TURN = 120.0  # a deadline only: a cold CLI start on two busy cores takes seconds


@pytest.fixture
def local(claude_ib: IbRunner, repo: Path) -> Iterator[IbRunner]:
    """The real Claude Code as agents, on the repository's embedded bus (no IB_REDIS_URL): what a user has."""
    runner = IbRunner(repo, {k: v for k, v in claude_ib.env.items() if k != "IB_REDIS_URL"})
    runner.unset_prefixes = claude_ib.unset_prefixes
    yield runner
    runner.run("down", timeout=60)
    Embedded(str(repo)).stop()


def _listen(ib: IbRunner) -> list[dict[str, object]]:
    """One `ib listen`, as the person's session runs it; it must wake for something within TURN."""
    done = ib.run("listen", "--timeout", str(TURN), timeout=TURN + 30)
    assert done.returncode == 0, done.stderr
    woken = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert woken, f"ib listen slept for {TURN}s: {done.stdout}"
    return woken


def test_the_quick_start_wakes_the_listener_for_the_first_dialog_then_for_the_end(
    local: IbRunner, anthropic: FakeAnthropic, repo: Path
) -> None:
    asking = 'touch built.txt; echo "exit=$?"'  # `$?`: Claude Code cannot vouch for it, so it asks
    anthropic.script(
        reply("First the flag.", bash(asking, "Build it")), reply("Done.\n\nI HAVE COMPLETED THE GOAL")
    )
    for step in (
        ["up", "--detach"],
        ["hooks", "install"],
        ["new-agent", "add a --verbose flag to the CLI", "--name", "verbose"],
    ):
        done = local.run(*step, timeout=120)
        assert done.returncode == 0, (step, done.stderr)

    woken = _listen(local)
    assert [(e["type"], e["agent"]) for e in woken] == [("permission", "verbose")]
    assert woken[0]["data"]["detail"] == asking  # type: ignore[index]

    approved = local.run("approve", "verbose")
    assert approved.returncode == 0, approved.stderr
    seen = _listen(local)
    while not any(e["type"] == "complete" for e in seen):  # a `waiting` may come first on a slow machine
        seen += _listen(local)
    assert [e["agent"] for e in seen] == ["verbose"] * len(seen)
    assert (repo / ".ib" / "agents" / "verbose" / "repo" / "built.txt").exists()
