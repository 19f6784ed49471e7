"""The folder-trust dialog with the real Claude Code CLI (pinned) offline and `ib worker` running. The spawn
carries the person's trust of the repository to the agent's own folder in ~/.claude.json, which every
session shares: another agent's Claude Code rewrites it from the copy it read at its start, and the entry is
gone when this one starts (played here by a wrapper that drops it). The worker answers that dialog itself;
a repository the person never trusted still waits for the person."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply, write_home
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores
TRUSTED = "at its folder-trust dialog: the person trusts"  # the worker's line when it answers

LOSES_TRUST = """#!{python}
# Claude Code, started after another session rewrote ~/.claude.json without the agent's carried trust
import json, os, sys
folder = os.environ.get("IB_AGENT_WORKTREE")  # in the agent's pane only, not for `--version`
if folder:
    path = os.path.join(os.environ["HOME"], ".claude.json")
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    if config["projects"].pop(folder, None) is not None:  # carried by the spawn
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
os.execv({claude!r}, [{claude!r}, *sys.argv[1:]])
"""


@pytest.fixture
def losing_ib(claude_ib: IbRunner, claude_bin: Path, tmp_path: Path) -> IbRunner:
    """`ib` whose agents' Claude Code starts with its carried trust lost."""
    wrapper = tmp_path / "claude-losing-trust"
    wrapper.write_text(LOSES_TRUST.format(python=sys.executable, claude=str(claude_bin)), encoding="utf-8")
    wrapper.chmod(0o755)
    claude_ib.env["IB_AGENT_COMMAND"] = str(wrapper)
    return claude_ib


@pytest.fixture
def worker(losing_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Path]:
    """`ib worker` for the agents (its pane watcher reads the dialog); its log."""
    with worker_running(losing_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running.log


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def test_a_carried_trust_lost_is_answered_by_the_worker(
    losing_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, rds: redis.Redis, keys: Keys, worker: Path
) -> None:
    anthropic.script(reply("Hello.\n\nI HAVE COMPLETED THE GOAL"))
    assert losing_ib.run("new-agent", "say hello", "--name", "ann").returncode == 0
    retry_until(lambda: _events(rds, keys, "complete"), TURN, 0.2, "ann's turn to end")
    folder = repo / ".ib" / "agents" / "ann" / "repo"
    answered = [line for line in worker.read_text().splitlines() if TRUSTED in line]
    assert answered == [answered[0]] and f"agent ann: trusted {folder} {TRUSTED} {repo}" in answered[0]
    assert _events(rds, keys, "permission") == []  # nobody was asked


def test_a_repository_the_person_never_trusted_waits_for_the_person(
    losing_ib: IbRunner, anthropic: FakeAnthropic, tmp_path: Path, rds: redis.Redis, keys: Keys, worker: Path
) -> None:
    write_home(tmp_path / "home", [])  # nothing trusted, so nothing carried (the wrapper drops nothing)
    anthropic.script(reply("Hello.\n\nI HAVE COMPLETED THE GOAL"))
    assert losing_ib.run("new-agent", "say hello", "--name", "ann").returncode == 0
    (asked,) = retry_until(lambda: _events(rds, keys, "permission"), TURN, 0.2, "the folder-trust dialog")
    assert asked["data"]["kind"] == "trust"  # type: ignore[index]
    assert losing_ib.run("approve", "ann").returncode == 0
    retry_until(lambda: _events(rds, keys, "complete"), TURN, 0.2, "ann's turn to end")
    assert TRUSTED not in worker.read_text()
