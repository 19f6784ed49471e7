"""Redis away and the spool folder unusable: events go to the private fallback folder and arrive later;
with nothing writable at all, nothing is lost silently (notify fails in one line, the hook says it in
stderr and agent.log)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer
from tests.streams import stream_entries


def _events(server: RedisServer, namespace: str) -> list[str]:
    found = []
    for _id, fields in stream_entries(server.client(), namespace + "events"):
        event = json.loads(fields["e"])
        found.append(event["data"].get("last_message", event["msg"]).split("\n")[0])
    return found


def test_unwritable_spool_loses_nothing(
    ib: IbRunner, own_redis: RedisServer, tally: Tally, tmp_path: Path
) -> None:
    (tmp_path / "spool").write_text("a file where the spool folder should be\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    agent = ib.cwd / ".ib" / "agents" / "a1"
    agent.mkdir(parents=True)
    env = {"IB_REDIS_URL": own_redis.url, "TMPDIR": str(temp), "IB_AGENT_ID": "a1", "IB_ROOT": str(ib.cwd)}
    own_redis.stop()
    sent = []
    for i in range(10):
        text = f"fallback-{i}"
        if i % 2:
            payload = {"session_id": "s", "cwd": str(ib.cwd), "last_assistant_message": f"{text}\nWAITING"}
            done = ib.run("hook", "stop", stdin=json.dumps(payload), env=env)
        else:
            done = ib.run("notify", text, env=env)
        assert done.returncode == 0 and f"kept in {temp}" in done.stderr, done.stderr
        sent.append(text)

    (temp / "blocked").write_text("")  # now nothing is writable either
    dead_env = {**env, "TMPDIR": str(temp / "blocked")}
    refused = ib.run("notify", "nowhere", env=dead_env)
    payload = {"session_id": "s", "cwd": str(ib.cwd), "last_assistant_message": "nowhere either\nWAITING"}
    hooked = ib.run("hook", "stop", stdin=json.dumps(payload), env=dead_env)
    assert refused.returncode == 1 and refused.stderr.startswith("ib notify: error: cannot spool the event")
    assert hooked.returncode == 0 and "cannot spool the event" in hooked.stderr
    assert "[hook stop] cannot spool the event" in (agent / "agent.log").read_text()

    own_redis.start()
    assert ib.run("notify", "back", env=env).returncode == 0
    seen = _events(own_redis, ib.env["IB_NAMESPACE"])
    assert seen[-1] == "back"
    row = tally.count(
        "Redis down and the spool folder unusable (a file in the way); then nothing writable at all",
        sent,
        seen,
        note="10 events via the 0700 fallback folder, delivered in order; with nothing writable: "
        "notify exit 1 in one line, the hook one line on stderr and in agent.log",
    )
    assert (row.lost, row.twice) == (0, 0) and seen[:-1] == sent
