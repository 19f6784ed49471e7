"""`ib send user` queues messages for the person's primary session (kind from the seed's prefixes) and
`ib acknowledge m-...` / `--all` removes them; both publish `message` events. Real `ib`, real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
import redis

from bus.inbox.questions import QuestionStore
from bus.wire.keys import Keys
from tests.cli import IbRunner


def events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    entries = cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.events))
    return [json.loads(fields["e"]) for _id, fields in entries]


def pending(ib: IbRunner) -> list[dict[str, Any]]:
    done = ib.run("messages", "--json")
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


def send(ib: IbRunner, text: str, *extra: str, cwd: Path | None = None) -> str:
    done = ib.run("send", "user", text, *extra, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.split(" message ")[1].split()[0]  # "queued KIND message ID for the user"


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        pytest.param(
            "? Should I use CSS variables?", "question", "Should I use CSS variables?", id="question"
        ),
        pytest.param("QUESTION: Postgres or SQLite?", "question", "Postgres or SQLite?", id="question-word"),
        pytest.param("! Rate limit hit, pausing", "alert", "Rate limit hit, pausing", id="alert"),
        pytest.param("ALERT: disk almost full", "alert", "disk almost full", id="alert-word"),
        pytest.param("COMPLETE: Dark mode ready", "complete", "Dark mode ready", id="complete"),
        pytest.param("DONE: login bug fixed", "complete", "login bug fixed", id="done"),
        pytest.param("Completed 3 of 5 tasks", "status", "Completed 3 of 5 tasks", id="status"),
        pytest.param(
            'quotes "x" & $(no subst) — ünïcode 🤖 [bold]no markup[/bold]',
            "status",
            'quotes "x" & $(no subst) — ünïcode 🤖 [bold]no markup[/bold]',
            id="verbatim",
        ),
    ],
)
def test_prefix_decides_the_kind_and_an_event_announces_it(
    ib: IbRunner, rds: redis.Redis, keys: Keys, text: str, kind: str, content: str
) -> None:
    message_id = send(ib, text, "--from", "painter")
    assert message_id.startswith("m-")
    [queued] = pending(ib)
    assert queued["id"] == message_id
    assert (queued["kind"], queued["text"], queued["from"]) == (kind, content, "painter")
    [event] = [e for e in events(rds, keys) if e["type"] == "message"]
    assert event["data"] == {"kind": kind, "message_id": message_id}
    assert (event["from"], event["agent"]) == ("painter", "painter")
    assert content in event["msg"]
    assert rds.zrange(keys.user_messages, 0, -1) == [message_id]
    assert rds.hget(keys.user_message(message_id), "text") == content


def test_sender_is_the_calling_agent(ib: IbRunner, repo: Path) -> None:
    worktree = repo / ".ib" / "agents" / "painter" / "repo"
    worktree.mkdir(parents=True)
    send(ib, "DONE: shed painted", cwd=worktree)
    by_env = ib.run("send", "user-claude", "from the environment", env={"IB_AGENT_ID": "roller"})
    assert by_env.returncode == 0, by_env.stderr
    assert [(m["from"], m["kind"]) for m in pending(ib)] == [("painter", "complete"), ("roller", "status")]


def test_acknowledge_one_then_all(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    first, second, third = (send(ib, text) for text in ("? one", "! two", "three"))
    QuestionStore(rds, keys).ask("painter", "Which colour?")

    done = ib.run("acknowledge", second)
    assert done.returncode == 0, done.stderr
    assert [m["id"] for m in pending(ib)] == [first, third]
    assert not rds.exists(keys.user_message(second))

    everything = ib.run("acknowledge", "--all")
    assert everything.returncode == 0, everything.stderr
    assert "1 question(s) and 2 message(s)" in everything.stdout
    assert pending(ib) == []
    assert QuestionStore(rds, keys).pending() == []
    assert [k for k in rds.scan_iter(match=keys.user_message("*"))] == []

    acknowledged = [e["data"]["acknowledged"] for e in events(rds, keys) if "acknowledged" in e["data"]]
    assert acknowledged == [[second], [first, third]]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(
            ("acknowledge", "m-0123456789ab"), "no pending message 'm-0123456789ab'", id="unknown-id"
        ),
        pytest.param(("acknowledge",), "give a question id (q-...), a message id (m-...)", id="no-id"),
        pytest.param(("send", "user", "?"), "nothing to send", id="empty-question"),
        pytest.param(("send", "user", "   "), "nothing to send", id="blank"),
        # the text is wrong before the agent is looked up: said first, not "no agent"
        pytest.param(("send", "nosuch", " "), "nothing to send", id="blank-to-unknown-agent"),
    ],
)
def test_clear_errors_and_nothing_removed(ib: IbRunner, args: tuple[str, ...], says: str) -> None:
    kept = send(ib, "stays")
    done = ib.run(*args)
    assert done.returncode != 0
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert [m["id"] for m in pending(ib)] == [kept]


def test_acknowledging_twice_is_an_error(ib: IbRunner) -> None:
    message_id = send(ib, "once")
    assert ib.run("acknowledge", message_id).returncode == 0
    again = ib.run("acknowledge", message_id)
    assert again.returncode == 1
    assert (
        again.stderr.strip()
        == f"ib acknowledge: error: no pending message '{message_id}' (see `ib messages`)"
    )
