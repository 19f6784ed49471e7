"""Which tool calls of the primary session start `ib listen` (the reminder hook then stays quiet). Pure."""

from __future__ import annotations

import pytest

from worker.hooks.post_tool_use import starts_listener


def _bash(command: object) -> dict[str, object]:
    return {"tool_name": "Bash", "tool_input": {"command": command, "run_in_background": True}}


@pytest.mark.parametrize(
    "command",
    [
        "ib listen",
        "ib listen --timeout 60",
        "cd repo && ib listen",
        "/root/.local/bin/ib listen",
        "(ib listen)",
        "true;ib listen",
        "echo hi\nib listen",
    ],
)
def test_starts(command: str) -> None:
    assert starts_listener(_bash(command))


@pytest.mark.parametrize(
    "payload",
    [
        _bash("ib list"),
        _bash("ib listener"),
        _bash("sib listen"),
        _bash("echo ib"),
        _bash(None),
        _bash(["ib", "listen"]),
        {"tool_name": "Read", "tool_input": {"command": "ib listen"}},
        {"tool_name": "Bash", "tool_input": "ib listen"},
        {"tool_name": "Bash"},
        [],
        "ib listen",
        None,
    ],
)
def test_does_not_start(payload: object) -> None:
    assert not starts_listener(payload)
