"""The real Gemini CLI (pinned), offline against the scripted Gemini API, its worker running: a turn an API
error ends is told once, as `error` (not `waiting`: 0.61.0 hands AfterAgent only "[no response text]",
and the error is in its chat log); a used-up quota is told once, as `limited`, the agent parked until the
reset Gemini CLI names, whether Gemini CLI ends the turn on it at once or asks "Usage limit reached for
gemini-2.5-flash … 1. Keep trying / 2. Stop" first (the pane watcher reads that dialog); the person's
"Stop" adds nothing, and at the reset the worker sends the agent on."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.fake_gemini.script import invalid, quota, reply
from tests.fake_gemini.server import NOTHING_SCRIPTED, FakeGemini
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER, WAITING_MARKER

pytestmark = [pytest.mark.gemini, pytest.mark.timeout(300)]
TURN = 90.0  # deadline for one turn of a cold CLI (about 5 s to start, hooks of ~0.3 s each) on 2 busy cores
TOLD = ("complete", "waiting", "error", "limited", "permission")  # the events that tell a turn's end
LIMIT_DIALOG = "Usage limit reached for gemini-2.5-flash."
IDLE = "Type your message"


@pytest.fixture
def gemini_worker(gemini_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker`: its relay runs the hooks of the agents, its pane watcher reads their screens."""
    with worker_running(gemini_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


def _told(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    found = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return [e for e in found if e["type"] in TOLD]


def _limit_drawn(screen: str) -> str | None:
    """The screen once it shows the usage-limit dialog, or the quota's error under the last prompt."""
    return screen if LIMIT_DIALOG in screen or "Suggested retry after" in screen else None


def _ready(ib: IbRunner, rds: redis.Redis, keys: Keys, name: str) -> None:
    """A Gemini agent whose first turn ended (`waiting`), so the next message starts a turn of its own."""
    done = ib.run("new-agent", "wait for orders", "--name", name, "--cli", "gemini")
    assert done.returncode == 0, done.stderr
    retry_until(lambda: [e["type"] for e in _told(rds, keys)] == ["waiting"], TURN, what="the first turn")


def test_an_api_error_that_ends_the_turn_is_told_once_as_error(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, gemini_worker: Worker
) -> None:
    gemini.script(reply(f"Ready.\n\n{WAITING_MARKER}"), invalid("The scripted request was refused."))
    _ready(gemini_ib, rds, keys, "gem")
    sent = gemini_ib.run("send", "gem", "go on")
    assert sent.returncode == 0, sent.stderr
    try:
        retry_until(lambda: len(_told(rds, keys)) == 2, TURN, what="the turn's end told")
    except AssertionError as e:  # what the send left on screen says why (seen once in a full run)
        raise AssertionError(
            f"{e}\nrequests: {len(gemini.turns_taken())}\n{pane_text(gemini_ib, 'gem')}"
        ) from None
    retry_until(lambda: "✕ [API Error" in pane_text(gemini_ib, "gem"), TURN, what="the error drawn")
    told = _told(rds, keys)[1]
    assert (told["type"], told["msg"]) == ("error", "gem: the turn ended with an API error (other)")
    data = told["data"]
    assert isinstance(data, dict) and "INVALID_ARGUMENT" in str(data["last_message"])
    assert rds.hget(keys.agent("gem"), "state") == "error"
    assert len(_told(rds, keys)) == 2  # the pane's error added nothing


def test_a_used_up_quota_is_told_once_as_limited_until_the_reset_gemini_names(
    gemini_ib: IbRunner,
    gemini: FakeGemini,
    rds: redis.Redis,
    keys: Keys,
    gemini_worker: Worker,
    tmux_socket: str,
) -> None:
    gemini.script(reply(f"Ready.\n\n{WAITING_MARKER}"))
    _ready(gemini_ib, rds, keys, "capped")
    gemini.set_default(quota(3600))  # a used-up quota answers every request with a 429
    sent_at = time.time()
    sent = gemini_ib.run("send", "capped", "go on")
    assert sent.returncode == 0, sent.stderr
    retry_until(lambda: len(_told(rds, keys)) == 2, TURN, what="the limit told")
    screen = retry_until(lambda: _limit_drawn(pane_text(gemini_ib, "capped")), TURN, what="the limit drawn")
    asked = LIMIT_DIALOG in screen
    if asked:  # the person stops it: the turn ends on the error, already told
        session = str(rds.hget(keys.agent("capped"), "session"))
        subprocess.run(["tmux", "-L", tmux_socket, "send-keys", "-t", session, "2"], check=True)
        retry_until(lambda: "Suggested retry after" in pane_text(gemini_ib, "capped"), TURN, what="stopped")
    gemini.set_default(reply(NOTHING_SCRIPTED))
    retry_until(lambda: IDLE in pane_text(gemini_ib, "capped"), TURN, what="the input box again")
    told = _told(rds, keys)[1]
    assert told["type"] == "limited" and str(told["msg"]).startswith("capped is limited until")
    data = told["data"]
    assert isinstance(data, dict)
    assert data.get("seen") == ("pane" if asked else None)  # the dialog read by the pane, else the hook
    # Gemini CLI's own reset ("Access resets at 1:43 PM UTC." / "Suggested retry after 3600s."), to the
    # minute: not the 5 minutes of a limit that names none
    assert data["reset_source"] == "text" and float(data["reset_at"]) > sent_at + 3000
    assert rds.hget(keys.agent("capped"), "state") == "limited"
    shown = json.loads(gemini_ib.run("limits", "--json").stdout)["limits"]
    assert [s["agents"] for s in shown] == [["capped"]]
    assert len(_told(rds, keys)) == 2  # the person's Stop, and the error on screen, added nothing


def _limited_on_a_turn(gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys) -> None:
    """Agent `capped` waits; the turn `ib send` starts meets a used-up quota, told once as `limited`."""
    gemini.script(reply(f"Ready.\n\n{WAITING_MARKER}"))
    _ready(gemini_ib, rds, keys, "capped")
    gemini.set_default(quota(3600))
    sent = gemini_ib.run("send", "capped", "go on")
    assert sent.returncode == 0, sent.stderr
    retry_until(lambda: [e["type"] for e in _told(rds, keys)][1:] == ["limited"], TURN, what="the limit told")


def test_at_the_reset_the_parked_agent_goes_on(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, gemini_worker: Worker
) -> None:
    """The worker resumes the agent at its reset as any other: its Enter picks the dialog's "1. Keep
    trying" when the dialog still asks (the text it pastes first goes nowhere), or it sends "continue";
    the turn goes on and completes."""
    _limited_on_a_turn(gemini_ib, gemini, rds, keys)
    gemini.set_default(reply(f"Done now.\n\n{COMPLETION_MARKER}"))  # the quota is back
    rds.hset(keys.limit("default"), "reset_at", f"{time.time() - 1:.3f}")  # and so is the reset
    retry_until(lambda: len(_told(rds, keys)) == 3, TURN, what="the turn's end")
    assert [e["type"] for e in _told(rds, keys)] == ["waiting", "limited", "complete"]
    assert rds.hget(keys.agent("capped"), "state") == "complete"


def test_at_the_reset_a_quota_still_used_up_parks_the_agent_again(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, gemini_worker: Worker
) -> None:
    """ "Keep trying" into a quota still used up draws the same dialog again: a new limit, told once and
    parked on (the agent stayed `limited` with nothing parked, and was never resumed again)."""
    _limited_on_a_turn(gemini_ib, gemini, rds, keys)
    tries = len(gemini.turns_taken())
    rds.hset(keys.limit("default"), "reset_at", f"{time.time() - 1:.3f}")  # the reset came; the quota did not
    try:
        retry_until(lambda: len(_told(rds, keys)) == 3, TURN, what="the limit told again")
    except AssertionError as e:  # what the agent shows and its record say why (once in a full run)
        record = rds.hgetall(keys.agent("capped"))
        raise AssertionError(
            f"{e}\nrequests: {len(gemini.turns_taken())}\nrecord: {record}\n{pane_text(gemini_ib, 'capped')}"
        ) from None
    assert [e["type"] for e in _told(rds, keys)] == ["waiting", "limited", "limited"]
    assert len(gemini.turns_taken()) > tries  # it did try again
    shown = json.loads(gemini_ib.run("limits", "--json").stdout)["limits"]
    assert [s["agents"] for s in shown] == [["capped"]]
    assert rds.hget(keys.agent("capped"), "state") == "limited"


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini-0.61.0"


def _after_agent(ib: IbRunner, log: Path) -> None:
    """Gemini CLI's AfterAgent for a turn an API error ended, as 0.61.0 sends it, through `ib hook gemini`."""
    payload = {
        "session_id": "s-1",
        "transcript_path": str(log),
        "cwd": str(ib.cwd),
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-11-29T12:44:21.627Z",
        "prompt": "and now (1)",
        "prompt_response": "[no response text]",
        "stop_hook_active": False,
    }
    done = ib.run("hook", "gemini", stdin=json.dumps(payload), env={"IB_AGENT_ID": "g1"})
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("cut", "source"),
    [(b'"and again (1)"', "text"), (None, "none")],
    ids=["quota-with-reset", "per-day-quota"],
)
def test_a_turn_that_ended_on_the_quota_is_told_limited_by_the_after_agent_hook(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path, cut: bytes | None, source: str
) -> None:
    """The quota error without the dialog (0.61.0 asks on some such turns, ends others at once): the chat
    log's error parks the agent, with the reset it names ("Suggested retry after 3600s") or, the per-day
    quota naming none, 5 minutes; a second AfterAgent of the same limit (after the dialog's Stop) adds
    nothing."""
    data = (FIXTURES / "chat-api-errors.jsonl").read_bytes()
    log = tmp_path / "session.jsonl"
    log.write_bytes(data if cut is None else data[: data.rfind(b"\n", 0, data.index(cut)) + 1])
    rds.hset(keys.agent("g1"), mapping={"id": "g1", "project": "p", "state": "running"})
    before = time.time()
    _after_agent(ib, log)
    _after_agent(ib, log)
    (told,) = _told(rds, keys)
    data_told = told["data"]
    assert told["type"] == "limited" and isinstance(data_told, dict)
    assert data_told["kind"] == "rate_limit" and data_told["reset_source"] == source
    wait = 3600 if source == "text" else 300
    assert before + wait - 60 < float(data_told["reset_at"]) < time.time() + wait + 1
    assert rds.hget(keys.agent("g1"), "state") == "limited"
    assert rds.sismember(keys.limit_agents("default"), "g1")
