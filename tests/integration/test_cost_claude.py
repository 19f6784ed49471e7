"""Tokens and cost of a real Claude Code agent: the worker reads them from its transcript, `ib cost` adds
them up, the turn's `complete` event carries the session's total, and the `ccusage` CLI, an independent
reader of the same transcripts (tests/run.sh installs it from the npm registry), counts the same tokens."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Literal, TypedDict, cast

import pytest
import redis

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply
from tests.fake_anthropic.script import read
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.frontends.dashboard import Dashboard
from worker.runtime import Runtime

pytestmark = pytest.mark.claude
TURN_TIMEOUT = 90.0
Kind = Literal["input", "output", "cache_write", "cache_read"]
KINDS: dict[Kind, str] = {
    "input": "inputTokens",
    "output": "outputTokens",
    "cache_write": "cacheCreationTokens",
    "cache_read": "cacheReadTokens",
}


class Total(TypedDict):
    """The part of `ib cost --json`'s "total" this test reads (bus.costs.usage.spend_data writes it)."""

    usd: float
    answers: int
    input: int
    output: int
    cache_write: int
    cache_read: int
    unpriced: list[str]


def ccusage_totals(claude_dir: Path) -> dict[str, int]:
    """What ccusage counts in the transcripts under `claude_dir` (offline: its own price list)."""
    found = shutil.which("ccusage")
    if found is None:
        pytest.fail("no ccusage on PATH: `npm install -g ccusage@18.0.11` (tests/run.sh does)")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(claude_dir)}
    run = subprocess.run(
        [found, "session", "--json", "--offline"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    totals = json.loads(run.stdout)["totals"]
    return {ours: int(totals[theirs]) for ours, theirs in KINDS.items()}


def test_cost_of_a_real_turn_equals_the_independent_reader(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
    redis_url: str,
    namespace: str,
) -> None:
    anthropic.script(
        reply("Let me look at the readme first.", read(str(repo / "README.md"))),
        reply("Read it.\n\nI HAVE COMPLETED THE GOAL"),
    )
    assert claude_ib.run("new-agent", "read the readme", "--name", "reader").returncode == 0

    def completed() -> dict[str, object] | None:
        events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
        return next((e for e in events if e["type"] == "complete" and e["agent"] == "reader"), None)

    event = retry_until(completed, TURN_TIMEOUT, 0.2, "the turn's end")

    def counted() -> Total | None:
        if claude_ib.run("worker", "--once").returncode != 0:
            return None
        shown = claude_ib.run("cost", "reader", "--json")
        if shown.returncode != 0:
            return None
        total = cast(Total, json.loads(shown.stdout)["total"])  # JSON: its shape is spend_data's
        return total if total["answers"] == 2 else None  # both answers of the turn read

    ours = retry_until(counted, 30, 0.2, "ib cost to count both answers")
    theirs = ccusage_totals(Path(claude_ib.env["HOME"]) / ".claude")
    assert {kind: ours[kind] for kind in KINDS} == theirs
    assert theirs["cache_read"] > 0 and theirs["cache_write"] > 0  # every kind was compared, not only zeros
    # the pinned CLI asks for claude-opus-5-5: $4 in, $20 out, $5 cache write, $0.20 cache read a million
    usd = (ours["input"] * 4 + ours["output"] * 20 + ours["cache_write"] * 5 + ours["cache_read"] * 0.2) / 1e6
    assert ours["usd"] == pytest.approx(usd) and ours["unpriced"] == []
    data = event["data"]
    assert isinstance(data, dict)
    assert {kind: data["usage"][kind] for kind in KINDS} == theirs
    assert data["usage"]["usd"] == pytest.approx(usd)
    # the live status line's items and the dashboard's cost column say the same
    answers = [f for _id, f in stream_entries(rds, keys.output("reader")) if "tokens" in f]
    assert answers and float(answers[-1]["usd"]) == pytest.approx(usd)
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), repo)
    board = Dashboard(rt, client_for(redis_url, blocking=True))
    board.start()
    try:
        rows = {a.id: a.usd for a in board.snapshot(interactive=False).agents}
    finally:
        board.stop()
    assert rows["reader"] == pytest.approx(usd)


def test_cost_refuses_what_names_nothing(ib: IbRunner) -> None:
    said = {
        ("cost", "nobody"): "no agent 'nobody'",
        ("cost", "--task", "nothing"): "no task 'nothing'",
        ("cost", "--project", "nowhere"): "no project 'nowhere'",
        ("cost", "--since", "yesterday"): "--since 'yesterday' is not a duration",
        ("cost", "--since", "0m"): "--since '0m' is not a duration",
        ("cost", "a", "--task", "t"): "give one of AGENT, --task",
        ("cost", "--project", ""): "--project is empty",  # it counted every agent
        ("cost", "--task", " "): "--task is empty",
        ("cost", ""): "AGENT is empty",
    }
    for argv, line in said.items():
        run = ib.run(*argv)
        assert run.returncode != 0, argv
        assert line in run.stderr and "Traceback" not in run.stderr, (argv, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
