"""Routing events to forum topics: the seed's routing table, the agent events, and topics to create."""

from __future__ import annotations

from typing import Any

import pytest

from bot.render.render import Style
from bot.render.split import telegram_length
from bot.topics.routing import (
    TOPIC_NAME_LIMIT,
    Bindings,
    Delivery,
    TopicKind,
    TopicRequest,
    route,
    topic_name,
)
from bus.events.event_model import Event

PROJECT, TASK, AGENT, MERGE = 10, 20, 30, 40
ALL_BOUND = Bindings(
    projects={"backend": PROJECT},
    tasks={"design-auth": TASK},
    agents={"agent-1": AGENT},
    merges={"design-auth": MERGE},
)
F, S, OUT = Style.FULL, Style.SUMMARY, Style.OUTPUT


def event(type_: str, **fields: Any) -> Event:
    base: dict[str, Any] = {
        "project": "backend",
        "task": "design-auth",
        "agent": "agent-1",
        "from": "agent-1",
    }
    base.update(fields)
    return Event.model_validate({"type": type_, **base})


def shown(deliveries: list[Delivery]) -> list[tuple[int | None, Style]]:
    assert all(d.create is None for d in deliveries)
    return [(d.thread_id, d.style) for d in deliveries]


# The seed's "Event routing summary" (project / task / merge topic), every topic bound.
SEED_TABLE = [
    ("task_ready", [(PROJECT, F)]),
    ("task_done", [(PROJECT, F), (TASK, F)]),
    ("task_failed", [(PROJECT, F), (TASK, F)]),
    ("merge_merged", [(PROJECT, F), (MERGE, F)]),
    ("merge_conflict", [(PROJECT, F), (MERGE, F)]),
    ("merge_failed", [(PROJECT, F), (MERGE, F)]),
]

# Our extension: the other task, merge and auto events, the agent events and unknown types.
EXTENDED_TABLE = [
    ("task_added", [(PROJECT, F)]),
    ("task_claimed", [(PROJECT, F), (TASK, F)]),
    ("merge_ready", [(PROJECT, F)]),
    ("auto_started", [(PROJECT, F)]),
    ("auto_finished", [(PROJECT, F)]),
    ("auto_paused", [(PROJECT, F)]),
    ("auto_stopped", [(PROJECT, F)]),
    ("question", [(PROJECT, S), (AGENT, F)]),
    ("waiting", [(PROJECT, S), (AGENT, F)]),
    ("complete", [(PROJECT, S), (AGENT, F)]),
    ("message", [(AGENT, OUT)]),
    ("spawned", [(PROJECT, S), (AGENT, F)]),
    ("state", [(AGENT, F)]),
    ("rate_limited", [(PROJECT, S), (AGENT, F)]),
    ("stopped", [(PROJECT, S), (AGENT, F)]),
    ("killed", [(PROJECT, S), (AGENT, F)]),
    ("merged", [(PROJECT, S), (AGENT, F)]),
    ("from_a_newer_producer", [(PROJECT, S)]),
]


@pytest.mark.parametrize(
    ("type_", "expected"), SEED_TABLE + EXTENDED_TABLE, ids=[r[0] for r in SEED_TABLE + EXTENDED_TABLE]
)
def test_every_topic_bound(type_: str, expected: list[tuple[int | None, Style]]) -> None:
    assert shown(route(event(type_), ALL_BOUND)) == expected


PARTLY_BOUND = [
    # task events go to the task's topic, else to the topic of the agent doing it
    (
        "task_done-agent-topic",
        event("task_done"),
        Bindings(projects={"backend": PROJECT}, agents={"agent-1": AGENT}),
        [(PROJECT, F), (AGENT, F)],
    ),
    ("task_done-no-data-topic", event("task_done"), Bindings(projects={"backend": PROJECT}), [(PROJECT, F)]),
    # agent events go to the agent's topic, else the task's
    (
        "question-task-topic",
        event("question"),
        Bindings(projects={"backend": PROJECT}, tasks={"design-auth": TASK}),
        [(PROJECT, S), (TASK, F)],
    ),
    # a person must see these: from no agent, the project topic gets them in full, else General
    (
        "question-project-only",
        event("question", agent=None),
        Bindings(projects={"backend": PROJECT}),
        [(PROJECT, F)],
    ),
    ("question-nothing-bound", event("question", agent=None), Bindings(), [(None, F)]),
    (
        "complete-no-project",
        event("complete", project=None),
        Bindings(agents={"agent-1": AGENT}),
        [(AGENT, F)],
    ),
    ("message-nothing-bound", event("message", agent=None), Bindings(), [(None, F)]),
    # an unbound project gets nothing
    ("task_ready-unbound-project", event("task_ready"), Bindings(), []),
    ("unknown-unbound-project", event("brand_new"), Bindings(tasks={"design-auth": TASK}), []),
    ("task_done-other-project", event("task_done", project="frontend"), ALL_BOUND, [(TASK, F)]),
    ("state-nothing-bound", event("state"), Bindings(projects={"backend": PROJECT}), []),
    # merge topics only when bound; without a task or agent id there is no merge key
    (
        "merge_merged-no-merge-topic",
        event("merge_merged"),
        Bindings(projects={"backend": PROJECT}),
        [(PROJECT, F)],
    ),
    ("merge_conflict-no-key", event("merge_conflict", task=None, agent=None), ALL_BOUND, [(PROJECT, F)]),
    (
        "merge_failed-agent-key",
        event("merge_failed", task=None),
        Bindings(merges={"agent-1": MERGE}),
        [(MERGE, F)],
    ),
    # one delivery per topic, the fuller style wins
    (
        "question-agent-in-project-topic",
        event("question"),
        Bindings(projects={"backend": PROJECT}, agents={"agent-1": PROJECT}),
        [(PROJECT, F)],
    ),
    (
        "message-agent-in-project-topic",
        event("message"),
        Bindings(projects={"backend": PROJECT}, agents={"agent-1": PROJECT}),
        [(PROJECT, OUT)],
    ),
    (
        "task_claimed-task-in-project-topic",
        event("task_claimed"),
        Bindings(projects={"backend": PROJECT}, tasks={"design-auth": PROJECT}),
        [(PROJECT, F)],
    ),
]


@pytest.mark.parametrize(
    ("event_", "bindings", "expected"), [r[1:] for r in PARTLY_BOUND], ids=[r[0] for r in PARTLY_BOUND]
)
def test_partly_bound(event_: Event, bindings: Bindings, expected: list[tuple[int | None, Style]]) -> None:
    assert shown(route(event_, bindings)) == expected


CREATES = [
    (
        "task_claimed",
        event("task_claimed"),
        Bindings(projects={"backend": PROJECT}),
        TopicRequest(TopicKind.TASK, "design-auth", "design-auth [backend]"),
    ),
    (
        "task_claimed-no-project",
        event("task_claimed", project=None),
        Bindings(),
        TopicRequest(TopicKind.TASK, "design-auth", "design-auth"),
    ),
    (
        "spawned",
        event("spawned", task=None),
        Bindings(projects={"backend": PROJECT}),
        TopicRequest(TopicKind.AGENT, "agent-1", "agent-1 [backend]"),
    ),
    # an agent that never had a `spawned` event (the bot started after it) gets its topic all the same
    *(
        (
            f"{type_}-no-spawned",
            event(type_, task=None),
            Bindings(projects={"backend": PROJECT}),
            TopicRequest(TopicKind.AGENT, "agent-1", "agent-1 [backend]"),
        )
        for type_ in ("question", "complete", "waiting", "permission", "error", "rate_limited")
    ),
    (
        "question-no-spawned-nothing-bound",
        event("question", task=None, project=None),
        Bindings(),
        TopicRequest(TopicKind.AGENT, "agent-1", "agent-1"),
    ),
    (
        "merge_conflict",
        event("merge_conflict"),
        Bindings(projects={"backend": PROJECT}),
        TopicRequest(TopicKind.MERGE, "design-auth", "merge-design-auth [backend]"),
    ),
    (
        "merge_conflict-agent",
        event("merge_conflict", task=None),
        Bindings(),
        TopicRequest(TopicKind.MERGE, "agent-1", "merge-agent-1 [backend]"),
    ),
]


@pytest.mark.parametrize(
    ("event_", "bindings", "request_"), [r[1:] for r in CREATES], ids=[r[0] for r in CREATES]
)
def test_asks_for_a_topic(event_: Event, bindings: Bindings, request_: TopicRequest) -> None:
    created = [d for d in route(event_, bindings) if d.create is not None]
    assert created == [Delivery(None, Style.FULL, request_)]


NO_CREATE = [
    ("task_claimed-task-bound", event("task_claimed"), ALL_BOUND),
    ("task_claimed-agent-bound", event("task_claimed"), Bindings(agents={"agent-1": AGENT})),
    ("task_claimed-no-task-id", event("task_claimed", task=None, agent=None), Bindings()),
    ("spawned-task-bound", event("spawned"), Bindings(tasks={"design-auth": TASK})),
    ("spawned-no-agent-id", event("spawned", agent=None, task=None), Bindings()),
    ("merge_conflict-bound", event("merge_conflict"), ALL_BOUND),
    ("merge_failed-unbound", event("merge_failed"), Bindings()),
    ("killed-no-topic", event("killed", task=None), Bindings()),  # no topic for an agent that is gone
    ("state-no-topic", event("state", task=None), Bindings()),
]


@pytest.mark.parametrize(("event_", "bindings"), [r[1:] for r in NO_CREATE], ids=[r[0] for r in NO_CREATE])
def test_asks_for_no_topic(event_: Event, bindings: Bindings) -> None:
    assert all(d.create is None for d in route(event_, bindings))


def test_the_project_topic_comes_first() -> None:
    deliveries = route(event("merge_conflict"), Bindings(projects={"backend": PROJECT}))
    assert [d.thread_id for d in deliveries] == [PROJECT, None]
    assert deliveries[1].create is not None


LONG = "x" * 300
NAMES = [
    ("plain", "design-auth", "backend", "design-auth [backend]"),
    ("no-project", "agent-7", None, "agent-7"),
    ("blank-project", "agent-7", "  ", "agent-7"),
    ("newlines-become-spaces", "fix\nthe\tbug", "back\nend", "fix the bug [back end]"),
    ("long-key-keeps-project", LONG, "backend", "x" * (TOPIC_NAME_LIMIT - 11) + "… [backend]"),
    ("long-project-cuts-all", "t", "p" * 200, "t [" + "p" * (TOPIC_NAME_LIMIT - 4) + "…"),
]


@pytest.mark.parametrize(("key", "project", "expected"), [r[1:] for r in NAMES], ids=[r[0] for r in NAMES])
def test_topic_names(key: str, project: str | None, expected: str) -> None:
    name = topic_name(key, project)
    assert name == expected
    assert telegram_length(name) <= TOPIC_NAME_LIMIT


@pytest.mark.parametrize("char", ["é", "😀", "👩‍💻"], ids=["bmp", "astral", "zwj-sequence"])
def test_topic_names_never_split_a_character(char: str) -> None:
    name = topic_name(char * 200, "backend")
    assert telegram_length(name) <= TOPIC_NAME_LIMIT
    assert name.endswith("… [backend]")
    name.encode("utf-8")  # no lone surrogate


def test_acknowledged_messages_are_bookkeeping_not_shown() -> None:
    event = Event.from_envelope(
        {"type": "message", "from": "user", "project": "backend", "data": {"acknowledged": ["m-1"]}}
    )
    assert route(event, Bindings(projects={"backend": 7})) == []


OTHER = 31


def test_a_conflict_risk_shows_in_both_agents_topics() -> None:
    bindings = Bindings(projects={"backend": PROJECT}, agents={"agent-1": AGENT, "agent-2": OTHER})
    risk = event("conflict_risk", task=None, data={"other_agent": "agent-2"})
    assert shown(route(risk, bindings)) == [(PROJECT, S), (AGENT, F), (OTHER, F)]


def test_a_conflict_risk_makes_the_other_agents_topic_when_it_has_none() -> None:
    bindings = Bindings(projects={"backend": PROJECT}, agents={"agent-1": AGENT})
    risk = event("conflict_risk", task=None, data={"other_agent": "agent-2"})
    deliveries = route(risk, bindings)
    assert [(d.thread_id, d.style) for d in deliveries if d.create is None] == [(PROJECT, S), (AGENT, F)]
    (made,) = [d.create for d in deliveries if d.create is not None]
    assert made == TopicRequest(TopicKind.AGENT, "agent-2", "agent-2 [backend]")


BAD_OTHERS = {"missing": {}, "not-a-string": {"other_agent": 7}, "itself": {"other_agent": "agent-1"}}


@pytest.mark.parametrize("data", BAD_OTHERS.values(), ids=BAD_OTHERS.keys())
def test_a_conflict_risk_against_the_branch_or_garbled_shows_once(data: dict[str, Any]) -> None:
    bindings = Bindings(projects={"backend": PROJECT}, agents={"agent-1": AGENT})
    assert shown(route(event("conflict_risk", task=None, data=data), bindings)) == [(PROJECT, S), (AGENT, F)]
