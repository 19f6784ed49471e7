"""The real Claude Code (pinned) as a manager and its worker, offline against the scripted Messages API:
the worker's note to its manager and the manager's `ib send` to its worker arrive through each one's
inbox (Claude Code frames them as from another session); what the person sends is typed, their own
voice; `ib info` says which path; a worker killed with SIGKILL leaves a stale inbox, dropped in one line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, Request, bash, reply
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TIMEOUT = 120.0  # a cold CLI start on 2 busy cores takes seconds; the deadline only
FRAMED = "Another Claude session sent a message"  # how Claude Code 2.1.332 hands over an inbox message


def _carries(request: Request, text: str) -> bool:
    return request.kind == "turn" and text in json.dumps(request.body, ensure_ascii=False)


def _first_with(anthropic: FakeAnthropic, text: str) -> Request:
    anthropic.wait_for(lambda log: any(_carries(r, text) for r in log), TIMEOUT, f"a request with {text!r}")
    return next(r for r in anthropic.requests() if _carries(r, text))


def _turn_ends(rds: redis.Redis, keys: Keys, agent: str) -> int:
    found = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    return sum(1 for e in found if e.get("agent") == agent and e["type"] in ("complete", "waiting"))


@contextlib.contextmanager
def _screens_shown(ib: IbRunner) -> Iterator[None]:
    """The agents' screens in the output of a failed test."""
    try:
        yield
    finally:
        for agent in ("boss", "kid"):
            print(f"--- {agent}:\n{pane_text(ib, agent, 60)}")


@dataclass(frozen=True)
class Talk:
    """The model requests that carried each message of `_talk`."""

    note: Request  # the worker's Stop note, to its manager
    typed: Request  # the person's `ib send boss`
    heard: Request  # the manager's `ib send kid`


def _talk(ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys) -> Talk:
    """A manager `boss` spawned, its worker `kid`, whose first turn ends (its Stop hook's note goes to
    boss); then the person asks boss to tell kid something, and boss runs `ib send kid …`."""
    anthropic.set_default(reply("OK.\n\nWAITING"))
    assert ib.run("new-agent", "Lead the work.", "--name", "boss").returncode == 0
    retry_until(lambda: _turn_ends(rds, keys, "boss") >= 1, TIMEOUT, 0.2, "boss's first turn")
    spawned = ib.run("new-agent", "Write the code.", "--name", "kid", "--manager", "boss", "--worker")
    assert spawned.returncode == 0, spawned.stderr
    note = _first_with(anthropic, "[sent by agent kid]: [hook]: Your subtask kid")
    retry_until(lambda: _turn_ends(rds, keys, "boss") >= 2, TIMEOUT, 0.2, "boss's turn on the note")
    # the agent's own `ib` (its PATH's, which its permissions allow), as a model runs it
    anthropic.script(reply("Telling kid.", bash("ib send kid add the tests too", "tell")))
    told = ib.run("send", "boss", "tell kid to add tests")  # the person: typed, the user's voice
    assert told.returncode == 0, told.stderr
    typed = _first_with(anthropic, "tell kid to add tests")
    return Talk(note, typed, _first_with(anthropic, "[sent by agent boss]: add the tests too"))


def _framed(request: Request) -> bool:
    return FRAMED in json.dumps(request.body["messages"], ensure_ascii=False)


@pytest.mark.timeout(600)
def test_agents_talk_through_their_inboxes_and_the_person_types(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    ib = claude_ib
    with worker_running(ib, tmp_path / "worker.log", rds, keys), _screens_shown(ib):
        talk = _talk(ib, anthropic, rds, keys)
        assert _framed(talk.note) and _framed(talk.heard)  # into boss's inbox, then into kid's
        assert "tell kid to add tests" in (talk.typed.user_text() or "")
        assert FRAMED not in (talk.typed.user_text() or "")
        for agent in ("boss", "kid"):
            assert "from agents through its inbox /tmp/cc-socks/" in ib.run("info", agent).stdout
        log = (ib.cwd / ".ib" / "agents" / "kid" / "agent.log").read_text()
        assert "Received message from boss (through its inbox): add the tests too" in log

        pid = int(rds.hget(keys.agent_inbox("kid"), "pid") or 0)
        left = Path(str(rds.hget(keys.agent_inbox("kid"), "socket")))
        assert pid > 0 and left.name == f"{pid}.sock"
        os.kill(pid, signal.SIGKILL)  # the socket file stays; nobody answers
        try:
            shown: list[str] = []

            def dropped() -> bool:  # the kill takes effect when the process is reaped
                info = ib.run("info", "kid")
                shown[:] = [info.stdout + info.stderr]
                return "dropped its inbox" in info.stdout

            try:
                retry_until(dropped, TIMEOUT, 0.5, "the stale inbox dropped")
            except AssertionError as e:
                raise AssertionError(f"{e}\n{shown[0]}") from e
            lines = [x for x in shown[0].splitlines() if "dropped its inbox" in x]
            assert len(lines) == 1 and "the session was killed" in lines[0], shown[0]
            assert lines[0].startswith("messages:  typed into its pane")
        finally:
            left.unlink(missing_ok=True)  # Claude Code's own, left by the kill


@pytest.mark.timeout(600)
def test_agents_without_an_inbox_are_typed_to(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """`CLAUDE_CODE_HARBOR_KITE=0` (as an older Claude Code): no inbox, so every message is typed."""
    ib = claude_ib
    ib.env["CLAUDE_CODE_HARBOR_KITE"] = "0"
    with worker_running(ib, tmp_path / "worker.log", rds, keys), _screens_shown(ib):
        talk = _talk(ib, anthropic, rds, keys)
        assert "[sent by agent kid]: [hook]: Your subtask kid" in (talk.note.user_text() or "")
        assert "[sent by agent boss]: add the tests too" in (talk.heard.user_text() or "")
        assert not any(_framed(r) for r in (talk.note, talk.typed, talk.heard))
        for agent in ("boss", "kid"):
            info = ib.run("info", agent).stdout
            assert "messages:  typed into its pane (no inbox recorded: Claude Code older than" in info
            assert not rds.exists(keys.agent_inbox(agent))
        log = ib.cwd / ".ib" / "agents" / "kid" / "agent.log"  # written once the send saw the text leave
        retry_until(lambda: "Received message from boss: add the tests too" in log.read_text(), TIMEOUT, 0.1)
