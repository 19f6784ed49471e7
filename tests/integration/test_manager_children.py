"""A manager and its children, as fake agents in real tmux: the manager's own `ib new-agent` starts a
child with the agent program the person configured (IB_AGENT_COMMAND), not Claude Code's default
`claude`; a child's turn-end note reaches the manager through the manager's own worker."""

from __future__ import annotations

import json
from pathlib import Path

import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries
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
    assert row is not None and row["manager"] == "lead"
    start = (repo / ".ib" / "agents" / "kid" / "start.sh").read_text()
    assert f"{ib.env['IB_AGENT_COMMAND']} --settings" in start


def test_a_childs_note_is_typed_by_the_managers_own_worker(
    agents_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    """The manager runs on worker `home`, its child on `away`: the child's Stop hook puts the note on
    `home`'s command stream, and `home`'s worker types it into the manager."""
    ib = agents_ib
    lead = ib.run("new-agent", "Lead.\nfake: wait", "--name", "lead", env={"IB_WORKER_ID": "home"})
    assert lead.returncode == 0, lead.stderr
    kid = ib.run(
        "new-agent", "Work.\nfake: done", "--name", "kid", "--manager", "lead", env={"IB_WORKER_ID": "away"}
    )
    assert kid.returncode == 0, kid.stderr
    note = "[hook]: Your subtask kid just completed"
    retry_until(
        lambda: stream_entries(rds, keys.commands("home")), timeout=30, what="the note on home's stream"
    )
    assert stream_entries(rds, keys.commands("away")) == []
    received = tmp_path / "received.txt"
    assert not received.exists() or note not in received.read_text()  # nobody typed it yet

    def typed() -> bool:
        ib.run("worker", "--once", env={"IB_WORKER_ID": "home"})
        return received.exists() and note in received.read_text()

    retry_until(typed, timeout=30, interval=0.3, what="the note typed into the manager")
