"""The real Claude Code CLI (pinned) in auto mode, the mode it starts in unless told otherwise, offline
behind a base URL: its "can't check actions" notice and its approval dialog, which no hook reports,
reach the bus as `permission` events with their options, are never typed into, and `ib approve` lets
the turn go on."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 60.0  # deadline for one turn of a cold CLI on 2 busy cores
PROBE = 'curl -s http://127.0.0.1:9/ ; echo "rc=$?"'  # compound: auto mode's server-side check must pass it
NOTICE = "Auto mode can't check actions in this session"


@pytest.fixture
def worker(claude_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[Popen[str]]:
    process = claude_ib.popen("worker")
    retry_until(lambda: rds.exists(keys.worker(claude_ib.env["IB_WORKER_ID"])), TURN, what="the worker")
    yield process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def _asked(rds: redis.Redis, keys: Keys, count: int) -> dict[str, object]:
    def found() -> list[dict[str, object]] | None:
        events = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
        asked = [e["data"] for e in events if e["type"] == "permission"]
        return asked if len(asked) >= count else None

    return retry_until(found, TURN, what=f"permission event {count}")[count - 1]


def test_auto_modes_approval_is_an_event_and_approved(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    worker: Popen[str],
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
) -> None:
    anthropic.script(
        reply("Probing the server.", bash(PROBE, "Probe the server")),
        reply("Probed.\n\nI HAVE COMPLETED THE GOAL"),
    )
    # the CLI's own default, chosen through ittybus (whose default is acceptEdits, with auto mode off)
    new = claude_ib.run("new-agent", "probe the server", "--name", "prober", "--permission-mode", "auto")
    assert new.returncode == 0, new.stderr

    notice = _asked(rds, keys, 1)
    assert (notice["kind"], notice["title"], notice["options"], notice["default"]) == (
        "dialog",
        NOTICE,
        [
            {"number": None, "label": "stay in auto mode"},
            {"number": None, "label": "leave for accept edits mode and stop"},
            {"number": None, "label": "cancel"},
        ],
        0,
    )
    assert claude_ib.run("approve", "prober").returncode == 0

    approval = _asked(rds, keys, 2)
    assert (approval["kind"], approval["title"], approval["options"], approval["default"]) == (
        "permission",
        "Do you want to proceed?",
        [{"number": None, "label": "No"}, {"number": None, "label": "Yes"}],
        0,
    )
    typed = claude_ib.run("send", "prober", "yes")
    assert (typed.returncode, typed.stderr.strip()) == (
        1,
        "ib send: error: prober shows a permission dialog (Do you want to proceed?); nothing was typed. "
        "Answer it with ib approve prober or ib deny prober [REASON]",
    )
    approved = claude_ib.run("approve", "prober")
    assert approved.returncode == 0, approved.stderr

    ran = lambda log: any("rc=" in json.dumps(r.tool_results()) for r in log if r.is_turn)  # noqa: E731
    anthropic.wait_for(ran, TURN, "the probe's output to reach the model")
    retry_until(
        lambda: any(json.loads(f["e"])["type"] == "complete" for _i, f in stream_entries(rds, keys.events)),
        TURN,
        what="the turn to complete",
    )
