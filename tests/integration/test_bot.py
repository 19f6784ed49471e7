"""The Telegram bot end to end: `ib bot` as a process, the fake Bot API, a real Redis, and (where agents
are involved) `ib worker` with fake agents in the test's own tmux server.

The fake's clock runs SCALE times faster and the bot's limits are scaled to match, so a minute of
Telegram's limits passes in a few seconds.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import redis

from bot.feeds.consumer import GROUP
from bus.connection.embedded import free_port
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.auto_state import AutoState
from bus.wire.keys import Keys
from tests.bot_process import SCALE, USER, BotProcess, Worker, bot_env
from tests.cli import IB, IbRunner
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic.script import reply
from tests.fake_telegram import FakeMessage, FakeTelegram, Limits
from tests.reads import agent_ids, pending_questions
from tests.waiting import retry_until

STRANGER = 6666
MAXLEN = 10_000


def emit(rds: redis.Redis, keys: Keys, type_: str, msg: str = "", **fields: Any) -> str:
    return publish(rds, keys, make_event(type_, msg, **fields), MAXLEN)


def bot_messages(fake: FakeTelegram, thread: int | None) -> list[FakeMessage]:
    return [m for m in fake.messages(thread) if m.sender_id == fake.bot_id]


def shown(fake: FakeTelegram, thread: int | None) -> str:
    return "\n".join(m.text for m in bot_messages(fake, thread))


def everywhere(fake: FakeTelegram) -> str:
    threads: list[int | None] = [None, *(t.thread_id for t in fake.topics())]
    return "\n".join(shown(fake, t) for t in threads)


def wait_shown(fake: FakeTelegram, thread: int | None, *lines: str, timeout: float = 20) -> None:
    retry_until(lambda: all(line in shown(fake, thread) for line in lines), timeout, 0.05, f"{lines} shown")


def wait_topic(fake: FakeTelegram, name: str, timeout: float = 20) -> int:
    topic = retry_until(lambda: fake.find_topic(name), timeout, 0.05, f"topic {name!r}")
    assert topic is not None
    return topic.thread_id


def wait_agent_topic(fake: FakeTelegram, agent: str, timeout: float = 20) -> int:
    """The topic of an agent spawned with `ib new-agent` (named after it, with its project if it has one)."""

    def find() -> int | None:
        return next((t.thread_id for t in fake.topics() if t.name.split(" [")[0] == agent), None)

    thread = retry_until(find, timeout, 0.05, f"the topic of {agent}")
    assert thread is not None
    return thread


def bind_project(fake: FakeTelegram, project: str) -> int:
    thread = fake.create_topic(project)
    fake.inject_message(USER, f"/project {project}", thread_id=thread)
    wait_shown(fake, thread, f"This is project {project}'s topic now")
    return thread


def settled(rds: redis.Redis, keys: Keys) -> None:
    """Every event read by the bot's group is acknowledged."""
    retry_until(lambda: rds.xpending(keys.events, GROUP)["pending"] == 0, 20, 0.05, "events acknowledged")


def sync_with_bot(fake: FakeTelegram, thread: int) -> None:
    """The bot handles updates in order: once /help is answered, everything sent before was handled."""
    before = shown(fake, thread).count("/help — Show the commands")
    fake.inject_message(USER, "/help", thread_id=thread)
    retry_until(lambda: shown(fake, thread).count("/help — Show the commands") > before, 20, 0.05, "/help")


CONFIG_REFUSALS = [
    ("no-allowed-users", {"IB_TELEGRAM_ALLOWED_USERS": ""}, "IB_TELEGRAM_ALLOWED_USERS is empty"),
    ("no-chat", {"IB_TELEGRAM_CHAT_ID": ""}, "IB_TELEGRAM_CHAT_ID is not set"),
    ("wrong-token", {"IB_TELEGRAM_TOKEN": "1:wrong"}, "Telegram refused IB_TELEGRAM_TOKEN"),
]


@pytest.mark.parametrize(
    ("changes", "said"), [c[1:] for c in CONFIG_REFUSALS], ids=[c[0] for c in CONFIG_REFUSALS]
)
def test_refuses_to_start_and_says_which_setting(
    ib: IbRunner, fake: FakeTelegram, changes: dict[str, str], said: str
) -> None:
    env = {k: v for k, v in {**bot_env(fake), **changes}.items() if v}
    done = ib.run("bot", env=env, timeout=30)
    assert done.returncode == 1
    assert said in done.stderr and "Traceback" not in done.stderr
    assert "1:wrong" not in done.stderr  # a token is never printed


def test_a_telegram_that_does_not_answer_at_the_start_is_waited_for(ib: IbRunner, tmp_path: Path) -> None:
    """Nothing listens where the Bot API should be when the bot starts (a network that is not up yet, a
    Telegram that times out): the bot says so and tries again, and serves once it answers."""
    port, late = free_port(), FakeTelegram(time_scale=SCALE)
    env = {
        "IB_TELEGRAM_TOKEN": late.token,
        "IB_TELEGRAM_CHAT_ID": str(late.chat_id),
        "IB_TELEGRAM_ALLOWED_USERS": str(USER),
        "IB_TELEGRAM_API_URL": f"http://127.0.0.1:{port}/bot",
        "IB_TELEGRAM_TIME_SCALE": str(SCALE),
    }
    log = tmp_path / "bot.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [ib.program, "bot"], stdout=out, stderr=subprocess.STDOUT, env=ib.environ(env), cwd=ib.cwd
        )
    try:
        retry_until(lambda: "did not go through" in log.read_text() or proc.poll() is not None, 30)
        assert proc.poll() is None, log.read_text()
        with late.start(port):
            retry_until(lambda: late.calls("getUpdates") > 0 or proc.poll() is not None, 60, what="polling")
            assert proc.poll() is None, log.read_text()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = log.read_text()
    assert "telegram: its first call (getMe) did not go through" in said and "Traceback" not in said, said


# --- events in topics -----------------------------------------------------------------------------------


def test_events_show_in_their_topics(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    project = bind_project(fake, "backend")
    assert fake.commands()[0] == {"command": "help", "description": "Show the commands"}
    common: dict[str, Any] = {"project": "backend", "task": "design-auth", "agent": "agent-1"}
    emit(
        rds,
        keys,
        "task_added",
        task="design-auth",
        project="backend",
        data={"title": "Design auth", "priority": 8},
    )
    emit(rds, keys, "task_claimed", sender="agent-1", **common)
    task = wait_topic(fake, "design-auth [backend]")
    emit(rds, keys, "spawned", "agent-1 started", **common, data={"goal": "Design the auth API"})
    emit(rds, keys, "question", "Agent agent-1 asks: JWT or sessions?", **common, data={"question_id": "q-1"})
    emit(rds, keys, "complete", "agent-1 completed its goal", **common)
    emit(rds, keys, "task_done", **common, data={"summary": "Implemented JWT auth"})
    emit(
        rds,
        keys,
        "merge_conflict",
        **common,
        data={"branch": "agent/agent-1", "target": "main", "files": ["a.py"]},
    )
    merge = wait_topic(fake, "merge-design-auth [backend]")
    emit(rds, keys, "task_ready", task="other", project="elsewhere")  # a project with no topic: nowhere
    emit(rds, keys, "merge_merged", **common, data={"target": "main", "sha": "a1b2c3d4"})

    wait_shown(fake, merge, "⚠ Merge conflict on agent/agent-1", "✓ Merged → main (a1b2c3d)")
    wait_shown(fake, task, '✓ design-auth completed: "Implemented JWT auth"')
    settled(rds, keys)
    in_project = shown(fake, project)
    for line in (
        "+ design-auth added (priority 8)",
        "→ design-auth claimed by agent-1",
        "→ agent-1 spawned: Design the auth API",
        "❓ agent-1 asks: Agent agent-1 asks: JWT or sessions?",
        "✓ agent-1 completed: agent-1 completed its goal",
        '✓ design-auth completed: "Implemented JWT auth"',
        "⚠ Merge conflict on agent/agent-1",
        "✓ Merged → main (a1b2c3d)",
    ):
        assert in_project.count(line) == 1, (line, in_project)
    in_task = shown(fake, task)
    assert "Merge conflict" not in in_task and "added" not in in_task
    assert in_task.index("claimed by agent-1") < in_task.index("asks") < in_task.index("completed: agent-1")
    done = next(m for m in bot_messages(fake, task) if "agent-1 completed" in m.text)
    assert [label for label, _data in done.buttons[0]] == ["Diff", "Merge", "Kill", "Look", "Screenshot"]
    assert shown(fake, merge).count("Merge conflict") == 1
    assert "other" not in everywhere(fake) and bot_messages(fake, None) == []
    assert rds.hget(keys.topics("agent"), "agent-1") == str(task)  # the agent works in its task's topic


def test_agent_output_streams_into_one_message(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    emit(rds, keys, "spawned", "agent-7 started", agent="agent-7", sender="system")
    topic = wait_topic(fake, "agent-7")
    stream = keys.output("agent-7")
    rds.xadd(stream, {"kind": "tool_use", "text": "**Read**(src/app.py)", "tool": "Read", "ts": ""})
    wait_shown(fake, topic, "Read(src/app.py)")
    rds.xadd(stream, {"kind": "tool_result", "text": "Read 45 lines", "tool": "Read", "ts": ""})
    rds.xadd(stream, {"kind": "text", "text": "Found it: `x < y` fails", "tool": "", "ts": ""})
    wait_shown(fake, topic, "Read 45 lines", "Found it: `x < y` fails")
    output = [m for m in bot_messages(fake, topic) if "Read(src/app.py)" in m.text]
    assert len(output) == 1 and output[0].edits  # one message, edited in place
    assert output[0].text == "Read(src/app.py)\n  → Read 45 lines\nFound it: `x < y` fails"
    last = cast(list[tuple[str, dict[str, str]]], rds.xrevrange(stream, count=1))[0][0]
    retry_until(lambda: rds.hget(keys.topics("output"), "agent-7") == last, 10, 0.05, "the output offset")


def test_an_agent_without_a_spawned_event_gets_its_topic(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    emit(rds, keys, "question", "Agent agent-9 asks: tabs or spaces?", agent="agent-9", project="backend")
    emit(rds, keys, "complete", "agent-9 completed its goal", agent="agent-9", project="backend")
    topic = wait_agent_topic(fake, "agent-9")
    wait_shown(fake, topic, "❓ agent-9 asks: Agent agent-9 asks: tabs or spaces?", "✓ agent-9 completed")
    settled(rds, keys)
    assert bot_messages(fake, None) == []  # nothing in General
    assert [t.name for t in fake.topics()] == ["agent-9 [backend]"]
    assert rds.hget(keys.topics("agent"), "agent-9") == str(topic)


# --- bindings survive -----------------------------------------------------------------------------------


def test_project_binding_survives_a_restart(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    thread = bind_project(fake, "backend")
    bot.stop()
    assert rds.hget(keys.topics("project"), "backend") == str(thread)
    bot.start()
    emit(rds, keys, "task_added", task="after-restart", project="backend", data={"priority": 3})
    wait_shown(fake, thread, "+ after-restart added (priority 3)")
    fake.inject_message(USER, "/unbind", thread_id=thread)
    wait_shown(fake, thread, "Detached from project backend.")
    assert rds.hget(keys.topics("project"), "backend") is None


# --- only allowed people --------------------------------------------------------------------------------


def test_strangers_reach_no_agent_and_no_worker(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    worker = f"w-{uuid.uuid4().hex[:6]}"  # never started: anything that reaches it waits in its stream
    AgentStore(rds, keys).save(Agent(id="agent-1", goal="x", project="backend", worker=worker, session="s"))
    bot.start()
    emit(rds, keys, "spawned", agent="agent-1", project="backend")
    topic = wait_topic(fake, "agent-1 [backend]")
    emit(rds, keys, "complete", "done", agent="agent-1", project="backend")
    wait_shown(fake, topic, "✓ agent-1 completed: done")
    done = next(m for m in bot_messages(fake, topic) if "completed" in m.text)
    kill = next(data for label, data in done.buttons[0] if label == "Kill")

    fake.inject_message(STRANGER, "rm -rf everything", thread_id=topic)
    fake.inject_message(STRANGER, "/kill agent-1", thread_id=topic)
    fake.inject_message(STRANGER, "/project stolen", thread_id=topic)
    stranger_tap = fake.inject_callback(STRANGER, done.message_id, kill)
    fake.inject_callback(USER, done.message_id, "k:no-such-agent")  # forged: refers to nothing
    fake.inject_callback(USER, done.message_id, "x:" + "A" * 70)  # forged: malformed
    sync_with_bot(fake, topic)

    assert rds.xlen(keys.commands(worker)) == 0
    assert stranger_tap not in [a.query_id for a in fake.callback_answers]
    assert rds.hget(keys.topics("project"), "stolen") is None
    assert "rm -rf" not in everywhere(fake).replace("rm -rf everything", "")  # nothing echoed
    log = bot.log.read_text()
    assert "ignored message from user 6666" in log and "ignored button tap from user 6666" in log

    # The same text from an allowed person does reach the worker's command stream.
    fake.inject_message(USER, "please go on", thread_id=topic)
    wait_shown(fake, topic, f"Worker {worker} is not running")
    ((_id, fields),) = cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.commands(worker)))
    command = json.loads(fields["c"])
    assert (command["op"], command["args"]["agent"], command["args"]["text"]) == (
        "send",
        "agent-1",
        "please go on",
    )


def test_in_the_project_topic_text_goes_to_the_agent_auto_mode_works_with(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    worker = f"w-{uuid.uuid4().hex[:6]}"  # not running: the text waits in its command stream
    AgentStore(rds, keys).save(Agent(id="auto-backend", project="backend", worker=worker, session="s"))
    loop = AutoState(
        project="backend", worker=worker, agent="auto-backend", task="t1", task_agent="auto-backend"
    )
    rds.hset(keys.auto("backend"), mapping=cast(Any, loop.to_hash()))
    bot.start()
    project = bind_project(fake, "backend")
    fake.inject_message(USER, "focus on the login form first", thread_id=project)
    wait_shown(fake, project, f"Worker {worker} is not running, so auto-backend has not got this yet")
    ((_id, fields),) = cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.commands(worker)))
    command = json.loads(fields["c"])
    assert (command["op"], command["args"]["agent"]) == ("send", "auto-backend")
    assert command["args"]["text"] == "focus on the login form first"


# --- faults ---------------------------------------------------------------------------------------------


@pytest.fixture
def no_ack_user(rds: redis.Redis, redis_url: str) -> Iterator[str]:
    """A Redis URL whose user may do everything but XACK: the bot shows, records, and cannot acknowledge."""
    name, password = f"ibtest-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    rds.acl_setuser(
        name,
        enabled=True,
        passwords=[f"+{password}"],
        keys=["*"],
        channels=["*"],
        categories=["+@all"],
        commands=["-xack"],
    )
    host = redis_url.split("://", 1)[1]
    yield f"redis://{name}:{password}@{host}"
    rds.acl_deluser(name)


def test_killed_after_telegram_accepted_before_the_ack_shows_once(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, no_ack_user: str
) -> None:
    bot.start()
    thread = bind_project(fake, "backend")
    bot.stop()
    bot.env["IB_REDIS_URL"] = no_ack_user
    bot.start()
    emit(rds, keys, "task_added", task="exactly-once", project="backend")
    wait_shown(fake, thread, "+ exactly-once added")
    retry_until(lambda: "shown but not acknowledged" in bot.log.read_text(), 20, 0.05, "the refused ack")
    bot.stop(signal.SIGKILL)
    assert rds.xpending(keys.events, GROUP)["pending"] == 1

    del bot.env["IB_REDIS_URL"]
    bot.start()
    settled(rds, keys)
    emit(rds, keys, "task_added", task="afterwards", project="backend")
    wait_shown(fake, thread, "+ afterwards added")
    assert shown(fake, thread).count("+ exactly-once added") == 1


def test_a_429_storm_loses_nothing_and_shows_nothing_twice(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    strict = Limits(per_second=1, burst=1, per_minute=5)
    with FakeTelegram(time_scale=SCALE, rates=strict) as fake:
        # Telegram is four times stricter than the bot believes: the fake answers 429 again and again,
        # with retry_after in its own seconds, which the bot must honour on its scaled clock.
        run = BotProcess(ib, fake, tmp_path / "bot.log", bot_env(fake))
        try:
            run.start()
            threads = [bind_project(fake, f"p{i}") for i in range(6)]
            for wave in range(5):
                for i in range(6):
                    emit(rds, keys, "task_added", task=f"t{wave}-{i}", project=f"p{i}")
            for i, thread in enumerate(threads):
                wait_shown(fake, thread, *(f"+ t{wave}-{i} added" for wave in range(5)), timeout=60)
            settled(rds, keys)
        finally:
            run.stop()
            print(run.log.read_text())
        assert fake.rejected_429 > 0
        # retry_after honoured, neither too short nor in real seconds: each refusal is followed by a
        # success, and the whole storm takes a few real seconds, not retry_after × SCALE.
        assert fake.rejected_429 <= fake.sent + fake.edited
        for i, thread in enumerate(threads):
            for wave in range(5):
                assert shown(fake, thread).count(f"+ t{wave}-{i} added") == 1
        assert "flood limit" in run.log.read_text()


def test_a_restarted_bot_respects_the_minute_its_predecessor_spent(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    scale = 5.0  # a minute of Telegram time is 12 real seconds: longer than a restart
    with FakeTelegram(time_scale=scale) as fake:
        run = BotProcess(ib, fake, tmp_path / "bot.log", bot_env(fake, scale=scale))
        threads = [fake.create_topic(f"p{i}") for i in range(21)]
        for i, thread in enumerate(threads):
            rds.hset(keys.topics("project"), f"p{i}", str(thread))
        try:
            run.start()
            for i in range(20):
                emit(rds, keys, "task_added", task=f"t{i}", project=f"p{i}")
            for i in range(20):
                wait_shown(fake, threads[i], f"+ t{i} added", timeout=60)
            run.stop(signal.SIGKILL)  # the minute's budget is spent; the next bot must know it
            assert rds.zcard(keys.telegram_budget(fake.chat_id)) == 20
            run.start()
            emit(rds, keys, "task_added", task="t20", project="p20")
            wait_shown(fake, threads[20], "+ t20 added", timeout=60)
            settled(rds, keys)
        finally:
            run.stop()
            print(run.log.read_text())
        assert fake.rejected_429 == 0
        assert "flood limit" not in run.log.read_text()


def test_output_of_a_new_turn_starts_a_new_message_at_the_bottom(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    emit(rds, keys, "spawned", "agent-8 started", agent="agent-8", sender="system")
    topic = wait_topic(fake, "agent-8")
    stream = keys.output("agent-8")

    def out(kind: str, text: str = "") -> None:
        rds.xadd(stream, {"kind": kind, "text": text, "tool": "", "ts": ""})

    out("prompt")
    out("tool_use", "**Read**(a.py)")
    out("text", "First turn done.")
    wait_shown(fake, topic, "Read(a.py)\nFirst turn done.")
    out("prompt")  # no event between the turns: the new turn alone starts a new message
    out("text", "Second turn.")
    wait_shown(fake, topic, "Second turn.")
    emit(rds, keys, "waiting", "agent-8 waits", agent="agent-8")
    wait_shown(fake, topic, "⏳ agent-8 is waiting")
    out("text", "Late words of the second turn.")  # after a message below it: a new message too
    wait_shown(fake, topic, "Late words of the second turn.")
    # The turn is over: its live status line goes too.
    retry_until(lambda: "⚙" not in shown(fake, topic), 20, 0.05, "the status line removed")
    texts = [m.text for m in bot_messages(fake, topic)]
    assert texts[-4:] == [
        "Read(a.py)\nFirst turn done.",
        "Second turn.",
        "⏳ agent-8 is waiting: agent-8 waits",
        "Late words of the second turn.",
    ]


def test_a_live_status_line_while_the_agent_works(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    emit(rds, keys, "spawned", "agent-9 started", agent="agent-9", sender="system")
    topic = wait_topic(fake, "agent-9")
    started = dt.datetime.now(dt.UTC)
    for kind, text, tool in [("prompt", "", ""), ("tool_use", "**Bash**(pytest -q)", "Bash")]:
        rds.xadd(
            keys.output("agent-9"), {"kind": kind, "text": text, "tool": tool, "ts": started.isoformat()}
        )

    def status_line() -> FakeMessage | None:
        return next((m for m in bot_messages(fake, topic) if m.text.startswith("⚙ Bash pytest -q")), None)

    line = retry_until(status_line, 20, 0.05, "the status line")
    assert line is not None and line.text.endswith("1 tool") and " — turn " in line.text
    assert bot_messages(fake, topic)[-1].message_id == line.message_id  # at the bottom of the topic
    # Edited in place as the time passes (one change every 10 s of Telegram time at most).
    edited = retry_until(lambda: (fake.message(line.message_id) or line).edits, 20, 0.05, "an edit")
    assert edited and (fake.message(line.message_id) or line).text != line.text
    emit(rds, keys, "waiting", "agent-9 waits", agent="agent-9")
    wait_shown(fake, topic, "⏳ agent-9 is waiting")
    retry_until(lambda: (fake.message(line.message_id) or line).deleted, 20, 0.05, "the status line removed")
    assert "⚙" not in shown(fake, topic)
    assert fake.rejected_429 == 0


def test_a_restarted_bot_takes_over_the_status_line_it_finds(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    rds.hset(keys.agent("agent-10"), mapping={"id": "agent-10", "state": "running"})  # alive: it has a record
    emit(rds, keys, "spawned", "agent-10 started", agent="agent-10", sender="system")
    topic = wait_topic(fake, "agent-10")
    started = dt.datetime.now(dt.UTC)
    for kind, text, tool in [("prompt", "", ""), ("tool_use", "**Grep**(TODO)", "Grep")]:
        rds.xadd(
            keys.output("agent-10"), {"kind": kind, "text": text, "tool": tool, "ts": started.isoformat()}
        )

    def status_lines() -> list[FakeMessage]:
        return [m for m in bot_messages(fake, topic) if m.text.startswith("⚙")]

    (line,) = retry_until(status_lines, 20, 0.05, "the status line")
    retry_until(lambda: rds.hget(keys.topics("status"), str(topic)) == str(line.message_id), 10, 0.05)
    bot.stop(signal.SIGKILL)
    bot.start()  # mid-turn: the new bot knows the line from the output stream and the message from Redis
    retry_until(lambda: (fake.message(line.message_id) or line).text != line.text, 20, 0.05, "an edit")
    assert [m.message_id for m in status_lines()] == [line.message_id]  # the same message, none left behind
    assert (fake.message(line.message_id) or line).text.startswith("⚙ Grep TODO · ")
    emit(rds, keys, "complete", "done", agent="agent-10")
    retry_until(lambda: not status_lines(), 20, 0.05, "the status line removed")
    retry_until(lambda: rds.hget(keys.topics("status"), str(topic)) is None, 10, 0.05, "forgotten")


def test_a_plain_notify_gets_no_agent_buttons(
    bot: BotProcess, fake: FakeTelegram, ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    thread = bind_project(fake, "backend")
    done = ib.run("notify", "--type", "complete", "--project", "backend", "the nightly build finished")
    assert done.returncode == 0, done.stderr
    wait_shown(fake, thread, "✓ unknown completed: the nightly build finished")
    settled(rds, keys)
    shown_complete = next(m for m in bot_messages(fake, thread) if "nightly build" in m.text)
    assert shown_complete.buttons == []


def _topic_call(fake: FakeTelegram, method: str, thread: int) -> None:
    """A person closes or deletes a topic (the Bot API call the Telegram app makes for them)."""
    answer = httpx.post(
        f"{fake.base_url}{fake.token}/{method}", json={"chat_id": fake.chat_id, "message_thread_id": thread}
    )
    assert answer.json()["ok"], answer.text


def test_a_deleted_or_closed_topic_never_loses_an_event(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    emit(rds, keys, "spawned", agent="agent-3", project="backend")
    first = wait_topic(fake, "agent-3 [backend]")
    wait_shown(fake, first, "→ agent-3 spawned")
    _topic_call(fake, "deleteForumTopic", first)
    emit(rds, keys, "waiting", "agent-3 waits for you", agent="agent-3", project="backend")
    second = retry_until(
        lambda: next((t.thread_id for t in fake.topics() if t.name == "agent-3 [backend]"), None), 20, 0.05
    )
    assert second is not None and second != first
    wait_shown(fake, second, "⏳ agent-3 is waiting: agent-3 waits for you")
    assert rds.hget(keys.topics("agent"), "agent-3") == str(second)

    _topic_call(fake, "closeForumTopic", second)
    emit(rds, keys, "rate_limited", "agent-3 hit a rate limit", agent="agent-3", project="backend")
    wait_shown(fake, second, "agent-3 is rate limited")
    topic = fake.topic(second)
    assert topic is not None and not topic.closed
    settled(rds, keys)


# --- relay through a running worker ---------------------------------------------------------------------


def spawn(ib: IbRunner, name: str, *steps: str) -> None:
    done = ib.run("new-agent", "\n".join(["Help the person.", *steps]), "--name", name)
    assert done.returncode == 0, done.stderr


def received(tmp_path: Path) -> str:
    path = tmp_path / "received.txt"
    return path.read_text() if path.exists() else ""


def test_typed_text_reaches_the_agent_verbatim(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker, tmp_path: Path
) -> None:
    bot.env["IB_WORKER_ID"] = agents_ib.env["IB_WORKER_ID"]
    bot.start()
    spawn(agents_ib, "painter", "fake: wait")
    topic = wait_agent_topic(fake, "painter")
    wait_shown(fake, topic, "⏳ painter is waiting", timeout=40)  # its turn is over: it reads what comes
    text = 'Blue; with "white" trim & $(no subst) <b>not bold</b> — ünïcode'
    typed = fake.inject_message(USER, text, thread_id=topic)
    retry_until(lambda: text in received(tmp_path), 30, 0.1, "the text in the agent")
    assert received(tmp_path) == text + "\n"
    retry_until(lambda: (fake.message(typed) or pytest.fail("gone")).reactions == ["👍"], 20, 0.05, "👍")


def test_a_question_is_answered_by_reply_and_by_button(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker, tmp_path: Path
) -> None:
    bot.start()
    spawn(agents_ib, "asker", "fake: ask What colour should the shed be?", "fake: wait")
    topic = wait_agent_topic(fake, "asker")
    wait_shown(fake, topic, "❓ asker asks: What colour should the shed be?", timeout=40)
    question = next(m for m in bot_messages(fake, topic) if "❓" in m.text)
    answer = fake.inject_message(USER, "Green, please", thread_id=topic, reply_to=question.message_id)
    retry_until(lambda: "Green, please" in received(tmp_path), 30, 0.1, "the answer in the agent")
    retry_until(lambda: (fake.message(answer) or pytest.fail("gone")).reactions == ["👍"], 20, 0.05, "👍")
    assert json.loads(agents_ib.run("questions", "--json").stdout) == []
    fake.inject_message(USER, "Blue, then", thread_id=topic, reply_to=question.message_id)  # answered
    wait_shown(fake, topic, "⚠ that question was already answered; nothing was sent")
    fake.inject_message(USER, "and the door red", thread_id=topic)  # typed, not a reply: for the agent
    retry_until(lambda: "and the door red" in received(tmp_path), 30, 0.1, "the text in the agent")
    assert "Blue, then" not in received(tmp_path)

    asked = agents_ib.run(
        "ask", "Postgres or SQLite?", "--option", "Postgres", "--option", "SQLite", "--from", "asker"
    )
    assert asked.returncode == 0, asked.stderr
    wait_shown(fake, topic, "asks: Postgres or SQLite?")
    options = next(m for m in bot_messages(fake, topic) if "asks: Postgres or SQLite?" in m.text)
    assert [row[0][0] for row in options.buttons] == ["Postgres", "SQLite"]
    fake.inject_callback(USER, options.message_id, options.buttons[1][0][1])
    retry_until(lambda: "SQLite" in received(tmp_path), 30, 0.1, "the option in the agent")
    retry_until(lambda: pending_questions(agents_ib) == [], 10, 0.1, "acknowledged")
    retry_until(lambda: (fake.message(options.message_id) or pytest.fail("gone")).buttons == [], 10, 0.05)


def test_one_kill_tap_is_one_message_edited_as_the_teardown_goes(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    bot.start()
    spawn(agents_ib, "doomed", "fake: done")
    topic = wait_agent_topic(fake, "doomed")
    wait_shown(fake, topic, "✓ doomed completed", timeout=40)
    settled(rds, keys)
    # what the bot had queued for the topic before the tap is sent first (a loaded run saw a second new
    # message: one queued before the tap, sent after it)
    sync_with_bot(fake, topic)
    done = next(m for m in bot_messages(fake, topic) if "doomed completed" in m.text)
    kill = next(data for label, data in done.buttons[0] if label == "Kill")
    before = {m.message_id for m in bot_messages(fake, topic)}
    fake.inject_callback(USER, done.message_id, kill)
    retry_until(lambda: "doomed" not in agent_ids(agents_ib), 30, 0.1, "the agent torn down")
    settled(rds, keys)
    wait_shown(fake, topic, "✗ Killed doomed")
    new = [m for m in bot_messages(fake, topic) if m.message_id not in before]
    assert len(new) == 1, [m.text for m in new]
    (note,) = new
    assert note.text.splitlines() == ["✗ Killed doomed", "✗ doomed killed"]
    assert note.edits  # "✗ Killing doomed…" first, then each step of the teardown


def _completed(
    ib: IbRunner, fake: FakeTelegram, rds: redis.Redis, keys: Keys, name: str, *steps: str
) -> tuple[int, FakeMessage]:
    """An agent spawned with `steps` that completed, the bot caught up: its topic and the message of its
    end (with the buttons)."""
    spawn(ib, name, *steps, "fake: done")
    topic = wait_agent_topic(fake, name)
    wait_shown(fake, topic, f"✓ {name} completed", timeout=40)
    settled(rds, keys)
    sync_with_bot(fake, topic)
    return topic, next(m for m in bot_messages(fake, topic) if f"{name} completed" in m.text)


def test_one_merge_tap_is_one_message_in_the_agents_topic(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
) -> None:
    """The merge was told three times there: the tap's answer, then `merged`, then `stopped`."""
    bot.start()
    topic, done = _completed(
        agents_ib, fake, rds, keys, "lander", "fake: write landed.txt yes", "fake: commit land it"
    )
    before = {m.message_id for m in bot_messages(fake, topic)}
    fake.inject_callback(
        USER, done.message_id, next(data for label, data in done.buttons[0] if label == "Merge")
    )
    retry_until(
        lambda: "lander" not in agents_ib.run("list").stdout, 60, 0.1, "the agent merged and torn down"
    )
    settled(rds, keys)
    wait_shown(fake, topic, "✓ Merged lander → main")
    new = [m for m in bot_messages(fake, topic) if m.message_id not in before]
    assert len(new) == 1, [m.text for m in new]
    assert new[0].text.splitlines()[0].startswith("✓ Merged lander → main (")
    assert (repo / "landed.txt").read_text() == "yes\n"


def test_a_merge_that_takes_long_holds_up_no_other_command(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
    tmp_path: Path,
) -> None:
    """The bot takes updates one at a time: a merge held up (here by a git hook) kept every later tap
    and message of the chat waiting, for up to the merge's two minutes."""
    bot.start()
    topic, done = _completed(
        agents_ib, fake, rds, keys, "slow", "fake: write slow.txt yes", "fake: commit slow one"
    )
    go = tmp_path / "go"
    hook = repo / ".git" / "hooks" / "reference-transaction"  # every ref update waits for `go`
    hook.write_text(f"#!/bin/sh\nwhile [ ! -e {go} ]; do sleep 0.05; done\n")
    hook.chmod(0o755)
    merge = next(data for label, data in done.buttons[0] if label == "Merge")
    try:
        fake.inject_callback(USER, done.message_id, merge)
        wait_shown(fake, topic, "⇢ Merging slow…")
        fake.inject_message(USER, "/agents", thread_id=topic)
        wait_shown(fake, topic, "slow · ")  # answered while the merge waits
        assert not (repo / "slow.txt").exists()
    finally:
        go.touch()
    wait_shown(fake, topic, "✓ Merged slow → main")
    assert (repo / "slow.txt").read_text() == "yes\n"


def test_a_kill_of_an_agent_with_unmerged_work_asks_before_it_throws_the_work_away(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    """Telegram had no way to force it: Kill said "has uncommitted changes (ib kill --force …)", and ended."""
    bot.start()
    spawn(agents_ib, "messy", "fake: write m.txt half done, not committed", "fake: done")
    topic = wait_agent_topic(fake, "messy")
    wait_shown(fake, topic, "✓ messy completed", timeout=40)
    settled(rds, keys)
    sync_with_bot(fake, topic)
    done = next(m for m in bot_messages(fake, topic) if "messy completed" in m.text)
    fake.inject_callback(
        USER, done.message_id, next(data for label, data in done.buttons[0] if label == "Kill")
    )
    wait_shown(fake, topic, "Stop it anyway and throw that work away?", timeout=40)
    asked = next(m for m in bot_messages(fake, topic) if "Stop it anyway" in m.text)
    assert "uncommitted changes (1 file)" in asked.text
    assert "messy" in agents_ib.run("list").stdout  # nothing thrown away yet
    anyway = next(data for label, data in asked.buttons[0] if label == "Stop anyway")
    fake.inject_callback(USER, asked.message_id, anyway)
    retry_until(lambda: "messy" not in agents_ib.run("list").stdout, 30, 0.1, "the agent torn down")
    wait_shown(fake, topic, "✗ Killed messy")
    retry_until(lambda: (fake.message(asked.message_id) or asked).buttons == [], 20, 0.05, "buttons gone")


def test_one_kill_of_a_real_claude_code_agent_is_one_message(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    bot: BotProcess,
    fake: FakeTelegram,
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
) -> None:
    """Claude Code's own hooks tell its end too (SessionEnd: `state`, `stopped`): all in the one message."""
    anthropic.script(reply("Nothing to change.\n\nI HAVE COMPLETED THE GOAL"))
    with (tmp_path / "worker.log").open("ab") as log:
        worker = subprocess.Popen(
            [IB, "worker"], stdout=log, stderr=subprocess.STDOUT, env=claude_ib.environ(), cwd=claude_ib.cwd
        )
    try:
        bot.start()
        assert claude_ib.run("new-agent", "check the README", "--name", "real").returncode == 0
        topic = wait_agent_topic(fake, "real", timeout=60)
        wait_shown(fake, topic, "✓ real completed", timeout=120)
        settled(rds, keys)
        done = next(m for m in bot_messages(fake, topic) if "real completed" in m.text)
        before = {m.message_id for m in bot_messages(fake, topic)}
        fake.inject_callback(
            USER, done.message_id, next(d for label, d in done.buttons[0] if label == "Kill")
        )
        wait_shown(fake, topic, "✗ Killed real", timeout=60)
        retry_until(lambda: "real" not in agent_ids(claude_ib), 30, 0.1, "the agent torn down")
        settled(rds, keys)
    finally:
        worker.terminate()
        worker.wait(30)
    (note,) = [m for m in bot_messages(fake, topic) if m.message_id not in before]
    assert note.text.splitlines()[0] == "✗ Killed real" and "✗ real killed" in note.text
    assert "⏹ real stopped" in note.text  # its SessionEnd hook's event, folded in


def test_a_reply_while_the_worker_is_down_is_kept_and_said(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    bot.start()
    spawn(agents_ib, "lonely", "fake: ask Shall I go on?", "fake: wait")  # no worker runs
    topic = wait_agent_topic(fake, "lonely")
    wait_shown(fake, topic, "❓ lonely asks: Shall I go on?", timeout=40)
    question = next(m for m in bot_messages(fake, topic) if "❓" in m.text)
    fake.inject_message(USER, "Yes, go on", thread_id=topic, reply_to=question.message_id)
    worker = agents_ib.env["IB_WORKER_ID"]
    wait_shown(fake, topic, f"⚠ Worker {worker} is not running, so lonely has not got this yet. It is queued")
    assert rds.xlen(keys.commands(worker)) == 1
    assert "Yes, go on" not in received(tmp_path)

    done = agents_ib.run("worker", "--once")  # the worker is back: what waited is delivered
    assert done.returncode == 0, done.stderr
    retry_until(lambda: "Yes, go on" in received(tmp_path), 30, 0.1, "the queued answer in the agent")
    assert json.loads(agents_ib.run("questions", "--json").stdout) == []


def test_new_agent_from_the_project_topic(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker
) -> None:
    bot.start()
    thread = bind_project(fake, "backend")
    fake.inject_message(USER, "/new --cli cursor Tidy the README", thread_id=thread)
    wait_shown(
        fake,
        thread,
        "--cli 'cursor' is not an agent program ittybus knows; use one of: claude, codex, gemini",
    )
    fake.inject_message(USER, "/new --cli claude Tidy the README\nfake: wait", thread_id=thread)
    wait_shown(fake, thread, "started on " + agents_ib.env["IB_WORKER_ID"], timeout=60)
    agent = next(line.split()[1] for line in shown(fake, thread).splitlines() if "started on" in line)
    topic = wait_topic(fake, f"{agent} [backend]")
    wait_shown(fake, topic, f"→ {agent} spawned: Tidy the README", "CLI: claude")
    fake.inject_message(USER, "/look", thread_id=topic)
    wait_shown(fake, topic, agent + "\n", timeout=30)


# --- the /auto cycle from Telegram ------------------------------------------------------------------------


def add_task(ib: IbRunner, task_id: str, priority: int, *lines: str, after: str = "") -> None:
    extra = ("--after", after) if after else ()
    done = ib.run(
        "task", "add", task_id, "--id", task_id, "--project", "backend", "--priority", str(priority),
        "--body", "\n".join(lines), *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.timeout(300)
def test_auto_with_worktrees_from_the_project_topic(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker, repo: Path
) -> None:
    add_task(
        agents_ib,
        "design-auth",
        8,
        "Design the auth module.",
        "fake: write auth.txt jwt",
        "fake: commit design auth",
        'fake: run ib task done design-auth --summary "Implemented JWT auth"',
        "fake: done",
    )
    add_task(
        agents_ib,
        "write-tests",
        5,
        "Write the tests.",
        "fake: write tests.txt 47 tests",
        "fake: commit add tests",
        'fake: run ib task done write-tests --summary "Added 47 tests"',
        "fake: done",
        after="design-auth",
    )
    bot.start()
    project = bind_project(fake, "backend")
    fake.inject_message(USER, "/tasks", thread_id=project)
    wait_shown(fake, project, "→ design-auth (p8) design-auth", "… write-tests (p5) write-tests")
    fake.inject_message(USER, "/auto --worktrees", thread_id=project)
    wait_shown(fake, project, "→ Queue empty. Auto mode finished. 2/2 tasks done.", timeout=240)
    in_project = shown(fake, project)
    for line in (
        "Auto mode started for project backend (a worktree per task)",
        "→ design-auth claimed by",
        '✓ design-auth completed: "Implemented JWT auth"',
        "→ write-tests ready",
        "✓ Merged → main",
        '✓ write-tests completed: "Added 47 tests"',
    ):
        assert in_project.count(line) >= 1, (line, in_project)
    assert in_project.index("design-auth claimed") < in_project.index("write-tests claimed")
    for task, summary in (("design-auth", "Implemented JWT auth"), ("write-tests", "Added 47 tests")):
        topic = wait_topic(fake, f"{task} [backend]")
        # each topic's messages go out in their own order: the task's may come after the project's last
        wait_shown(fake, topic, f"→ {task} claimed by", f'✓ {task} completed: "{summary}"')
        in_task = shown(fake, topic)
        assert "Merged" not in in_task and "Auto mode" not in in_task  # the data plane only
    assert (repo / "auth.txt").read_text() == "jwt\n" and (repo / "tests.txt").read_text() == "47 tests\n"
    fake.inject_message(USER, "/status", thread_id=project)
    wait_shown(fake, project, "Auto mode: finished")


def test_a_permission_dialog_is_allowed_from_telegram_once(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker, repo: Path
) -> None:
    bot.start()
    spawn(agents_ib, "builder", "fake: permission touch allowed.txt", "fake: done")
    topic = wait_agent_topic(fake, "builder")
    wait_shown(fake, topic, "🔐 builder asks to use Bash", timeout=40)
    shown_dialog = next(m for m in bot_messages(fake, topic) if "🔐" in m.text)
    assert "touch allowed.txt" in shown_dialog.text
    assert [label for label, _data in shown_dialog.buttons[0]] == ["Allow", "Always allow", "Deny"]
    allow, deny = shown_dialog.buttons[0][0][1], shown_dialog.buttons[0][2][1]
    fake.inject_message(USER, "just do it", thread_id=topic)  # typed while the dialog is open
    wait_shown(
        fake, topic, "⚠ builder shows a dialog, so nothing was typed: answer it with its buttons above"
    )
    fake.inject_callback(USER, shown_dialog.message_id, allow)
    made = repo / ".ib" / "agents" / "builder" / "repo" / "allowed.txt"
    retry_until(made.exists, 30, 0.1, "the allowed command ran")
    wait_shown(fake, topic, "✓ builder completed", timeout=40)
    fake.inject_callback(USER, shown_dialog.message_id, deny)  # a second person, too late
    wait_shown(fake, topic, "⚠ that dialog of builder was already answered")
    late = agents_ib.run("deny", "builder", "--prompt", "p-" + allow.rsplit(":", 1)[1])
    assert (late.returncode, late.stderr.strip()) == (
        1,
        "ib deny: error: that dialog of builder was already answered",
    )
