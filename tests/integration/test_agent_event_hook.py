"""`ib hook event` as Claude Code runs it (JSON on stdin): the agent's state, the events a person needs,
the dialog recorded once, and bad payloads that never fail the session."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.inbox.prompt_record import TOLD_LATE
from bus.inbox.prompts import PromptStore
from bus.inbox.questions import QuestionStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries
from worker.markers import FROM_PANE


def _hook(ib: IbRunner, payload: object, agent: str = "a1") -> None:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    done = ib.run("hook", "event", stdin=raw, env={"IB_AGENT_ID": agent})
    assert (done.returncode, done.stdout) == (0, "")


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]


@pytest.fixture
def agent(rds: redis.Redis, keys: Keys) -> str:
    rds.hset(keys.agent("a1"), mapping={"id": "a1", "project": "p", "state": "running"})
    return "a1"


def test_permission_request_then_notification_is_one_event(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    _hook(ib, {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    _hook(ib, {"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "m"})
    [event] = _events(rds, keys)
    assert (event["type"], event["project"], event["data"]["tool"], event["data"]["detail"]) == (
        "permission", "p", "Bash", "ls",
    )  # fmt: skip
    prompt = rds.hgetall(keys.prompt(agent))
    assert (prompt["id"], prompt["kind"], prompt["detail"]) == (
        event["data"]["prompt_id"],
        "permission",
        "ls",
    )
    assert rds.hmget(keys.agent(agent), ["state", "state_by"]) == ["permission", "hook"]
    _hook(ib, {"hook_event_name": "UserPromptSubmit", "prompt": "go on"})  # the next turn: dialog over
    assert not rds.exists(keys.prompt(agent))
    assert [e["type"] for e in _events(rds, keys)] == ["permission", "state"]


def test_ask_user_question_is_a_question_people_can_answer(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    questions = [{"question": "Which db?", "header": "DB", "options": [{"label": "PG"}, {"label": "Lite"}]}]
    _hook(
        ib,
        {
            "hook_event_name": "PermissionRequest",
            "tool_name": "AskUserQuestion",
            "tool_input": {"questions": questions},
        },
    )
    [event] = _events(rds, keys)
    assert (event["type"], event["data"]["question"], event["data"]["options"]) == (
        "question",
        "Which db?",
        [{"number": 1, "label": "PG"}, {"number": 2, "label": "Lite"}],
    )
    stored = rds.hgetall(keys.question(event["data"]["question_id"]))
    assert (stored["agent"], stored["text"], stored["dialog"]) == (
        "a1",
        "Which db?",
        event["data"]["prompt_id"],
    )
    _hook(ib, {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})  # it went away unanswered
    assert not rds.exists(keys.question(event["data"]["question_id"]))
    assert _events(rds, keys)[-1]["type"] == "stopped"


def test_stop_failure_is_an_error_with_its_kind(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    _hook(ib, {"hook_event_name": "StopFailure", "error": "overloaded", "last_assistant_message": "529"})
    [event] = _events(rds, keys)
    assert (event["type"], event["data"]["kind"]) == ("error", "overloaded")
    assert rds.hget(keys.agent(agent), "state") == "error"


def test_stop_failure_on_a_usage_limit_parks_the_agent(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    said = "You've hit your 5-hour limit"
    _hook(ib, {"hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": said})
    [event] = _events(rds, keys)
    assert (event["type"], event["data"]["kind"]) == ("limited", "rate_limit")
    assert rds.hget(keys.agent(agent), "state") == "limited"


def test_stop_failure_on_a_plain_429_is_an_error(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    _hook(ib, {"hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": "429"})
    [event] = _events(rds, keys)
    assert (event["type"], event["data"]["kind"]) == ("error", "rate_limit")
    assert rds.hget(keys.agent(agent), "state") == "error"


def test_idle_notification_after_the_stop_hook_says_nothing_new(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    rds.hset(keys.agent(agent), "state", "waiting")
    _hook(ib, {"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "idle"})
    assert _events(rds, keys) == []


BAD = {
    "not-json": "{not json",
    "a-list": "[1, 2]",
    "empty": "",
    "binary": "\x00\x01\x02",
    "no-event-name": {"tool_name": "Bash"},
    "unknown-notification-type": {"hook_event_name": "Notification", "notification_type": "new_kind"},
    "missing-everything": {"hook_event_name": "PermissionRequest"},
}


@pytest.mark.parametrize("payload", BAD.values(), ids=BAD.keys())
def test_bad_payloads_never_fail(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str, payload: object
) -> None:
    _hook(ib, payload)
    types = [e["type"] for e in _events(rds, keys)]
    assert types in ([], ["notification"], ["permission"])  # kept when it says anything at all


def test_not_one_of_our_agents(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    _hook(ib, {"hook_event_name": "StopFailure", "error": "overloaded"}, agent="stranger")
    assert _events(rds, keys) == []


def test_exit_plan_mode_shows_the_plan_from_the_transcript(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    call = {"type": "tool_use", "id": "toolu_1", "name": "ExitPlanMode", "input": {"plan": "1. Add the flag"}}
    lines = [
        {"type": "user", "message": {"role": "user", "content": "plan it"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [call]}},
        "not json at all",
    ]
    transcript.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    _hook(
        ib,
        {
            "hook_event_name": "PermissionRequest",
            "tool_name": "ExitPlanMode",
            "tool_input": {},
            "transcript_path": str(transcript),
        },
    )
    [event] = _events(rds, keys)
    assert (event["type"], event["data"]["kind"]) == ("permission", "plan")
    assert event["data"]["plan"] == "1. Add the flag"


def _drawn_by_the_pane(rds: redis.Redis, keys: Keys, agent: str, kind: str, title: str) -> tuple[str, str]:
    """What the pane watcher records when it sees a dialog before any hook told it: a prompt and the
    question its buttons answer (worker.service.dialog_events)."""
    prompts, questions = PromptStore(rds, keys), QuestionStore(rds, keys)
    prompt = prompts.record(agent, kind, "", ("Yes", "No"), tool=FROM_PANE, question=title)
    assert prompt is not None
    question = questions.ask(agent, title, "p", ("Yes", "No"), dialog=prompt.id)
    prompts.link_question(agent, prompt.id, question.id)
    return prompt.id, question.id


def test_a_question_drawn_before_its_hook_ran_is_told_once(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    prompt_id, question_id = _drawn_by_the_pane(rds, keys, agent, "ask", "Which db?")
    questions = [{"question": "Which db?", "options": [{"label": "Yes"}, {"label": "No"}]}]
    asked = {"questions": questions}
    _hook(ib, {"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion", "tool_input": asked})
    assert _events(rds, keys) == []  # the watcher's event said it, with the question its buttons answer
    assert rds.hmget(keys.prompt(agent), ["id", "question_id"]) == [prompt_id, question_id]
    assert rds.exists(keys.question(question_id))
    assert rds.hget(keys.agent(agent), "state") == "permission"


def test_a_permission_drawn_before_its_hook_ran_keeps_the_answers_people_have(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    prompt_id, question_id = _drawn_by_the_pane(rds, keys, agent, "permission", "Do you want to proceed?")
    _hook(ib, {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    [event] = _events(rds, keys)  # the tool and its command, which the screen's event lacks
    assert (event["type"], event["data"]["tool"], event["data"]["detail"], event["data"]["prompt_id"]) == (
        "dialog_detail", "Bash", "ls", prompt_id,
    )  # fmt: skip
    assert rds.hmget(keys.prompt(agent), ["id", "tool", "detail"]) == [prompt_id, "Bash", "ls"]
    assert rds.exists(keys.question(question_id))  # the drawn options' buttons still answer it


def test_a_dialog_drawn_again_after_an_answer_is_a_new_one(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    prompt_id, _question = _drawn_by_the_pane(rds, keys, agent, "permission", "Do you want to proceed?")
    assert PromptStore(rds, keys).claim(prompt_id, agent)
    rds.hset(keys.prompt(agent), "at", f"{time.time() - TOLD_LATE - 1:.3f}")  # drawn a while ago
    _hook(ib, {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    [event] = _events(rds, keys)
    assert event["data"]["prompt_id"] not in ("", prompt_id)


def test_a_hook_that_runs_after_its_dialog_was_answered_tells_nothing(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str
) -> None:
    """The watcher told the dialog, a person answered it at once, then its hook ran: no second event."""
    prompt_id, _question = _drawn_by_the_pane(rds, keys, agent, "permission", "Do you want to proceed?")
    assert PromptStore(rds, keys).claim(prompt_id, agent)
    _hook(ib, {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert _events(rds, keys) == []
    assert rds.hget(keys.prompt(agent), "id") == prompt_id
    assert rds.hget(keys.agent(agent), "state") == "running"  # the turn goes on: no dialog waits


@pytest.mark.parametrize("kind", ["permission", "ask"])
def test_a_hook_that_runs_after_its_dialog_closed_tells_nothing(
    ib: IbRunner, rds: redis.Redis, keys: Keys, agent: str, kind: str
) -> None:
    """The watcher told the dialog and saw it close before its hook ran; a dialog of another kind (or
    another question) is a new one."""
    prompt_id, _question = _drawn_by_the_pane(rds, keys, agent, kind, "Which db?")
    PromptStore(rds, keys).clear(agent, prompt_id, closed=True)
    asked = {"questions": [{"question": "Which db?", "options": [{"label": "Yes"}, {"label": "No"}]}]}
    told = {"tool_name": "AskUserQuestion", "tool_input": asked} if kind == "ask" else BASH_LS
    _hook(ib, {"hook_event_name": "PermissionRequest", **told})
    assert _events(rds, keys) == []
    assert not rds.exists(keys.prompt(agent))
    assert rds.hget(keys.agent(agent), "state") == "running"
    other = BASH_LS if kind == "ask" else {"tool_name": "AskUserQuestion", "tool_input": asked}
    _hook(ib, {"hook_event_name": "PermissionRequest", **other})
    assert [e["type"] for e in _events(rds, keys)] == ["permission" if kind == "ask" else "question"]


BASH_LS = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
