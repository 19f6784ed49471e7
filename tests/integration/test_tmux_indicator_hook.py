"""`ib hook tmux-status` against a real tmux server on its own socket: a Stop / PostToolUse sequence sets the
window name and the user options; outside tmux, on a bad payload or with tmux gone, it does nothing and
returns 0. The hook finds the server through $TMUX, as it does inside a real pane."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.hooks.tmux_status import run
from worker.tmux.window_indicator import OPT_AGENT_RUNNING, OPT_LAST_COMPLETED, OPT_PHASE

NOW = 1_768_145_400.0


@pytest.fixture
def pane_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a process in a pane of a fresh tmux server (TMUX, TMUX_PANE, CLAUDE_PROJECT_DIR)."""
    socket_name = f"ibtest-{uuid.uuid4().hex[:12]}"
    tmux = ["tmux", "-u", "-L", socket_name, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-n", "start", "-x", "80", "-y", "24"], check=True)
    socket: Path | None = None
    try:
        info = subprocess.run(
            [*tmux, "display-message", "-p", "-t", "t", "#{socket_path},#{pid},#{session_id}|#{pane_id}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        server, pane = info.split("|")
        socket = Path(server.split(",")[0])
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env.update(TMUX=server.replace("$", ""), TMUX_PANE=pane, CLAUDE_PROJECT_DIR=str(tmp_path / "shop"))
        yield env
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)
        if socket is not None:
            socket.unlink(missing_ok=True)  # tmux 3.3 leaves its socket file behind


def window(env: dict[str, str]) -> tuple[str, str, str, str]:
    """Window name, @agent_running, @last_completed_time and our phase option, read through $TMUX."""
    fmt = f"#{{window_name}}\t#{{{OPT_AGENT_RUNNING}}}\t#{{{OPT_LAST_COMPLETED}}}\t#{{{OPT_PHASE}}}"
    out = subprocess.run(
        ["tmux", "-u", "display-message", "-p", "-t", env["TMUX_PANE"], fmt],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.rstrip("\n")
    name, running, completed, phase = out.split("\t")
    return name, running, completed, phase


def transcript(path: Path, *turn_tools: str, result: str = "ok") -> str:
    """A transcript whose last turn used `turn_tools`, in Claude Code's JSONL shapes."""
    earlier_turn: dict[str, object] = {
        "type": "assistant",
        "message": {"role": "assistant", "content": [_use("Task")]},
    }
    entries: list[dict[str, object]] = [
        {"type": "user", "message": {"role": "user", "content": "earlier"}},
        earlier_turn,  # its Task must never count: it would show as WORKING
        {"type": "user", "message": {"role": "user", "content": "now this"}},
    ]
    for name in turn_tools:
        entries.append({"type": "assistant", "message": {"role": "assistant", "content": [_use(name)]}})
        entries.append({"type": "user", "message": {"role": "user", "content": [_result(result)]}})
    entries.append(
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}}
    )
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return str(path)


def _use(name: str) -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}


def _result(text: str) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}


def stop_payload(tmp_path: Path, *turn_tools: str) -> str:
    path = transcript(tmp_path / f"t-{uuid.uuid4().hex[:6]}.jsonl", *turn_tools)
    return json.dumps(
        {"session_id": "s1", "transcript_path": path, "cwd": str(tmp_path), "hook_event_name": "Stop"}
    )


def tool_payload(name: str) -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "PostToolUse",
            "tool_name": name,
            "tool_input": {},
            "tool_response": {},
        }
    )


def test_stop_and_post_tool_use_sequence(pane_env: dict[str, str], tmp_path: Path) -> None:
    at = NOW
    steps = [
        (stop_payload(tmp_path, "Read", "Grep"), ("🤖shop", "false", "", "base")),
        (stop_payload(tmp_path, "Read", "Edit"), ("🤖✅shop", "false", str(int(NOW) + 1), "completed")),
        (tool_payload("Bash"), ("🤖🧪shop", "false", str(int(NOW) + 1), "active")),
        (tool_payload("Task"), ("🤖⚙️shop", "true", str(int(NOW) + 1), "working")),
        (tool_payload("Edit"), ("🤖⚙️shop", "true", str(int(NOW) + 1), "active")),
        (stop_payload(tmp_path, "Edit", "Task"), ("🤖⚙️shop", "true", str(int(NOW) + 1), "working")),
        (tool_payload("TaskOutput"), ("🤖✅shop", "false", str(int(NOW) + 6), "completed")),
        (tool_payload("AskUserQuestion"), ("🤖🚨shop", "false", str(int(NOW) + 6), "alert")),
        (stop_payload(tmp_path), ("🤖shop", "false", "", "base")),
    ]
    for payload, expected in steps:
        assert run(payload, pane_env, at) == 0
        assert window(pane_env) == expected, payload
        at += 1


def test_completion_times_out_to_idle(pane_env: dict[str, str], tmp_path: Path) -> None:
    run(stop_payload(tmp_path, "Write"), pane_env, NOW)
    tick = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    assert run(tick, pane_env, NOW + 1800) == 0
    assert window(pane_env) == ("🤖✅shop", "false", str(int(NOW)), "completed")
    assert run(tick, pane_env, NOW + 1801) == 0
    assert window(pane_env) == ("🤖✅shop", "false", "", "idle")


@pytest.mark.parametrize(
    ("drop", "payload"),
    [
        pytest.param(("TMUX", "TMUX_PANE"), tool_payload("Bash"), id="outside-tmux"),
        pytest.param(("TMUX_PANE",), tool_payload("Bash"), id="no-pane"),
        pytest.param((), "", id="empty-payload"),
        pytest.param((), "{not json", id="bad-json"),
        pytest.param((), "[]", id="not-an-object"),
    ],
)
def test_does_nothing_and_returns_zero(pane_env: dict[str, str], drop: tuple[str, ...], payload: str) -> None:
    env = {k: v for k, v in pane_env.items() if k not in drop}
    assert run(payload, env, NOW) == 0
    assert window(pane_env) == ("start", "", "", "")


def test_tmux_errors_return_zero(pane_env: dict[str, str], tmp_path: Path) -> None:
    gone = {**pane_env, "TMUX": f"{tmp_path / 'no-such-socket'},1,0"}
    assert run(tool_payload("Bash"), gone, NOW) == 0
    missing_pane = {**pane_env, "TMUX_PANE": "%999"}
    assert run(tool_payload("Bash"), missing_pane, NOW) == 0
    assert window(pane_env) == ("start", "", "", "")


def test_turn_read_back_across_many_chunks_of_a_long_transcript(
    pane_env: dict[str, str], tmp_path: Path
) -> None:
    path = transcript(tmp_path / "long.jsonl", "Edit", "Read", "Read", result="é" * 150_000)
    payload = json.dumps({"hook_event_name": "Stop", "transcript_path": path})
    assert run(payload, pane_env, NOW) == 0
    assert window(pane_env) == ("🤖✅shop", "false", str(int(NOW)), "completed")


def test_unreadable_transcript_counts_as_a_turn_without_tools(
    pane_env: dict[str, str], tmp_path: Path
) -> None:
    payload = json.dumps({"hook_event_name": "Stop", "transcript_path": str(tmp_path / "missing.jsonl")})
    assert run(payload, pane_env, NOW) == 0
    assert window(pane_env) == ("🤖shop", "false", "", "base")
