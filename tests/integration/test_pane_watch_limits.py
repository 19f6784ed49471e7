"""The pane watcher (real tmux, real Redis) and a plan's usage limit on screen. Codex CLI has no hook that
tells it: its screen's "You've hit your usage limit" parks the agent and is told `limited` once, although
the agent's last state came from one of its hooks. Claude Code's StopFailure hook tells its limits: the
watcher leaves an agent whose hooks work to it. Gemini CLI's usage-limit dialog parks its agent each time
it comes."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import redis

from bus.stores.agent_store import Agent
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.pane_agent import showing, worker_runtime
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.service.pane_watch import PaneWatcher

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# the line Codex CLI 0.169.0 drew for a 429 `usage_limit_reached` (bench/incident_bench.py's run, 200 wide)
LIMIT = (
    "■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
    "https://chatgpt.com/settings/usage to purchase more credits or try again later."
)


def _limit_screen(tmp_path: Path) -> Path:
    """A real Codex screen whose turn an API error ended, with the usage limit's line as the error."""
    screen = (FIXTURES / "codex-0.169.0" / "error-api-500-w200.txt").read_text(encoding="utf-8")
    error = next(line for line in screen.splitlines() if line.startswith("■ "))
    shown = tmp_path / "limit.txt"
    shown.write_text(screen.replace(error, LIMIT), encoding="utf-8")
    return shown


def _told(rds: redis.Redis, keys: Keys, type_: str) -> list[dict[str, object]]:
    found = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return [e for e in found if e["type"] == type_]


@pytest.mark.parametrize(("program", "parked"), [("codex", True), ("claude", False)])
def test_a_usage_limit_on_screen_is_told_by_the_pane_only_where_no_hook_tells_it(
    ib: IbRunner,
    redis_url: str,
    namespace: str,
    rds: redis.Redis,
    keys: Keys,
    tmux_socket: str,
    tmp_path: Path,
    program: str,
    parked: bool,
) -> None:
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    agent = Agent(id="capped", goal="g", state="running", state_at=time.time(), worker=rt.worker_id)
    capped = agent.replace(session="ib-test-capped", program=program, state_by="hook")
    showing(rt, capped, _limit_screen(tmp_path), "usage limit")
    watcher = PaneWatcher(rt)
    for _ in range(3):  # the line stays on screen: one limit, one event
        watcher.tick()
    limited = _told(rds, keys, "limited")
    if parked:
        assert [(e["agent"], e["data"]["seen"]) for e in limited] == [("capped", "pane")]  # type: ignore[index]
        assert rds.hget(keys.agent("capped"), "state") == "limited"
        assert rds.sismember(keys.limit_agents("default"), "capped")
    else:
        assert limited == []
        assert rds.hget(keys.agent("capped"), "state") != "limited"


def _show(tmux_socket: str, session: str, shown: Path) -> None:
    """The pane shows `shown` (a captured screen), as if the program drew it."""
    command = f"clear; cat {shown}; sleep 600"
    subprocess.run(["tmux", "-L", tmux_socket, "respawn-pane", "-k", "-t", session, command], check=True)


def _drawn(shown: Path, screen: str) -> bool:
    """Whether the pane shows the whole capture: its last line is drawn, not only its first (a busy
    machine draws a screen in pieces, and a tick then reads half a dialog)."""
    last = [line.rstrip() for line in shown.read_text(encoding="utf-8").splitlines() if line.strip()][-1]
    return last in (line.rstrip() for line in screen.splitlines())


def test_gemini_s_usage_limit_dialog_parks_the_agent_once_each_time_it_comes(
    ib: IbRunner, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    """Gemini CLI 0.61.0's "Usage limit reached for gemini-2.5-flash." dialog reads the same every time:
    it parks the agent once while it shows, and again when it comes back after the agent went on."""
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    session = "ib-test-gem-capped"
    agent = Agent(id="gcapped", goal="g", state="running", state_at=time.time(), worker=rt.worker_id)
    dialog, idle = (
        FIXTURES / "gemini-0.61.0" / "limited-usage-limit-reset-w200.txt",
        FIXTURES / "gemini-0.61.0" / "idle-turn-end-w200.txt",
    )
    showing(rt, agent.replace(session=session, program="gemini", state_by="hook"), None)
    watcher = PaneWatcher(rt)
    for round_ in (1, 2):
        _show(tmux_socket, session, dialog)
        retry_until(lambda: _drawn(dialog, rt.tmux.capture(session)), what="the dialog on screen, whole")
        for _ in range(3):
            watcher.tick()
        assert len(_told(rds, keys, "limited")) == round_
        assert rds.hget(keys.agent("gcapped"), "state") == "limited"
        rds.hset(
            keys.agent("gcapped"), mapping={"state": "running", "state_by": "hook"}
        )  # resumed: it went on
        _show(tmux_socket, session, idle)
        retry_until(lambda: _drawn(idle, rt.tmux.capture(session)), what="the idle screen, whole")
        watcher.tick()
    (first, second) = _told(rds, keys, "limited")
    assert [e["data"]["reset_source"] for e in (first, second)] == ["text", "text"]  # type: ignore[index]
