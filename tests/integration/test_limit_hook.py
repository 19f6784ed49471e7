"""A turn that ends on a usage limit, as Claude Code's StopFailure hook tells it (`ib hook event`), parks the
agent with its reset on the bus; bad resets are said in the `limited` event; `ib worker` resumes the agent
at the reset from what Redis holds, also when it starts after the limit began. The same with the real CLI:
tests/integration/test_limits_claude.py."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.stores.hashes import write_hash
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.programs.claude.signals import outcome

WORKER = "w-limits"
YEAR = 365 * 86400


def _events(rds: redis.Redis, keys: Keys, type_: str) -> list[dict[str, Any]]:
    found = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return [e for e in found if e["type"] == type_]


def _limit(ib: IbRunner, agent: str = "a1", **payload: Any) -> None:
    body = {"hook_event_name": "StopFailure", "error": "rate_limit", "session_id": "s", **payload}
    done = ib.run("hook", "event", stdin=json.dumps(body), env={"IB_AGENT_ID": agent})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def _agent(ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, agent: str, out: Path) -> None:
    """An agent of this test's worker whose pane writes what it is sent to `out`."""
    session = f"ib-test-{agent}"
    shown = f"echo 'ready for input'; exec cat >> {out}"  # drawn: a send waits for a program's first screen
    subprocess.run(["tmux", "-L", tmux_socket, "new-session", "-d", "-s", session, shown], check=True)
    record = {"id": agent, "session": session, "worker": WORKER, "state": "running", "root": str(ib.cwd)}
    write_hash(rds, keys.agent(agent), {**record, "project": "p"})
    rds.sadd(keys.agents, agent)


@pytest.fixture
def sent(ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, tmp_path: Path) -> Path:
    """Agent `a1` running in its own tmux pane; the file that gathers what the pane was sent."""
    ib.env.update({"IB_TMUX_SOCKET": tmux_socket, "IB_WORKER_ID": WORKER, "IB_STATUS_NODE_AUTO": "false"})
    out = tmp_path / "sent.txt"
    out.touch()
    _agent(ib, rds, keys, tmux_socket, "a1", out)
    return out


def _in_an_hour() -> tuple[str, float]:
    """ "resets 3:05am (UTC)" an hour or so ahead, as Claude Code shows a reset, and its epoch seconds."""
    moment = (datetime.now(UTC) + timedelta(hours=1)).replace(second=0, microsecond=0)
    clock = f"{(moment.hour % 12) or 12}:{moment.minute:02d}{'pm' if moment.hour >= 12 else 'am'}"
    text = f"API Error: Request rejected (429) · 5-hour limit reached · resets {clock} (UTC)"
    return text, moment.timestamp()


def test_the_reset_shown_beside_the_error_is_the_one_waited_for(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    text, at = _in_an_hour()
    _limit(ib, last_assistant_message=text)
    [limited] = _events(rds, keys, "limited")
    assert (limited["data"]["reset_at"], limited["data"]["reset_source"]) == (at, "text")
    assert (limited["data"]["note"], limited["data"]["window"]) == ("", "five_hour")
    assert rds.smembers(keys.limit_agents("default")) == {"a1"}


BAD_RESETS = {
    "past": (
        {"rate_limits": {"resets_at": 1_000_000_000, "rate_limit_type": "five_hour"}},
        "header",
        "is past: resuming at once",
    ),
    "years-ahead": (
        {"rate_limits": {"resets_at": time.time() + 3 * YEAR, "rate_limit_type": "five_hour"}},
        "header",
        "more than the five_hour window: capped to",
    ),
    "garbled-header-no-text": (
        {"rate_limits": {"resets_at": "soon"}, "last_assistant_message": "API Error: 429"},
        "none",
        "no reset time given: trying again in 5 min",
    ),
    "plan-limit-words-no-reset": (
        {"last_assistant_message": "You've hit your 5-hour limit"},
        "none",
        "no reset time given",
    ),
    "recorded-reset-unparsable": (
        {"rate_limits": {"api_error": "usage_limit_reached", "status": "rejected", "resets_at": "soon"}},
        "none",
        "no reset time given",
    ),
}


@pytest.mark.parametrize(("payload", "source", "note"), BAD_RESETS.values(), ids=BAD_RESETS.keys())
def test_a_bad_reset_is_said_in_the_limited_event(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path, payload: dict[str, Any], source: str, note: str
) -> None:
    before = time.time()
    _limit(ib, **payload)
    after = time.time()
    [limited] = _events(rds, keys, "limited")
    data = limited["data"]
    assert (data["reset_source"], data["account"]) == (source, "default")
    assert note in data["note"]
    assert limited["msg"].startswith(f"a1 is limited until {data['until']} (five_hour)")
    assert note in limited["msg"]
    waits = {"past": 0.0, "capped": 5 * 3600.0, "no reset": 300.0}
    [wait] = [w for word, w in waits.items() if word in note]
    assert before + wait - 1 <= data["reset_at"] <= after + wait + 1
    assert rds.hget(keys.agent("a1"), "state") == "limited"


def test_a_limit_is_told_once_and_stands_until_the_next_turn(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    text, _at = _in_an_hour()
    _limit(ib, last_assistant_message=text)
    _limit(ib, last_assistant_message=text)  # Claude Code's hooks may run twice; the person hears once
    idle = {"hook_event_name": "Notification", "notification_type": "idle_prompt", "session_id": "s"}
    assert ib.run("hook", "event", stdin=json.dumps(idle), env={"IB_AGENT_ID": "a1"}).returncode == 0
    assert len(_events(rds, keys, "limited")) == 1
    assert not _events(rds, keys, "waiting")
    woke = ib.run("listen", "--timeout", "30", timeout=60)  # the person's session hears of it by default
    assert [json.loads(line)["type"] for line in woke.stdout.splitlines() if line.startswith("{")] == [
        "limited"
    ]
    shown = ib.run("limits")
    assert shown.returncode == 0, shown.stderr
    until = _events(rds, keys, "limited")[0]["data"]["until"]
    assert f"default: limited until {until} (five_hour" in shown.stdout
    assert "parked: a1" in shown.stdout


def test_another_agent_of_the_limited_account_waits_for_the_same_reset(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path, tmux_socket: str, tmp_path: Path
) -> None:
    _agent(ib, rds, keys, tmux_socket, "a2", tmp_path / "a2.txt")
    _limit(ib, last_assistant_message=_in_an_hour()[0])
    _limit(ib, "a2", last_assistant_message="You've hit your 5-hour limit")  # no reset of its own
    first, second = _events(rds, keys, "limited")
    assert second["data"]["reset_at"] == first["data"]["reset_at"]
    assert second["data"]["reset_source"] == "account"
    assert json.loads(ib.run("limits", "--json").stdout)["limits"][0]["agents"] == ["a1", "a2"]


def test_a_worker_started_after_the_limit_resumes_the_agent_at_its_reset(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    _limit(ib, rate_limits={"resets_at": time.time() - 5, "rate_limit_type": "five_hour"})
    assert json.loads(ib.run("limits", "--json").stdout)["limits"][0]["agents"] == ["a1"]
    done = ib.run("worker", "--once")  # a worker that was not running when the limit began
    assert done.returncode == 0, done.stderr
    retry_until(lambda: "continue" in sent.read_text(), 10.0, 0.1, "continue typed into the pane")
    [resumed] = _events(rds, keys, "resumed")
    assert (resumed["agent"], resumed["data"]["account"]) == ("a1", "default")
    assert resumed["data"]["sent"] == "continue"
    assert json.loads(ib.run("limits", "--json").stdout) == {"limits": []}
    assert ib.run("worker", "--once").returncode == 0  # nothing more to resume: no second `resumed`
    assert len(_events(rds, keys, "resumed")) == 1


def test_an_agent_someone_went_on_with_is_not_resumed_again(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    _limit(ib, rate_limits={"resets_at": time.time() - 5})
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "go on", "session_id": "s"}
    assert ib.run("hook", "event", stdin=json.dumps(prompt), env={"IB_AGENT_ID": "a1"}).returncode == 0
    assert rds.hget(keys.agent("a1"), "state") == "running"
    assert ib.run("worker", "--once").returncode == 0
    assert not _events(rds, keys, "resumed")
    assert sent.read_text() == ""
    assert json.loads(ib.run("limits", "--json").stdout) == {"limits": []}


def test_without_hooks_the_pane_parks_the_agent_once(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, tmp_path: Path
) -> None:
    ib.env.update({"IB_TMUX_SOCKET": tmux_socket, "IB_WORKER_ID": WORKER, "IB_STATUS_NODE_AUTO": "false"})
    text, at = _in_an_hour()
    screen = tmp_path / "screen.txt"
    screen.write_text(f"> add a flag\n\n● {text}\n\n> \n", encoding="utf-8")
    session = "ib-test-quiet"
    shown = f"cat {screen}; sleep 600"
    # as wide as ittybus makes an agent's pane: at tmux's default 80 columns the error line wraps when the
    # reset's hour has two digits, and the watcher reads it in two pieces
    wide = ["-x", "200", "-y", "50"]
    subprocess.run(["tmux", "-L", tmux_socket, "new-session", "-d", "-s", session, *wide, shown], check=True)
    record = {"id": "quiet", "session": session, "worker": WORKER, "state": "running", "root": str(ib.cwd)}
    write_hash(rds, keys.agent("quiet"), {**record, "project": "p"})  # no hook ever set its state
    rds.sadd(keys.agents, "quiet")
    retry_until(lambda: text in _screen(tmux_socket, session), 10.0, 0.1, "the screen drawn")
    for _ in range(2):
        assert ib.run("worker", "--once").returncode == 0
    [limited] = _events(rds, keys, "limited")
    assert (limited["agent"], limited["data"]["seen"], limited["data"]["reset_at"]) == ("quiet", "pane", at)
    assert rds.hget(keys.agent("quiet"), "state") == "limited"
    assert rds.smembers(keys.limit_agents("default")) == {"quiet"}


def _screen(tmux_socket: str, session: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", tmux_socket, "capture-pane", "-p", "-t", session],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def test_a_limit_spooled_while_redis_was_away_parks_the_agent_once_the_worker_reads_it(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    """With Redis away the hook parks nothing and spools its event (bus.events.spool, per bus: flushed to this
    one later); here that event reaches the bus as the flush publishes it, and the worker parks the agent."""
    rds.hset(keys.agent("a1"), mapping={"state_by": "hook", "state_at": f"{time.time() - 5:.3f}"})
    text, at = _in_an_hour()
    body = {"hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": text}
    found = outcome(body, "a1")
    assert found is not None
    spooled = make_event(found.event_type, found.message, sender="a1", agent="a1", data=found.data)
    assert ib.run("worker", "--once").returncode == 0  # the worker's place in the events stream, as it runs
    publish(rds, keys, spooled, 1000)
    assert ib.run("worker", "--once").returncode == 0
    assert rds.hget(keys.agent("a1"), "state") == "limited"
    assert rds.smembers(keys.limit_agents("default")) == {"a1"}
    assert float(rds.hget(keys.limit("default"), "reset_at") or 0) == at
    assert len(_events(rds, keys, "limited")) == 1  # the spooled one told the person; no second


def test_a_spooled_limit_of_an_agent_that_went_on_since_parks_nothing(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    body = {"hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": "429"}
    found = outcome(body, "a1")
    assert found is not None
    old = make_event(found.event_type, found.message, sender="a1", agent="a1", data=found.data,
                     ts="2026-01-01T00:00:00+00:00")  # fmt: skip
    rds.hset(keys.agent("a1"), mapping={"state_by": "hook", "state_at": f"{time.time():.3f}"})
    assert ib.run("worker", "--once").returncode == 0
    publish(rds, keys, old, 1000)
    assert ib.run("worker", "--once").returncode == 0
    assert rds.hget(keys.agent("a1"), "state") == "running"
    assert json.loads(ib.run("limits", "--json").stdout) == {"limits": []}


PLAIN_429S = {
    "no-text": {},
    "organisation-limit": {
        "last_assistant_message": "API Error: Request rejected (429) · This request would exceed the rate "
        "limit for your organization of 50 requests per minute."
    },
    "not-your-usage-limit": {
        "last_assistant_message": "API Error: Server is temporarily limiting requests (not your usage limit)"
    },
    "quota-allowed": {"rate_limits": {"status": "allowed", "resets_at": 1795917169}},
}


@pytest.mark.parametrize("payload", PLAIN_429S.values(), ids=PLAIN_429S.keys())
def test_a_plain_429_is_an_error_and_limits_no_account(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path, payload: dict[str, Any]
) -> None:
    _limit(ib, **payload)
    [error] = _events(rds, keys, "error")
    assert error["data"]["kind"] == "rate_limit"
    assert error["msg"] == "a1: the turn ended on a rate limit (429), not the plan's usage limit"
    assert not _events(rds, keys, "limited")
    assert rds.hget(keys.agent("a1"), "state") == "error"
    assert not rds.smembers(keys.limits)
    assert ib.run("limits").stdout == "no account is limited\n"


def _transcript(path: Path, entry: dict[str, Any]) -> Path:
    """A transcript whose turn ended on `entry`, as Claude Code 2.1.332 writes one."""
    user = {"type": "user", "message": {"role": "user", "content": "add a flag"}}
    lines = [user, entry, {"type": "last-prompt", "lastPrompt": "add a flag"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _error_entry(text: str, **fields: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"type": "assistant", "message": {"role": "assistant", "content": content}, "error": "rate_limit",
            "isApiErrorMessage": True, "apiErrorStatus": 429, **fields}  # fmt: skip


def test_the_quota_in_the_transcript_names_the_limit_and_its_reset(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path, tmp_path: Path
) -> None:
    reset = float(int(time.time()) + 3000)  # off the minute: the text ("resets 2:40am") rounds it
    quota = {"status": "rejected", "resetsAt": int(reset), "rateLimitType": "seven_day"}
    entry = _error_entry("You've hit your weekly limit", apiError="usage_limit_reached", quotaLimits=quota)
    _limit(ib, transcript_path=str(_transcript(tmp_path / "t.jsonl", entry)), last_assistant_message="x")
    [limited] = _events(rds, keys, "limited")
    assert (limited["data"]["reset_at"], limited["data"]["reset_source"]) == (reset, "header")
    assert limited["data"]["window"] == "seven_day"


def test_a_transcript_without_quota_leaves_a_plain_429_an_error(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path, tmp_path: Path
) -> None:
    entry = _error_entry("API Error: Request rejected (429) · rate limit", apiErrorIsTransient=False)
    _limit(ib, transcript_path=str(_transcript(tmp_path / "t.jsonl", entry)), last_assistant_message="x")
    assert [e["data"]["kind"] for e in _events(rds, keys, "error")] == ["rate_limit"]
    assert not _events(rds, keys, "limited")


def test_a_parked_agent_gone_from_the_bus_is_not_shown_and_the_limit_lifts(
    ib: IbRunner, rds: redis.Redis, keys: Keys, sent: Path
) -> None:
    _limit(ib, rate_limits={"resets_at": time.time() - 5, "rate_limit_type": "five_hour"})
    rds.delete(keys.agent("a1"))  # torn down by an ittybus that did not unpark it
    assert json.loads(ib.run("limits", "--json").stdout)["limits"][0]["agents"] == []
    assert ib.run("worker", "--once").returncode == 0
    assert json.loads(ib.run("limits", "--json").stdout) == {"limits": []}
