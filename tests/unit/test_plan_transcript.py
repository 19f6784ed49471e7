"""The plan a PermissionRequest hook reports for ExitPlanMode, read back from the agent's transcript."""

from __future__ import annotations

import json
from pathlib import Path

from worker.hooks.agent_event import plan_from_transcript


def _line(kind: str, *blocks: dict[str, object]) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": list(blocks)}})


def _plan_call(call_id: str, plan: str) -> str:
    return _line(
        "assistant", {"type": "tool_use", "id": call_id, "name": "ExitPlanMode", "input": {"plan": plan}}
    )


def _refused(call_id: str) -> str:
    return _line(
        "user", {"type": "tool_result", "tool_use_id": call_id, "content": "rejected", "is_error": True}
    )


def _transcript(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def test_the_waiting_call_gives_the_plan(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path, _line("user", {"type": "text", "text": "plan it"}), _plan_call("t1", "1. Do it")
    )
    assert plan_from_transcript(path) == "1. Do it"


def test_after_keep_planning_the_new_call_is_the_plan(tmp_path: Path) -> None:
    path = _transcript(tmp_path, _plan_call("t1", "old"), _refused("t1"), _plan_call("t2", "new"))
    assert plan_from_transcript(path) == "new"


def test_an_answered_call_is_not_the_dialog_s_plan(tmp_path: Path) -> None:
    """The hook for the second plan can run before Claude Code has written that call: nothing yet, so the
    hook reads again, rather than the first plan, which the person already refused."""
    path = _transcript(tmp_path, _plan_call("t1", "old"), _refused("t1"))
    assert plan_from_transcript(path) == ""


def test_no_transcript_or_garbage_gives_no_plan(tmp_path: Path) -> None:
    assert plan_from_transcript(str(tmp_path / "missing.jsonl")) == ""
    assert plan_from_transcript(None) == ""
    assert plan_from_transcript(_transcript(tmp_path, "{not json ExitPlanMode", '"tool_result"', "[]")) == ""
