"""Dialogs no hook tells (auto mode's, drawn by the fake agent as Claude Code 2.1.332 does), with a
running worker: each one a `permission` event with its options, answered by option from the CLI or by
the `answer` worker command, never typed into; two answers racing, and an answer that comes too late."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen

import pytest
import redis

from bus.commands.worker_commands import Answer
from bus.commands.worker_rpc import CommandFailed, request
from bus.connection.clients import client_for
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

TIMEOUT = 30.0
NOTICE = "Auto mode can't check actions in this session"


@pytest.fixture
def worker(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[Popen[str]]:
    process = agents_ib.popen("worker")
    retry_until(lambda: rds.exists(keys.worker(agents_ib.env["IB_WORKER_ID"])), TIMEOUT, what="the worker")
    yield process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


@pytest.fixture
def slow_worker(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[Popen[str]]:
    """A worker that looks at all its panes once a minute: at start (it says it runs once that look was
    taken), then after every test's deadline. Each look records when the worker was seen; so does its
    heartbeat thread, every third of the heartbeat's TTL: an hour's TTL keeps that record to the looks."""
    rare = {"IB_PANE_INTERVAL": "60", "IB_HEARTBEAT_TTL": "3600"}
    process = agents_ib.popen("worker", env=agents_ib.environ(rare))
    assert process.stdout is not None
    banner = process.stdout.readline()  # printed after its first look at every pane
    assert "running on" in banner, (banner, process.poll())
    yield process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def _spawn(ib: IbRunner, name: str, *steps: str, mode: str = "") -> None:
    chosen = ["--permission-mode", mode] if mode else []
    done = ib.run("new-agent", "\n".join(["Do it.", *steps]), "--name", name, *chosen)
    assert done.returncode == 0, done.stderr


def _asked(rds: redis.Redis, keys: Keys, count: int = 1) -> list[dict[str, object]]:
    """The first `count` permission events' data, once there are that many."""

    def found() -> list[dict[str, object]] | None:
        events = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
        data = [e["data"] for e in events if e["type"] == "permission"]
        return data if len(data) >= count else None

    return retry_until(found, TIMEOUT, what=f"{count} permission event(s)")


def _event(rds: redis.Redis, keys: Keys, kind: str) -> None:
    retry_until(
        lambda: any(json.loads(f["e"])["type"] == kind for _i, f in stream_entries(rds, keys.events)),
        TIMEOUT,
        what=f"a {kind} event",
    )


def _shows(ib: IbRunner, agent: str, text: str) -> bool:
    return text in pane_text(ib, agent)


def test_auto_modes_dialogs_are_events_and_answered_by_option(
    agents_ib: IbRunner, worker: Popen[str], rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    _spawn(agents_ib, "auto", "fake: auto-permission touch auto.txt", "fake: done")
    [notice] = _asked(rds, keys)
    assert (notice["kind"], notice["title"], notice["default"]) == ("dialog", NOTICE, 0)
    assert [o["label"] for o in notice["options"]] == [  # type: ignore[attr-defined]
        "stay in auto mode",
        "leave for accept edits mode and stop",
        "cancel",
    ]
    typed = agents_ib.run("send", "auto", "yes")
    assert (typed.returncode, typed.stderr.strip()) == (
        1,
        f"ib send: error: auto shows a dialog ({NOTICE}); nothing was typed. Answer it with ib answer auto N "
        "(1. stay in auto mode, 2. leave for accept edits mode and stop, 3. cancel)",
    )
    stayed = agents_ib.run("approve", "auto")
    said = " ".join(stayed.stdout.split())  # rich wraps at the terminal's width
    assert said == f"approved a dialog ({NOTICE}) of auto: stay in auto mode", stayed.stderr

    approval = _asked(rds, keys, 2)[1]
    assert (approval["kind"], approval["title"], approval["options"], approval["default"]) == (
        "permission",
        "Do you want to proceed?",
        [{"number": None, "label": "No"}, {"number": None, "label": "Yes"}],
        0,
    )
    typed = agents_ib.run("send", "auto", "yes")
    assert "auto shows a permission dialog (Do you want to proceed?); nothing was typed" in typed.stderr
    seven = agents_ib.run("answer", "auto", "7")
    assert (seven.returncode, seven.stderr.strip()) == (
        1,
        "ib answer: error: auto: '7' is not one of the dialog's options: 1. No, 2. Yes",
    )
    approved = agents_ib.run("approve", "auto")
    said = " ".join(approved.stdout.split())
    assert said == "approved a permission dialog (Do you want to proceed?) of auto: Yes"
    again = agents_ib.run("approve", "auto", "--prompt", str(approval["prompt_id"]))
    assert (again.returncode, again.stderr.strip()) == (
        1,
        "ib approve: error: that dialog of auto was already answered",
    )
    _event(rds, keys, "complete")
    assert (repo / ".ib" / "agents" / "auto" / "repo" / "auto.txt").exists()
    assert not (tmp_path / "received.txt").exists()  # nothing was ever typed into the agent


def test_two_answers_race_and_the_second_is_told(
    agents_ib: IbRunner, worker: Popen[str], rds: redis.Redis, keys: Keys, redis_url: str, repo: Path
) -> None:
    _spawn(agents_ib, "racer", "fake: auto-permission touch raced.txt", "fake: done")
    [notice] = _asked(rds, keys)
    assert agents_ib.run("approve", "racer").returncode == 0
    approval = _asked(rds, keys, 2)[1]
    from_cli = agents_ib.popen("answer", "racer", "Yes")
    from_telegram: str | Exception
    try:  # what the bot sends for a tap on "Yes": the `answer` command with the option's place
        from_telegram = str(
            request(
                client_for(redis_url, blocking=True),
                keys,
                agents_ib.env["IB_WORKER_ID"],
                Answer(question=str(approval["question_id"]), text="2"),
                timeout=TIMEOUT,
            )
        )
    except CommandFailed as e:
        from_telegram = e
    _out, err = from_cli.communicate(timeout=TIMEOUT)
    results = [("cli", from_cli.returncode, err.strip()), ("telegram", from_telegram)]
    refused = [r for r in results if "already answered" in str(r)]
    assert len(refused) == 1, results
    assert notice["prompt_id"] != approval["prompt_id"]
    _event(rds, keys, "complete")
    assert (repo / ".ib" / "agents" / "racer" / "repo" / "raced.txt").exists()


def test_an_answer_after_the_dialog_closed_sends_nothing(
    agents_ib: IbRunner, worker: Popen[str], rds: redis.Redis, keys: Keys, redis_url: str, tmux_socket: str
) -> None:
    _spawn(agents_ib, "late", "fake: auto-permission touch never.txt", "fake: done")
    [notice] = _asked(rds, keys)
    session = json.loads(agents_ib.run("list", "--json").stdout)[0]["session"]
    # someone attached to the session cancels the notice first
    Popen(["tmux", "-L", tmux_socket, "send-keys", "-t", session, "Escape"]).wait(timeout=TIMEOUT)
    retry_until(lambda: not _shows(agents_ib, "late", NOTICE), TIMEOUT, what="the notice to close")
    late = agents_ib.run("answer", "late", "1", "--prompt", str(notice["prompt_id"]))
    assert (late.returncode, late.stderr.strip()) == (
        1,
        "ib answer: error: late: the dialog closed; nothing was sent",
    )


def test_the_same_dialog_again_is_a_new_event(
    agents_ib: IbRunner, worker: Popen[str], rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    _spawn(
        agents_ib,
        "twice",
        "fake: auto-permission touch one.txt",
        "fake: auto-permission touch two.txt",
        "fake: done",
    )
    for count in (1, 2, 3, 4):  # notice, approval, and the same two again for the second command
        asked = _asked(rds, keys, count)[count - 1]
        assert asked["title"] == (NOTICE if count % 2 else "Do you want to proceed?")
        approved = agents_ib.run("approve", "twice", "--prompt", str(asked["prompt_id"]))
        assert approved.returncode == 0, approved.stderr
    _event(rds, keys, "complete")
    assert len(_asked(rds, keys, 4)) == 4
    worktree = repo / ".ib" / "agents" / "twice" / "repo"
    assert (worktree / "one.txt").exists() and (worktree / "two.txt").exists()


def test_a_running_auto_mode_agent_is_watched_closely_between_the_watchers_ticks(
    agents_ib: IbRunner, slow_worker: Popen[str], rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    """Its turn's `state` event (the UserPromptSubmit hook's) starts a close watch of its pane alone: both
    of auto mode's dialogs are told though the watcher's next look at every pane is a minute away."""
    _spawn(agents_ib, "closely", "fake: auto-permission touch close.txt", "fake: done", mode="auto")
    [notice] = _asked(rds, keys)
    assert notice["title"] == NOTICE
    assert agents_ib.run("approve", "closely").returncode == 0  # stay in auto mode: running again
    approval = _asked(rds, keys, 2)[1]
    assert approval["title"] == "Do you want to proceed?"
    assert agents_ib.run("approve", "closely").returncode == 0
    _event(rds, keys, "complete")
    assert (repo / ".ib" / "agents" / "closely" / "repo" / "close.txt").exists()
    # the worker's last look at all its panes (at its start) came before the agent did
    spawned = next(i for i, f in stream_entries(rds, keys.events) if json.loads(f["e"])["type"] == "spawned")
    looked = rds.hget(keys.worker_seen, agents_ib.env["IB_WORKER_ID"])
    assert int(looked or 0) < int(spawned.partition("-")[0])
