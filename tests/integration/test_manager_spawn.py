"""A manager agent's own `ib new-agent` starts its child with the agent program the person configured
(IB_AGENT_COMMAND), not Claude Code's default `claude`: here the fake agent, in real tmux."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import IbRunner
from tests.waiting import retry_until


def test_a_managers_child_runs_the_configured_agent_program(agents_ib: IbRunner, repo: Path) -> None:
    ib = agents_ib
    script = "\n".join(["Split the work.", "fake: run ib new-agent --name kid 'fake: wait'", "fake: wait"])
    spawned = ib.run("new-agent", script, "--name", "lead")
    assert spawned.returncode == 0, spawned.stderr

    def kid() -> dict[str, object] | None:
        rows = {r["id"]: r for r in json.loads(ib.run("list", "--json").stdout)}
        found = rows.get("kid")
        return found if found and found["state"] == "waiting" else None

    row = retry_until(kid, timeout=60, interval=0.5, what="the manager's child, waiting")
    assert row["manager"] == "lead"
    start = (repo / ".ib" / "agents" / "kid" / "start.sh").read_text()
    assert f"{ib.env['IB_AGENT_COMMAND']} --settings" in start
