"""The path hook and Claude Code's sandbox agree on where an agent's Bash commands may write (both from
the agent's settings.json): a write the sandbox would refuse ("Read-only file system") is refused by the
hook first, so nobody is asked to approve it; a write to the sandbox's $TMPDIR runs without asking. Real
Claude Code (pinned), in the permission mode that asks (`default`)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply
from tests.streams import stream_entries

pytestmark = pytest.mark.claude


def test_a_write_the_sandbox_refuses_is_refused_before_anyone_is_asked(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    elsewhere = Path(f"/tmp/ib-elsewhere-{uuid.uuid4().hex[:8]}.txt")
    outside = bash(f"echo hi > {elsewhere}")
    scratch = bash("echo ok > $TMPDIR/ib-scratch.txt && cat $TMPDIR/ib-scratch.txt")
    anthropic.script(reply(outside), reply(scratch), reply("I HAVE COMPLETED THE GOAL"))
    spawned = claude_ib.run("new-agent", "write a note", "--name", "writer", "--permission-mode", "default")
    assert spawned.returncode == 0, spawned.stderr
    anthropic.wait_for(  # a dialog would hold the turn here: nobody answers it
        lambda log: anthropic.pending() == 0 and len([r for r in log if r.is_turn]) > 2,
        timeout=90,
        what="the scripted conversation to end",
    )
    results = anthropic.results_by_call()
    refused, said = results[outside.id]
    assert refused and f"Path violation: Bash tried to write to {elsewhere}" in said, said
    assert "$TMPDIR (/tmp/claude-" in said
    assert results[scratch.id] == (False, "ok")
    assert not elsewhere.exists()
    events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    assert [e for e in events if e["type"] == "permission"] == []
