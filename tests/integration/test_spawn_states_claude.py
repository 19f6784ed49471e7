"""A real Claude Code agent's first state after `creating` is what its pane shows: never `unknown`, while
the worker's pane watcher looks at it from its first moment (a held reply keeps the turn running)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import redis

from bus.wire.keys import Keys
from tests.cli import IB, IbRunner
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic.script import reply
from tests.streams import stream_entries
from tests.waiting import retry_until


def transitions(rds: redis.Redis, keys: Keys, agent: str) -> list[tuple[str, str]]:
    events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    return [
        (e["data"]["from_state"], e["data"]["to_state"])
        for e in events
        if e["type"] == "state" and e["agent"] == agent
    ]


def test_a_spawn_goes_from_creating_to_what_the_pane_shows(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    hold = threading.Event()
    anthropic.script(reply("Reading it.", hold=hold))
    with (tmp_path / "worker.log").open("ab") as log:
        worker = subprocess.Popen(
            [IB, "worker"], stdout=log, stderr=subprocess.STDOUT, env=claude_ib.environ(), cwd=claude_ib.cwd
        )
    try:
        assert claude_ib.run("new-agent", "read the README", "--name", "fresh").returncode == 0
        retry_until(lambda: transitions(rds, keys, "fresh"), 90, 0.1, "the first state change")
        first = transitions(rds, keys, "fresh")[0]
    finally:
        hold.set()
        worker.terminate()
        worker.wait(30)
    assert first[0] == "creating" and first[1] not in ("unknown", "creating"), first
    assert all("unknown" not in step for step in transitions(rds, keys, "fresh"))
