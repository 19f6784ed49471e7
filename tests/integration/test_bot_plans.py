"""Plans from Telegram: /plan in a project topic, the tree with Approve / Edit / Discard, a reply that sends
changes back to the planner, and a refused plan that adds nothing — a fake planner agent, a real worker."""

from __future__ import annotations

import json

from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, bot_messages, wait_shown
from tests.waiting import retry_until

TWO = json.dumps(
    {
        "tasks": [
            {"id": "schema", "title": "Write the schema"},
            {"id": "api", "title": "Serve it", "after": ["schema"]},
        ]
    }
)


def tasks(ib: IbRunner) -> list[str]:
    return sorted(t["id"] for t in json.loads(ib.run("task", "list", "--all", "--json").stdout))


def test_plan_edit_by_reply_then_approve(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker
) -> None:
    bot.env["IB_WORKER_ID"] = agents_ib.env["IB_WORKER_ID"]
    bot.start()
    thread = bind_project(fake, "repo")
    one = json.dumps({"tasks": [{"id": "schema", "title": "Write the schema"}]})
    fake.inject_message(
        USER, f"/plan Store the users\nfake: write plan.json {one}\nfake: done", thread_id=thread
    )
    wait_shown(fake, thread, "🗺 plan-1: planner ", "🗺 plan-1: 1 tasks for: Store the users", timeout=40)
    shown = next(m for m in bot_messages(fake, thread) if "1 tasks for" in m.text)
    assert "schema (p5) Write the schema" in shown.text
    assert [label for label, _ in shown.buttons[0]] == ["✓ Approve", "✎ Edit", "✗ Discard"]
    assert tasks(agents_ib) == []

    fake.inject_callback(USER, shown.message_id, shown.buttons[0][1][1])  # Edit
    wait_shown(fake, thread, "✎ Reply to the plan message of plan-1")
    fake.inject_message(
        USER, f"fake: write plan.json {TWO}\nfake: done", thread_id=thread, reply_to=shown.message_id
    )
    wait_shown(fake, thread, "🗺 plan-1: 2 tasks for: Store the users", timeout=40)
    second = next(m for m in bot_messages(fake, thread) if "2 tasks for" in m.text)
    assert "└─ api (p5) Serve it" in second.text and tasks(agents_ib) == []

    fake.inject_callback(USER, second.message_id, second.buttons[0][0][1])  # Approve
    wait_shown(fake, thread, "✓ plan-1 approved: 2 tasks added: schema, api")
    assert tasks(agents_ib) == ["api", "schema"]


def test_a_refused_plan_and_discard(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker
) -> None:
    bot.env["IB_WORKER_ID"] = agents_ib.env["IB_WORKER_ID"]
    bot.start()
    thread = bind_project(fake, "repo")
    fake.inject_message(
        USER,
        '/plan Loop\nfake: write plan.json [{"id": "a", "title": "A", "after": ["a"]}]\nfake: done',
        thread_id=thread,
    )
    wait_shown(fake, thread, "✗ plan-1 failed: the plan has a cycle: a → a — nothing was added", timeout=40)
    fake.inject_message(USER, f"/plan Again\nfake: write plan.json {TWO}\nfake: done", thread_id=thread)
    wait_shown(fake, thread, "🗺 plan-2: 2 tasks for: Again", timeout=40)
    shown = next(m for m in bot_messages(fake, thread) if "2 tasks for: Again" in m.text)
    fake.inject_callback(USER, shown.message_id, shown.buttons[0][2][1])  # Discard
    wait_shown(fake, thread, "🗑 plan-2 discarded: nothing was added")
    fake.inject_message(USER, "/plans", thread_id=thread)
    wait_shown(fake, thread, "plan-1 · failed · Loop", "plan-2 · discarded · Again")
    retry_until(lambda: tasks(agents_ib) == [], 5, 0.1, "no tasks")
    fake.inject_message(USER, "/plan", thread_id=thread)
    wait_shown(fake, thread, "usage: /plan GOAL")
