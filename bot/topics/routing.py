"""Which forum topics show an event, in which style, and which topic must be created first.

Pure: given an event and the current bindings (project, task, agent and merge → topic), `route`
returns deliveries; the shell creates topics, binds them, renders and sends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from bot.render.render import Style
from bot.render.split import telegram_length
from bus.events.event_model import Event

TOPIC_NAME_LIMIT = 128

_SPACES = re.compile(r"\s+")


class TopicKind(StrEnum):
    """Topics routing may ask for. Project topics are bound by a person (/project), never created here."""

    TASK = "task"
    AGENT = "agent"
    MERGE = "merge"


@dataclass(frozen=True)
class Bindings:
    """Topic (message_thread_id) of each bound project, task, agent and merge (keyed by task or agent id)."""

    projects: Mapping[str, int] = field(default_factory=dict)
    tasks: Mapping[str, int] = field(default_factory=dict)
    agents: Mapping[str, int] = field(default_factory=dict)
    merges: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicRequest:
    """A topic to create before delivering: its kind, the id to bind it to, and its name."""

    kind: TopicKind
    key: str
    name: str


@dataclass(frozen=True)
class Delivery:
    """Show the event in topic `thread_id` (None: the General topic) in `style`.

    With `create`, the topic does not exist yet: create it, bind it, and deliver there (`thread_id` is
    then None and means nothing).
    """

    thread_id: int | None
    style: Style
    create: TopicRequest | None = None


@dataclass(frozen=True)
class _Rule:
    project: Style | None = None  # style in the project topic
    data: Style | None = None  # style in the task or agent topic (the data plane)
    prefer_agent: bool = False  # which binding is looked up first for the data plane
    create: TopicKind | None = None  # data-plane topic to ask for when none is bound
    merge: Style | None = None  # style in the merge topic, when bound
    create_merge: bool = False  # ask for the merge topic when none is bound
    person: bool = False  # must reach a person: fall back to the project topic, then General
    other_agent: bool = False  # also the topic of the agent named in data["other_agent"] (both sides)


_F, _S, _O = Style.FULL, Style.SUMMARY, Style.OUTPUT
_A = TopicKind.AGENT  # an agent that never had a `spawned` event (the bot started later) gets its topic too

# The seed's "event routing summary", extended with the agent events.
RULES: dict[str, _Rule] = {
    "task_added": _Rule(project=_F),
    "task_ready": _Rule(project=_F),
    "task_claimed": _Rule(project=_F, data=_F, create=TopicKind.TASK),
    "task_done": _Rule(project=_F, data=_F),
    "task_failed": _Rule(project=_F, data=_F),
    "merge_ready": _Rule(project=_F),
    "merge_merged": _Rule(project=_F, merge=_F),
    "merge_conflict": _Rule(project=_F, merge=_F, create_merge=True),
    "merge_failed": _Rule(project=_F, merge=_F),
    "auto_started": _Rule(project=_F),
    "auto_finished": _Rule(project=_F),
    "auto_paused": _Rule(project=_F),
    "auto_stopped": _Rule(project=_F),
    "plan_ready": _Rule(project=_F, person=True),
    "plan_failed": _Rule(project=_F, person=True),
    "plan_approved": _Rule(project=_F),
    "plan_discarded": _Rule(project=_F),
    "complete": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "waiting": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "question": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "message": _Rule(data=_O, prefer_agent=True, create=_A, person=True),
    "spawned": _Rule(project=_S, data=_F, prefer_agent=True, create=TopicKind.AGENT),
    "state": _Rule(data=_F, prefer_agent=True),
    "rate_limited": _Rule(project=_S, data=_F, prefer_agent=True, create=_A),
    "limited": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "resumed": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "permission": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "dialog_detail": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),  # as its dialog
    "error": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "notification": _Rule(data=_F, prefer_agent=True),
    "stopped": _Rule(project=_S, data=_F, prefer_agent=True),
    "killed": _Rule(project=_S, data=_F, prefer_agent=True),
    "merged": _Rule(project=_S, data=_F, prefer_agent=True),
    "conflict_risk": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, other_agent=True),
    "budget_warning": _Rule(project=_S, data=_F, prefer_agent=True, create=_A),
    "budget_exceeded": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
    "runaway": _Rule(project=_S, data=_F, prefer_agent=True, create=_A, person=True),
}
_UNKNOWN = _Rule(project=_S)


def route(event: Event, bindings: Bindings) -> list[Delivery]:
    """Where `event` shows: the project topic first, then the task/agent topic, then the merge topic.

    A topic gets one delivery per event (the fuller style wins). Events of a project with no bound
    topic get no project delivery; an event a person must see (complete, waiting, question, message)
    with no task or agent topic gets its agent's topic created; from no agent, it goes in full to the
    project topic, else to General.
    """
    if event.type == "message" and event.data.get("acknowledged"):
        return []  # bookkeeping: someone cleared messages, nothing for a person to read
    rule = RULES.get(event.type, _UNKNOWN)
    project_topic = bindings.projects.get(event.project) if event.project else None
    out: list[Delivery] = []
    if rule.project is not None and project_topic is not None:
        out.append(Delivery(project_topic, rule.project))
    if rule.data is not None:
        out.extend(_data_plane(event, bindings, rule, rule.data, project_topic))
    if rule.merge is not None:
        out.extend(_merge(event, bindings, rule.merge, rule.create_merge))
    if rule.other_agent:
        out.extend(_other_agent(event, bindings))
    return _one_per_topic(out)


def _other_agent(event: Event, bindings: Bindings) -> list[Delivery]:
    """The other side of an event about two agents (a conflict risk): its topic, made when it has none."""
    other = event.data.get("other_agent")
    if not isinstance(other, str) or not other or other == event.agent:
        return []
    topic = bindings.agents.get(other)
    if topic is not None:
        return [Delivery(topic, Style.FULL)]
    return [
        Delivery(None, Style.FULL, TopicRequest(TopicKind.AGENT, other, topic_name(other, event.project)))
    ]


def _data_plane(
    event: Event, bindings: Bindings, rule: _Rule, style: Style, project_topic: int | None
) -> list[Delivery]:
    order = (
        (bindings.agents.get(event.agent or ""), bindings.tasks.get(event.task or ""))
        if rule.prefer_agent
        else (bindings.tasks.get(event.task or ""), bindings.agents.get(event.agent or ""))
    )
    topic = next((t for t in order if t is not None), None)
    if topic is not None:
        return [Delivery(topic, style)]
    key = event.task if rule.create is TopicKind.TASK else event.agent
    if rule.create is not None and key:
        return [Delivery(None, style, TopicRequest(rule.create, key, topic_name(key, event.project)))]
    if rule.person:
        return [Delivery(project_topic, Style.FULL)]
    return []


def _merge(event: Event, bindings: Bindings, style: Style, create: bool) -> list[Delivery]:
    key = event.task or event.agent
    if not key:
        return []
    topic = bindings.merges.get(key)
    if topic is not None:
        return [Delivery(topic, style)]
    if create:
        name = topic_name(f"merge-{key}", event.project)
        return [Delivery(None, style, TopicRequest(TopicKind.MERGE, key, name))]
    return []


_RANK = {Style.SUMMARY: 0, Style.FULL: 1, Style.OUTPUT: 1}


def _one_per_topic(deliveries: list[Delivery]) -> list[Delivery]:
    out: list[Delivery] = []
    for d in deliveries:
        same = next((i for i, o in enumerate(out) if o.create is None and o.thread_id == d.thread_id), None)
        if d.create is not None or same is None:
            out.append(d)
        elif _RANK[d.style] > _RANK[out[same].style]:
            out[same] = Delivery(d.thread_id, d.style)
    return out


def topic_name(key: str, project: str | None) -> str:
    """`<key> [<project>]` on one line, at most 128 UTF-16 units; the key is shortened first."""
    key = _SPACES.sub(" ", key).strip() or "?"
    suffix = f" [{_SPACES.sub(' ', project).strip()}]" if project and project.strip() else ""
    if telegram_length(suffix) > TOPIC_NAME_LIMIT // 2:
        return _cut(key + suffix, TOPIC_NAME_LIMIT)
    return _cut(key, TOPIC_NAME_LIMIT - telegram_length(suffix)) + suffix


def _cut(text: str, limit: int) -> str:
    """`text` within `limit` UTF-16 units, ending in an ellipsis when cut (never half a character)."""
    if telegram_length(text) <= limit:
        return text
    out = ""
    for char in text:
        if telegram_length(out + char) > limit - 1:
            break
        out += char
    return out.rstrip() + "…"
