"""How many events told each incident of bench/incident_bench.py, from the events stream: pure.

Every event of a telling type (complete, waiting, question, permission, error, limited, stopped, and a
`state` event to a state the program tells no other way, such as Codex's `state:error`) of an agent falls
in the window of that agent's incident that began last before it. The incident's own type
counts for it; the one event its answer leads to (`follows`) is expected; any other telling is the wrong
one when the incident has none of its own (an API error told as `waiting`), else a stray, told against
the row of its type (a late second telling lands there). A `stopped` before the agent's own `spawned` is a
phantom and counts against the `stopped` row.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

TELLING = frozenset({"complete", "waiting", "question", "permission", "error", "limited", "stopped"})


@dataclass(frozen=True)
class Seen:
    """One event from the stream: its id, the time of its id (seconds) and the event."""

    id: str
    at: float
    event: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.event.get("type"))

    @property
    def telling(self) -> str:
        """The type, or `state:<to_state>` for a `state` event (what tells a program's incident when it
        has no event of its own for it)."""
        if self.type == "state":
            return f"state:{(self.event.get('data') or {}).get('to_state', '')}"
        return self.type

    def line(self) -> str:
        data = self.event.get("data") or {}
        said = str(self.event.get("msg", ""))[:70]
        return f"{self.type} {self.id} kind={data.get('kind', '-')} seen={data.get('seen', '-')} {said!r}"


@dataclass
class Incident:
    """One incident of `kind` (the row) on `agent`, told by events of type `told`."""

    program: str
    kind: str
    agent: str
    told: str
    follows: str
    start: float  # before the bench did anything that leads to it
    moment: float = 0.0  # the stand-in's answer that causes it, or the kill
    told_at: float = 0.0  # when the bench saw it told (0: not within its wait)
    events: list[Seen] = field(default_factory=list)
    others: list[Seen] = field(default_factory=list)  # other tellings in its window
    followed: int = 0

    @property
    def wrong(self) -> list[Seen]:
        """What told it instead of its own event, when none did."""
        return [] if self.events else self.others

    @property
    def row(self) -> tuple[str, str]:
        return (self.program, self.kind)


@dataclass
class Row:
    incidents: list[Incident] = field(default_factory=list)
    strays: list[Seen] = field(default_factory=list)
    phantoms: list[Seen] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(len(i.events) for i in self.incidents) + len(self.strays) + len(self.phantoms)

    @property
    def per_incident(self) -> float:
        return self.events / len(self.incidents) if self.incidents else 0.0

    @property
    def missed(self) -> int:
        return sum(1 for i in self.incidents if not i.events)

    def told_as(self) -> dict[str, int]:
        """Incidents told by another event instead, by that event's type."""
        found: dict[str, int] = defaultdict(int)
        for incident in self.incidents:
            if incident.wrong:
                found[incident.wrong[0].telling] += 1
        return dict(found)

    def latencies(self) -> list[float]:
        return [i.events[0].at - i.moment for i in self.incidents if i.events]

    def twice(self) -> list[Incident]:
        return [i for i in self.incidents if len(i.events) > 1]


def count(incidents: list[Incident], seen: list[Seen], spawned: dict[str, str]) -> dict[tuple[str, str], Row]:
    """The rows, each incident with its events; `spawned` is agent → program of every agent started."""
    rows: dict[tuple[str, str], Row] = defaultdict(Row)
    tellings: dict[str, set[str]] = defaultdict(lambda: set(TELLING))
    for incident in incidents:
        rows[incident.row].incidents.append(incident)
        tellings[incident.program] |= {incident.told}
    by_agent: dict[str, list[Incident]] = defaultdict(list)
    for incident in sorted(incidents, key=lambda i: i.start):
        by_agent[incident.agent].append(incident)
    births = {s.event.get("agent"): s.id for s in seen if s.type == "spawned"}
    for event in seen:
        agent = str(event.event.get("agent") or "")
        if agent not in spawned or event.telling not in tellings[spawned[agent]]:
            continue
        if event.type == "stopped" and _before(event.id, births.get(agent)):
            rows[(spawned[agent], "stopped")].phantoms.append(event)
            continue
        mine = by_agent.get(agent, [])
        at = bisect.bisect_right([i.start for i in mine], event.at) - 1
        if at < 0:
            continue  # the agent's first turn, before any incident
        _place(mine[at], event)
    for mine in by_agent.values():
        for at, incident in enumerate(mine):
            for event in [] if incident.wrong else incident.others:
                same = [i for i in mine[:at] if i.told == event.telling]
                rows[same[-1].row if same else (incident.program, event.telling)].strays.append(event)
    return rows


def _place(incident: Incident, event: Seen) -> None:
    if event.telling == incident.told:
        incident.events.append(event)
    elif event.telling == incident.follows and not incident.followed:
        incident.followed += 1
    else:
        incident.others.append(event)


def _before(entry: str, other: str | None) -> bool:
    if other is None:
        return True
    ms, seq = (int(x) for x in entry.split("-"))
    other_ms, other_seq = (int(x) for x in other.split("-"))
    return (ms, seq) < (other_ms, other_seq)
