"""A permission dialog the pane shows before Claude Code's PermissionRequest hook has told it (a cold `ib
hook` on a busy machine is slower than the watcher's look; seen in the README's quick start, whose listener
then woke for a dialog without the command it asks about) waits HOOK_GRACE for the hook, which tells the
command: told once, by the hook. A hook that never comes leaves it to the pane, which tells it then, quiet
pane or not. An agent whose hooks never reported, or in auto mode (whose dialogs no hook tells), is told at
once by the pane (test_pane_dialogs.py). The pane watcher on real tmux and Redis, a real Claude Code dialog's
screen."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis

from bus.stores.agent_store import Agent
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.pane_agent import showing, worker_runtime
from tests.streams import stream_entries
from worker.service.pane_watch import HOOK_GRACE, PaneWatcher

DIALOG = (
    Path(__file__).resolve().parents[1] / "fixtures" / "dialogs" / "permission-bash-200.claude-2.1.332.txt"
)


def _permissions(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    found = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return [e for e in found if e["type"] == "permission"]


@pytest.mark.parametrize("hook", [True, False], ids=["the-hook-tells-it", "no-hook-comes"])
def test_a_dialog_drawn_before_its_hook_waits_for_it(
    ib: IbRunner,
    redis_url: str,
    namespace: str,
    rds: redis.Redis,
    keys: Keys,
    tmux_socket: str,
    hook: bool,
) -> None:
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    agent = Agent(id="asks", goal="g", state="running", state_at=time.time(), worker=rt.worker_id)
    hooked = agent.replace(session="ib-test-asks", program="claude", transcript_path="/tmp/asks.jsonl")
    showing(rt, hooked, DIALOG, "Do you want to proceed?")  # its hooks ran: they named its transcript
    watcher = PaneWatcher(rt)

    watcher.tick()
    assert _permissions(rds, keys) == []  # not yet: its hook may be on its way
    assert rds.hget(keys.agent("asks"), "state") == "permission"
    if hook:  # the hook records it, as `ib hook event` does for PermissionRequest, and tells it
        recorded = rt.prompts.record("asks", "permission", "make paint", tool="Bash")
        assert recorded is not None
    time.sleep(HOOK_GRACE + 0.2)
    watcher.tick()
    watcher.tick()
    told = _permissions(rds, keys)
    assert len(told) == (0 if hook else 1)  # the hook's own event is its to publish, not the watcher's
