"""`ib new-agent --cli codex` (and IB_DEFAULT_CLI=codex): the real Codex CLI 0.169.0 started by ittybus in
its worktree, offline against the scripted Responses API. Its own signals (hooks.json, notify) put its
turns on the bus, once each, through the worker's relay (its box holds no bus address); `ib send` reaches
it verbatim; `ib approve` and `ib deny` answer its approval dialog; its sandbox keeps its commands in the
worktree; `ib resume` restarts a stopped one with its conversation."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.fake_openai import (
    FakeOpenAI,
    add_file,
    exec_command,
    reply,
    server_error,
    usage_limit_reached,
    write_codex_home,
)
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER, WAITING_MARKER

pytestmark = [pytest.mark.codex, pytest.mark.timeout(300)]  # several turns of a cold CLI, each up to TURN
DIALOG = "Press enter to confirm or esc to cancel"
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores


def _events(rds: redis.Redis, keys: Keys, kind: str, agent: str) -> list[dict[str, object]]:
    found = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return [e for e in found if e["type"] == kind and e.get("agent") == agent]


def _worktree(repo: Path, agent: str) -> Path:
    return repo / ".ib" / "agents" / agent / "repo"


def test_a_codex_agent_works_in_its_worktree_and_its_turn_ends_once(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, repo: Path, codex_worker: Worker
) -> None:
    openai.script(
        reply("Listing first.", exec_command("ls && echo listed")),
        reply(add_file("notes.txt", "one\ntwo\n")),
        reply(f"Wrote the notes.\n\n{COMPLETION_MARKER}"),
    )
    spawned = codex_ib.run("new-agent", "--cli", "codex", "--name", "noter", "write notes")
    assert spawned.returncode == 0, spawned.stderr
    done = retry_until(lambda: _events(rds, keys, "complete", "noter"), TURN, what="the complete event")
    assert (_worktree(repo, "noter") / "notes.txt").read_text() == "one\ntwo\n"
    assert done[0]["data"]["last_message"].endswith(COMPLETION_MARKER)  # type: ignore[index]
    assert "write notes" in openai.user_texts()[0]
    retry_until(lambda: "Worked for" in pane_text(codex_ib, "noter"), TURN, what="the turn's end drawn")
    assert len(_events(rds, keys, "complete", "noter")) == 1  # Stop and notify told it; published once
    assert rds.hget(keys.agent("noter"), "state") == "complete"

    openai.script(reply("Which notes next?"))
    said = "and the 'docs' too: \"$HOME\" stays as typed; 100% `verbatim`"
    sent = codex_ib.run("send", "noter", said)
    assert sent.returncode == 0, sent.stderr
    retry_until(lambda: _events(rds, keys, "waiting", "noter"), TURN, what="the next turn's waiting event")
    assert openai.user_texts()[-1] == said
    assert len(_events(rds, keys, "complete", "noter")) == 1


def test_ib_approve_answers_codexs_approval_dialog(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, repo: Path, codex_worker: Worker
) -> None:
    call = exec_command("touch approved.txt && echo made", escalate="It needs to run outside the sandbox")
    openai.script(reply("Asking first.", call), reply(f"Made it.\n\n{COMPLETION_MARKER}"))
    spawned = codex_ib.run("new-agent", "--name", "asker", "make the file")
    assert spawned.returncode == 0, spawned.stderr
    asked = retry_until(lambda: _events(rds, keys, "permission", "asker"), TURN, what="a permission event")
    data = asked[0]["data"]
    assert isinstance(data, dict)
    assert (data["tool"], data["detail"]) == ("Bash", "touch approved.txt && echo made")
    assert data["description"] == "It needs to run outside the sandbox"
    retry_until(lambda: DIALOG in pane_text(codex_ib, "asker"), TURN, what="the dialog drawn")
    approved = codex_ib.run("approve", "asker")
    assert approved.returncode == 0, approved.stderr
    retry_until(lambda: _events(rds, keys, "complete", "asker"), TURN, what="the complete event")
    assert (_worktree(repo, "asker") / "approved.txt").exists()
    assert len(_events(rds, keys, "permission", "asker")) == 1


def test_ib_deny_refuses_and_the_sandbox_keeps_the_agent_in(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    openai.script(
        reply(exec_command(f'echo x > {outside}/escaped.txt; echo "rc=$?"')),
        reply(exec_command(f"touch {outside}/asked.txt", escalate="It writes outside the worktree")),
    )
    with worker_running(codex_ib, tmp_path / "worker.log", rds, keys):  # its pane watcher
        spawned = codex_ib.run("new-agent", "--name", "denied", "write outside")
        assert spawned.returncode == 0, spawned.stderr
        retry_until(lambda: _events(rds, keys, "permission", "denied"), TURN, what="a permission event")
        retry_until(lambda: DIALOG in pane_text(codex_ib, "denied"), TURN, what="the dialog drawn")
        denied = codex_ib.run("deny", "denied")
        assert denied.returncode == 0, denied.stderr
        # a refused command interrupts Codex's turn, and it sends no signal for that: the pane tells it
        retry_until(lambda: rds.hget(keys.agent("denied"), "state") == "waiting", TURN, what="waiting")
    assert not (outside / "escaped.txt").exists() and not (outside / "asked.txt").exists()
    outputs = json.dumps([o for r in openai.turns_taken() for o in r.tool_outputs()])
    assert "rc=1" in outputs  # the command ran, in the sandbox, and could not write there


def test_an_api_error_that_ends_the_turn_is_read_from_the_pane(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """Codex sends no signal for a turn its API errors ended: the pane watcher reads the error state."""
    home = Path(codex_ib.env["CODEX_HOME"])
    write_codex_home(home, openai.base_url, [], retries=0)  # the provider gives up at once
    openai.set_default(server_error())
    with worker_running(codex_ib, tmp_path / "worker.log", rds, keys):
        spawned = codex_ib.run("new-agent", "--name", "failing", "add a flag")
        assert spawned.returncode == 0, spawned.stderr
        retry_until(lambda: rds.hget(keys.agent("failing"), "state") == "error", TURN, what="the error state")
    moved = [e["data"] for e in _events(rds, keys, "state", "failing")]
    assert {"from_state": "running", "to_state": "error"} in moved
    assert not _events(rds, keys, "complete", "failing")
    # the pane only moves the state: no `error` event is raised for Codex (it has no error signal)


def test_a_usage_limit_is_told_once_as_limited_and_parks_the_agent(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, codex_worker: Worker
) -> None:
    """Codex has no signal for its plan's usage limit: only its screen tells it ("You've hit your usage
    limit"), and the pane watcher parks the agent on it, once (tests/integration/test_pane_watch_limits.py
    makes its hooks the last to set its state, which kept the watcher away before), until the API's reset
    as Codex's rollout records it (the screen gives it only to the minute)."""
    now = time.time()
    openai.script(reply(f"Ready.\n\n{WAITING_MARKER}"), usage_limit_reached(3600, now=now))
    spawned = codex_ib.run("new-agent", "--name", "capped", "wait for orders")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: _events(rds, keys, "waiting", "capped"), TURN, what="the first turn's end")
    sent = codex_ib.run("send", "capped", "go on")
    assert sent.returncode == 0, sent.stderr
    retry_until(lambda: _events(rds, keys, "limited", "capped"), TURN, what="the limited event")
    retry_until(lambda: "hit your usage limit" in pane_text(codex_ib, "capped"), TURN, what="the limit drawn")
    [limited] = _events(rds, keys, "limited", "capped")
    said = limited["data"]
    assert isinstance(said, dict) and said["seen"] == "pane"
    reset = (said["reset_source"], said["reset_at"], said["window"])
    assert reset == ("header", int(now + 3600), "five_hour")  # not the 5 min of a limit with no reset
    assert rds.hget(keys.agent("capped"), "state") == "limited"
    shown = json.loads(codex_ib.run("limits", "--json").stdout)["limits"]
    assert [s["agents"] for s in shown] == [["capped"]]
    assert len(_events(rds, keys, "limited", "capped")) == 1  # the line stays on screen: parked once
    assert not _events(rds, keys, "error", "capped")


def _said(request_items: list[dict[str, object]]) -> str:
    """Every text of a request's input messages, the earlier turns included."""
    return "\n".join(
        str(part.get("text", ""))
        for item in request_items
        if item.get("type") == "message"
        for part in item.get("content") or []  # type: ignore[attr-defined]
        if isinstance(part, dict)
    )


def test_ib_resume_restarts_a_stopped_codex_agent_with_its_conversation(
    codex_ib: IbRunner,
    openai: FakeOpenAI,
    rds: redis.Redis,
    keys: Keys,
    tmux_socket: str,
    codex_worker: Worker,
) -> None:
    openai.script(reply(f"Noted: the codeword is PERIWINKLE.\n\n{WAITING_MARKER}"))
    spawned = codex_ib.run("new-agent", "--name", "keeper", "remember the codeword PERIWINKLE")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: _events(rds, keys, "waiting", "keeper"), TURN, what="the first turn's end")
    session = rds.hget(keys.agent("keeper"), "session")
    assert session and Path(str(rds.hget(keys.agent("keeper"), "transcript_path"))).is_file()
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", session], check=True)  # Codex is gone

    resumed = codex_ib.run("resume", "keeper")
    assert resumed.returncode == 0, resumed.stderr
    assert "with its conversation" in resumed.stdout
    openai.script(reply(f"It was PERIWINKLE.\n\n{COMPLETION_MARKER}"))
    asked = codex_ib.run("send", "keeper", "what was the codeword?")
    assert asked.returncode == 0, asked.stderr
    retry_until(lambda: _events(rds, keys, "complete", "keeper"), TURN, what="the resumed turn's end")
    last = openai.turns_taken()[-1]
    assert last.user_text() == "what was the codeword?"
    # the resumed request carries the earlier turn: what the agent was told and what it answered
    earlier = _said(last.items())
    assert "remember the codeword PERIWINKLE" in earlier
    assert "Noted: the codeword is PERIWINKLE." in earlier


def test_without_a_worker_codexs_turn_end_waits_in_its_queue_and_is_told_once(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    """No worker, so no relay: Codex's hooks and notify leave their requests in the agent's queue and exit
    0, and Codex ends its turn. The worker started afterwards replays them: the turn's end reaches the bus
    once (Stop and notify both tell it), told by Codex's own signals."""
    openai.script(reply(f"Nothing to change.\n\n{COMPLETION_MARKER}"))
    spawned = codex_ib.run("new-agent", "--cli", "codex", "--name", "alone", "look around")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: "Worked for" in pane_text(codex_ib, "alone"), TURN, what="the turn's end drawn")
    queue = repo / ".ib" / "agents" / "alone" / "relay-queue"
    retry_until(lambda: list(queue.glob("*.req")), 10, 0.1, "the hooks queued")
    assert not _events(rds, keys, "complete", "alone")
    with worker_running(codex_ib, tmp_path / "worker.log", rds, keys):
        done = retry_until(lambda: _events(rds, keys, "complete", "alone"), 30, 0.1, "the queued turn end")
        retry_until(lambda: not list(queue.iterdir()), 30, 0.1, "the queue emptied")
        assert len(_events(rds, keys, "complete", "alone")) == 1
    assert done[0]["data"]["last_message"].endswith(COMPLETION_MARKER)  # type: ignore[index]
    assert rds.hget(keys.agent("alone"), "state_by") == "hook"
