"""`ib hook codex` (hooks.json, JSON on stdin) and `ib hook codex-notify` (JSON as the last argument) as
Codex CLI 0.169.0 runs them, fed the payloads it sent in a real run (tests/fixtures/codex-0.169.0/signals):
the agent's states and its session log, one `permission` with its dialog recorded, one `complete` for a
turn both Stop and notify tell, nothing for the title thread, and bad input that never fails the session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_openai.client import CODEX_VERSION
from tests.streams import stream_entries

SIGNALS = Path(__file__).resolve().parent.parent / "fixtures" / f"codex-{CODEX_VERSION}" / "signals"


def _real(name: str) -> dict[str, Any]:
    loaded = json.loads((SIGNALS / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _hook(ib: IbRunner, payload: object) -> None:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    done = ib.run("hook", "codex", stdin=raw, env={"IB_AGENT_ID": "a1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def _notify(ib: IbRunner, payload: object) -> None:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    done = ib.run("hook", "codex-notify", raw, env={"IB_AGENT_ID": "a1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]


@pytest.fixture
def agent(rds: redis.Redis, keys: Keys) -> str:
    rds.hset(keys.agent("a1"), mapping={"id": "a1", "project": "p", "state": "waiting"})
    return "a1"


def test_a_real_turn_with_an_approval_is_told_once_each(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    started = _real("none-hook-session-start.json")
    _hook(ib, started)
    # its session log, for the worker's tail from the start of the first turn
    assert rds.hget(keys.agent(agent), "transcript_path") == started["transcript_path"]
    _hook(ib, _real("running-hook-user-prompt-submit.json"))
    assert rds.hget(keys.agent(agent), "state") == "running"
    _notify(ib, _real("none-notify-title-thread.json"))  # arrives while the turn runs
    assert rds.hget(keys.agent(agent), "state") == "running"
    _hook(ib, _real("permission-hook-permission-request.json"))
    assert rds.hgetall(keys.prompt(agent))["detail"] == "rm -rf build && echo rebuilt"
    _hook(ib, _real("running-hook-post-tool-use.json"))
    assert not rds.exists(keys.prompt(agent))  # the dialog was answered
    _hook(ib, _real("complete-hook-stop.json"))
    _notify(ib, _real("complete-notify.json"))  # the same turn's end, told again
    types = [e["type"] for e in _events(rds, keys)]
    assert types == ["state", "permission", "state", "complete"]
    assert rds.hget(keys.agent(agent), "state") == "complete"


def test_notify_alone_ends_a_turn_whose_start_was_never_told(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    _notify(ib, _real("complete-notify.json"))
    assert [e["type"] for e in _events(rds, keys)] == ["complete"]
    _notify(ib, _real("waiting-notify.json"))  # the next turn, again with no start signal
    assert [e["type"] for e in _events(rds, keys)] == ["complete", "waiting"]
    assert rds.hget(keys.agent(agent), "state") == "waiting"


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param("not json", id="not-json"),
        pytest.param("[1, 2]", id="a-list"),
        pytest.param({"hook_event_name": "BrandNewEvent"}, id="unknown-event"),
        pytest.param({"hook_event_name": "PermissionRequest", "tool_input": "odd"}, id="odd-input"),
    ],
)
def test_bad_hook_input_never_fails_the_session(ib: IbRunner, payload: object, agent: str) -> None:
    _hook(ib, payload)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param("not json", id="not-json"),
        pytest.param({"type": "something-else"}, id="other-type"),
        pytest.param({"type": "agent-turn-complete", "new-field": {"x": 1}}, id="unknown-fields"),
    ],
)
def test_bad_notify_input_never_fails_the_session(ib: IbRunner, payload: object, agent: str) -> None:
    _notify(ib, payload)


def test_no_argument_at_all(ib: IbRunner) -> None:
    done = ib.run("hook", "codex-notify", env={"IB_AGENT_ID": "a1"})
    assert (done.returncode, done.stderr) == (0, "")
