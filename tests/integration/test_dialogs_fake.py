"""Dialogs with the fake agent (Claude Code 2.1.332's dialog text, fast): answered from the CLI (typed again
while the program drops keys, told again when it dropped them all), refused to `ib send`, gone before the
answer lands, and AskUserQuestion through `ib answer`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

TIMEOUT = 30.0


def _spawn(ib: IbRunner, name: str, *steps: str) -> None:
    done = ib.run("new-agent", "\n".join(["Do it.", *steps]), "--name", name)
    assert done.returncode == 0, done.stderr


def _event(rds: redis.Redis, keys: Keys, kind: str) -> dict[str, object]:
    def found() -> dict[str, object] | None:
        events = (json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events))
        return next((e for e in events if e["type"] == kind), None)

    return retry_until(found, TIMEOUT, what=f"a {kind} event")


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def _shows(ib: IbRunner, agent: str, text: str) -> bool:
    return text in pane_text(ib, agent)


def test_permission_approved_from_the_cli(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    _spawn(agents_ib, "maker", "fake: permission touch made.txt", "fake: done")
    asked = _event(rds, keys, "permission")
    assert asked["data"]["detail"] == "touch made.txt"  # type: ignore[index]
    retry_until(lambda: _shows(agents_ib, "maker", "Do you want to proceed?"), TIMEOUT)
    refused = agents_ib.run("send", "maker", "yes please")
    assert refused.returncode == 1
    assert "maker shows a permission dialog (Do you want to proceed?); nothing was typed" in refused.stderr
    assert not (tmp_path / "received.txt").exists()
    approved = agents_ib.run("approve", "maker")
    assert (approved.returncode, approved.stdout.strip()) == (
        0,
        "approved a permission dialog (Do you want to proceed?) of maker: Yes",
    )
    _event(rds, keys, "complete")
    assert (repo / ".ib" / "agents" / "maker" / "repo" / "made.txt").exists()


def test_an_answer_typed_before_the_dialog_reads_keys_is_typed_again(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    """Claude Code draws a dialog before it reads keys and drops those that come in between (a second or
    more on a busy machine): the fake agent drops them for 2 s, and the answer comes as soon as it shows."""
    agents_ib.env["IB_FAKE_DEAF_DIALOGS"] = "2"
    _spawn(agents_ib, "maker", "fake: permission touch made.txt", "fake: done")
    retry_until(lambda: _shows(agents_ib, "maker", "Do you want to proceed?"), TIMEOUT, 0.01)
    approved = agents_ib.run("approve", "maker")
    assert approved.returncode == 0, approved.stderr
    _event(rds, keys, "complete")
    assert (repo / ".ib" / "agents" / "maker" / "repo" / "made.txt").exists()


def test_a_dialog_whose_answer_was_dropped_every_time_is_told_again(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    """Past the answer's tries the answer says it was not taken, and the screen stays quiet: the worker's
    pane watcher looks again at a dialog answered but not seen closing, and tells it again once
    STILL_CLOSING has passed."""
    agents_ib.env["IB_FAKE_DEAF_DIALOGS"] = "12"  # longer than ib approve's three tries, 3 s apart
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
        _spawn(agents_ib, "maker", "fake: permission touch made.txt", "fake: done")
        retry_until(lambda: _shows(agents_ib, "maker", "Do you want to proceed?"), TIMEOUT, 0.01)
        dropped = agents_ib.run("approve", "maker")
        assert dropped.returncode == 1
        assert dropped.stderr.strip() == (
            "ib approve: error: maker still shows a permission dialog (Do you want to proceed?) as it "
            "was, after the answer was typed 3 times: it did not take it. It is told again; see it with "
            "ib look maker"
        )
        retry_until(lambda: len(_events(rds, keys, "permission")) >= 2, TIMEOUT, what="the dialog told again")
        again = agents_ib.run("approve", "maker")
        assert again.returncode == 0, again.stderr
        _event(rds, keys, "complete")
    assert (repo / ".ib" / "agents" / "maker" / "repo" / "made.txt").exists()


@pytest.mark.parametrize(
    "refusal", [("deny",), ("answer", "No"), ("answer", "3")], ids=["deny", "answer-label", "answer-number"]
)
def test_a_permission_denied_without_a_reason_ends_the_turn_with_one_waiting_event(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, refusal: tuple[str, ...]
) -> None:
    """Claude Code runs no Stop hook for the turn a refusal interrupts: the deny tells that the agent
    waits, once; so does picking the drawn "No" (a Telegram button of a dialog the pane watcher told)."""
    _spawn(agents_ib, "refused", "fake: permission touch never.txt", "fake: done")
    _event(rds, keys, "permission")
    retry_until(lambda: _shows(agents_ib, "refused", "Do you want to proceed?"), TIMEOUT)
    verb, *option = refusal
    denied = agents_ib.run(verb, "refused", *option)
    assert denied.returncode == 0, denied.stderr
    waiting = _event(rds, keys, "waiting")
    assert (waiting["from"], waiting["msg"]) == (
        "refused",
        "Agent refused is waiting for input (a permission dialog (Do you want to proceed?) was denied)",
    )
    retry_until(lambda: "Interrupted by user" in pane_text(agents_ib, "refused"), TIMEOUT)
    assert [json.loads(f["e"])["type"] for _i, f in stream_entries(rds, keys.events)].count("waiting") == 1
    assert not (repo / ".ib" / "agents" / "refused" / "repo" / "never.txt").exists()


def test_a_permission_told_before_it_is_drawn_stays_a_permission(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    """Claude Code runs the PermissionRequest hook, then draws the dialog: a look in between sees the turn
    still running, which is no answer; the state stays `permission`, with no state events back and forth."""
    _spawn(agents_ib, "slow", "fake: sleep 600")
    retry_until(lambda: _shows(agents_ib, "slow", "esc to interrupt"), TIMEOUT, what="the turn on screen")
    payload = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "make"}}
    told = agents_ib.run("hook", "event", stdin=json.dumps(payload), env={"IB_AGENT_ID": "slow"})
    assert told.returncode == 0, told.stderr
    looked = agents_ib.run("worker", "--once")
    assert looked.returncode == 0, looked.stderr
    assert rds.hmget(keys.agent("slow"), ["state", "state_by"]) == ["permission", "hook"]
    events = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    assert [e["data"]["from_state"] for e in events if e["type"] == "state"].count("permission") == 0


def test_a_dialog_answered_in_the_terminal_first(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, tmux_socket: str
) -> None:
    _spawn(agents_ib, "quick", "fake: permission touch never.txt", "fake: done")
    _event(rds, keys, "permission")
    retry_until(lambda: _shows(agents_ib, "quick", "Do you want to proceed?"), TIMEOUT)
    session = json.loads(agents_ib.run("list", "--json").stdout)[0]["session"]
    # someone attached to the session answers "No" first
    subprocess.run(["tmux", "-L", tmux_socket, "send-keys", "-t", session, "3"], check=True)
    retry_until(lambda: not _shows(agents_ib, "quick", "Do you want to proceed?"), TIMEOUT)
    late = agents_ib.run("approve", "quick")
    assert (late.returncode, late.stderr.strip()) == (
        1,
        "ib approve: error: quick: the dialog closed; nothing was sent",
    )
    assert not (tmp_path / "received.txt").exists()
    assert not (repo / ".ib" / "agents" / "quick" / "repo" / "never.txt").exists()
    nothing = agents_ib.run("deny", "quick")
    assert "quick shows no dialog; nothing to answer" in nothing.stderr


def test_a_question_dialog_answered_by_label(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    _spawn(agents_ib, "picker", "fake: choose Which colour? | Red | Green", "fake: done")
    asked = _event(rds, keys, "question")
    assert (asked["data"]["question"], asked["data"]["options"]) == (  # type: ignore[index]
        "Which colour?",
        [{"number": 1, "label": "Red"}, {"number": 2, "label": "Green"}],
    )
    retry_until(lambda: _shows(agents_ib, "picker", "Which colour?"), TIMEOUT)
    wrong = agents_ib.run("answer", "picker", "Blue")
    assert "'Blue' is not one of the dialog's options: 1. Red, 2. Green" in wrong.stderr
    picked = agents_ib.run("answer", "picker", "green")
    assert picked.returncode == 0, picked.stderr
    retry_until(lambda: _shows(agents_ib, "picker", "You chose Green."), TIMEOUT)
    _event(rds, keys, "complete")
    assert json.loads(agents_ib.run("questions", "--json").stdout) == []


def test_an_older_claude_code_gets_only_the_hook_events_it_has(
    agents_ib: IbRunner, repo: Path, tmp_path: Path
) -> None:
    program = tmp_path / "old-claude"
    program.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "2.1.70 (Claude Code)"; exit 0; fi\n'
        f'exec {agents_ib.env["IB_AGENT_COMMAND"]} "$@"\n'
    )
    program.chmod(0o755)
    agents_ib.env["IB_AGENT_COMMAND"] = str(program)
    done = agents_ib.run("new-agent", "fake: wait", "--name", "oldie")
    assert done.returncode == 0, done.stderr
    assert (
        "ib new-agent: note: Claude Code 2.1.70 has no StopFailure hook events; agents run without them "
        "(tested with 2.1.332)"
    ) in done.stderr
    settings = json.loads((repo / ".ib" / "agents" / "oldie" / "settings.json").read_text())
    assert "StopFailure" not in settings["hooks"]
    assert {"Stop", "PermissionRequest", "Notification", "SessionEnd"} <= settings["hooks"].keys()


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        (
            "echo 'No conversation found with session ID: x' >&2\nexit 1",
            "No conversation found with session ID: x",
        ),
        # with " (status 3)" when tmux wrote it: tmux 3.3a often records no exit status (even for a
        # program that ran 0.3 s)
        ("exit 3", "the agent program exited at once"),
    ],
    ids=["claude-says-why", "exits-silently"],
)
def test_a_resume_that_fails_is_reported_as_failed(
    agents_ib: IbRunner,
    rds: redis.Redis,
    keys: Keys,
    tmux_socket: str,
    tmp_path: Path,
    program: str,
    reason: str,
) -> None:
    _spawn(agents_ib, "phoenix", "fake: wait")
    retry_until(lambda: rds.hget(keys.agent("phoenix"), "transcript_path"), TIMEOUT, what="its transcript")
    transcript = Path(str(rds.hget(keys.agent("phoenix"), "transcript_path")))
    retry_until(transcript.exists, TIMEOUT, what="the transcript file")
    session = str(rds.hget(keys.agent("phoenix"), "session"))
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", session], check=True)
    broken = tmp_path / "broken-claude"
    broken.write_text(f"#!/bin/sh\n{program}\n")
    broken.chmod(0o755)
    resumed = agents_ib.run("resume", "phoenix", env={"IB_AGENT_COMMAND": str(broken)})
    assert resumed.returncode == 1
    said = resumed.stderr.strip()
    assert said.startswith(f"ib resume: error: resuming phoenix failed: {reason}"), said
    assert said.endswith(" (see ib look phoenix)") and said.count("\n") == 0, said
    assert "resumed" not in resumed.stdout
