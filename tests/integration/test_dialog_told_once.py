"""One dialog, one event: the pane watcher and the agent's hook tell the same dialog at the same instant,
many times over (threads released together by a barrier, either one a little ahead or neither), against
the real Redis. Whichever records it first publishes it; the other adopts its record: the hook's telling
adds the tool and command to the watcher's (`dialog_detail`), the watcher's adds nothing to the hook's.
For Claude Code and Codex CLI, with real screens of their dialogs (Codex's with a command ending in `?`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.connection.clients import client_for
from bus.events.publish import open_bus
from bus.settings.hotconf import HotConf, read_hotconf
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from bus.wire.resp import Connection
from tests.cli import IbRunner
from tests.streams import stream_entries
from worker.hooks.agent_event import apply
from worker.programs.claude.signals import outcome
from worker.programs.codex.signals import read_hook
from worker.programs.hook_outcome import Outcome
from worker.runtime import Runtime
from worker.service.dialog_events import tell_dialog

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROUNDS = 60
AHEAD = (0.0, 0.002, -0.002)  # seconds the hook starts after the watcher: together, behind, ahead
COMMAND = "touch /tmp/cc-hooks-probe/made"
BASH = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": COMMAND}}
CODEX_COMMAND = "touch built.txt; echo rc=$?"  # ends in `?`: the screen's `$ …` line is no question
ASK = {
    "hook_event_name": "PermissionRequest",
    "tool_name": "AskUserQuestion",
    "tool_input": {
        "questions": [
            {
                "question": "Which database should I use?",
                "options": [{"label": "Postgres"}, {"label": "SQLite"}],
            }
        ]
    },
}


def _claude(payload: dict[str, Any]) -> Outcome:
    found = outcome(payload, "teller")
    assert found is not None
    return found


def _codex(command: str) -> Outcome:
    """Codex CLI's PermissionRequest hook payload (a real one) for `command`, read by its own reader."""
    path = FIXTURES / "codex-0.169.0" / "signals" / "permission-hook-permission-request.json"
    payload = json.loads(path.read_text(encoding="utf-8"))
    payload["tool_input"]["command"] = command
    found = read_hook(payload, "teller")
    assert found is not None
    return found


PERMISSIONS = {  # program: its screen with the dialog, what its hook tells, the command
    "claude": ("dialogs/permission-bash-80.claude-2.1.332.txt", _claude(BASH), COMMAND),
    "codex": ("codex-0.169.0/permission-exec-question-mark-w80.txt", _codex(CODEX_COMMAND), CODEX_COMMAND),
}


@dataclass
class Tellers:
    """The two that tell an agent's dialog: the pane watcher's reading and the agent's hook."""

    rt: Runtime
    conf: HotConf
    agent: Agent

    def pane(self, screen: str) -> Callable[[], object]:
        return lambda: tell_dialog(self.rt, self.agent, screen)

    def hook(self, conn: Connection, found: Outcome) -> Callable[[], object]:
        return lambda: apply(conn, self.conf, self.agent.id, found)


@pytest.fixture(params=["claude"])
def tellers(
    request: pytest.FixtureRequest, ib: IbRunner, redis_url: str, namespace: str, rds: redis.Redis
) -> Iterator[Tellers]:
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), ib.cwd)
    agent = Agent(
        id="teller",
        goal="g",
        project="p",
        state="running",
        worker=rt.worker_id,
        root=str(ib.cwd),
        program=request.param,
    )
    AgentStore(rds, rt.keys).save(agent)
    yield Tellers(rt, read_hotconf(environ=ib.environ(), cwd=str(ib.cwd)), agent)


def _together(first: Callable[[], object], second: Callable[[], object], ahead: float) -> None:
    """Run both at once, released by one barrier; `second` starts `ahead` seconds after `first` (before
    it when negative)."""
    gate = threading.Barrier(2)
    failures: list[BaseException] = []

    def run(tell: Callable[[], object], delay: float) -> None:
        gate.wait()
        if delay > 0:
            time.sleep(delay)  # a stagger between the two, not a wait for anything
        try:
            tell()
        except BaseException as e:  # reported by the test once both have run
            failures.append(e)

    threads = [
        threading.Thread(target=run, args=(first, max(-ahead, 0.0))),
        threading.Thread(target=run, args=(second, max(ahead, 0.0))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures


def _events_since(rds: redis.Redis, keys: Keys, after: str) -> list[dict[str, Any]]:
    return [json.loads(f["e"]) for i, f in stream_entries(rds, keys.events) if _later(i, after)]


def _later(entry_id: str, after: str) -> bool:
    ms, seq = (int(x) for x in entry_id.split("-"))
    after_ms, after_seq = (int(x) for x in after.split("-"))
    return (ms, seq) > (after_ms, after_seq)


def _last_id(rds: redis.Redis, keys: Keys) -> str:
    entries = stream_entries(rds, keys.events)
    return entries[-1][0] if entries else "0-0"


def _fresh(rds: redis.Redis, keys: Keys, agent: str) -> None:
    """The dialog before either telling: nothing recorded, the agent in its turn."""
    rds.delete(keys.prompt(agent))
    rds.hset(keys.agent(agent), mapping={"state": "running", "state_by": "hook"})


@pytest.mark.parametrize("tellers", list(PERMISSIONS), indirect=True)
def test_a_permission_told_by_both_at_once_is_one_event(
    tellers: Tellers, rds: redis.Redis, keys: Keys
) -> None:
    capture, found, command = PERMISSIONS[tellers.agent.program]
    screen = (FIXTURES / capture).read_text(encoding="utf-8")
    told_first: set[str] = set()
    with open_bus(tellers.conf) as conn:
        for round_ in range(ROUNDS):
            _fresh(rds, keys, tellers.agent.id)
            after = _last_id(rds, keys)
            _together(tellers.pane(screen), tellers.hook(conn, found), AHEAD[round_ % len(AHEAD)])
            events = _events_since(rds, keys, after)
            told = [e for e in events if e["type"] == "permission"]
            assert len(told) == 1, (round_, [(e["type"], e["msg"]) for e in events])
            prompt = rds.hgetall(keys.prompt(tellers.agent.id))
            assert prompt["id"] == told[0]["data"]["prompt_id"], round_
            assert (prompt["tool"], prompt["detail"]) == ("Bash", command), round_  # the hook's, either way
            details = [e for e in events if e["type"] == "dialog_detail"]
            if "tool" in told[0]["data"]:  # the hook's event: the watcher adopted it silently
                told_first.add("hook")
                assert details == [], round_
            else:  # the watcher's event, then the hook's detail for the same message
                told_first.add("pane")
                [detail] = details
                assert (detail["data"]["prompt_id"], detail["data"]["detail"]) == (prompt["id"], command)
    assert told_first == {"hook", "pane"}  # both orders were tried


def test_a_question_told_by_both_at_once_is_one_question(
    tellers: Tellers, rds: redis.Redis, keys: Keys
) -> None:
    screen = (FIXTURES / "dialogs" / "ask-200.claude-2.1.332.txt").read_text(encoding="utf-8")
    with open_bus(tellers.conf) as conn:
        for round_ in range(ROUNDS):
            _fresh(rds, keys, tellers.agent.id)
            after = _last_id(rds, keys)
            _together(tellers.pane(screen), tellers.hook(conn, _claude(ASK)), AHEAD[round_ % len(AHEAD)])
            events = _events_since(rds, keys, after)
            asked = [e for e in events if e["type"] in ("question", "dialog_detail")]
            assert len(asked) == 1, (round_, [(e["type"], e["msg"]) for e in events])
            prompt = rds.hgetall(keys.prompt(tellers.agent.id))
            question = asked[0]["data"]["question_id"]
            assert prompt["question_id"] == question, round_
            assert rds.zrange(keys.questions, 0, -1) == [question], round_  # the one people answer
            rds.delete(keys.question(question))
            rds.delete(keys.questions)


@pytest.mark.parametrize("first", ["pane", "hook"])
def test_a_dialog_closed_between_the_two_tellings_is_one_event(
    tellers: Tellers, rds: redis.Redis, keys: Keys, first: str
) -> None:
    """One tells the dialog, a person answers it at once and it closes, then the other tells it: the
    watcher saw it close (or never saw it), and the hook that ran late tells nothing."""
    capture, found, _command = PERMISSIONS["claude"]
    screen = (FIXTURES / capture).read_text(encoding="utf-8")
    closed = (FIXTURES / "pane-states" / "complete-cc2.1.332-bullet-w80.txt").read_text(encoding="utf-8")
    _fresh(rds, keys, tellers.agent.id)
    with open_bus(tellers.conf) as conn:
        (tellers.pane(screen) if first == "pane" else tellers.hook(conn, found))()
        prompt = tellers.rt.prompts.get(tellers.agent.id)
        assert prompt is not None and tellers.rt.prompts.claim(prompt.id, tellers.agent.id)  # answered
        tellers.pane(closed)()  # the watcher's next look: the dialog is gone
        if first == "pane":
            tellers.hook(conn, found)()
    told = [e["type"] for e in _events_since(rds, keys, "0-0") if e["type"] != "state"]
    assert told == ["permission"]
