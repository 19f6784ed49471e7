"""The conflicts at risk: pairs of live agents (or an agent and its target branch) whose work will not merge
cleanly, as the worker's conflict check recorded it. Each `conflict_risk` event it publishes leaves marks on
the bus: a hash per pair, a field per file told, cleared as the overlap goes; a pair is at risk while its
marks hold files and its agents are live. `read_at_risk` reads the marks (never git); the rest is pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import redis

from bus.errors import BusError
from bus.stores.agent_store import AgentStore
from bus.wire.keys import Keys

MAX_PAIRS = 100
MAX_FILES = 20
ENDED = frozenset({"stopped"})  # as worker.conflicts.check: a stopped agent's work is checked no more
BRANCH = "branch:"  # how the marks name a branch side (agent ids and branch names hold no ':')


@dataclass(frozen=True)
class AtRisk:
    agent: str
    other: str  # the other agent, or the branch
    against: str  # "agent" | "branch"
    files: tuple[str, ...]  # sorted, at most MAX_FILES
    more: int  # files past MAX_FILES


def sides_of(pair: str) -> tuple[str, str] | None:
    """The two sides a marks key names after its prefix (`ann:bob`, `ann:branch:main`, `branch:main:zed`):
    agent ids, or `branch:<name>`; None for what is neither. Pure."""
    parts = pair.split(":")
    if len(parts) == 2:
        sides = (parts[0], parts[1])
    elif len(parts) == 3 and parts[1] == BRANCH[:-1]:
        sides = (parts[0], BRANCH + parts[2])
    elif len(parts) == 3 and parts[0] == BRANCH[:-1]:
        sides = (parts[2], BRANCH + parts[1])
    else:
        return None
    return sides if all(sides) else None


def at_risk(marks: Mapping[str, Mapping[str, str]], states: Mapping[str, str | None]) -> tuple[AtRisk, ...]:
    """The pairs of `marks` (by what their key names after its prefix: `sides_of`) with files marked whose
    agents are known and not stopped (`states`: None for an agent gone from the bus), in name order. Pure."""
    out = []
    for pair, marked in marks.items():
        sides = sides_of(pair)
        if sides is None or not marked:
            continue
        agent, other = sides
        against = "branch" if other.startswith(BRANCH) else "agent"
        if any(states.get(a) is None or states.get(a) in ENDED for a in _agents(agent, other)):
            continue
        files = sorted(marked)
        out.append(
            AtRisk(
                agent,
                other.removeprefix(BRANCH),
                against,
                tuple(files[:MAX_FILES]),
                len(files) - len(files[:MAX_FILES]),
            )
        )
    return tuple(sorted(out, key=lambda r: (r.against, r.agent, r.other)))


def read_at_risk(client: redis.Redis, keys: Keys) -> tuple[AtRisk, ...]:
    """The pairs at risk now: every pair's marks (the first MAX_PAIRS found), and its agents' states."""
    prefix = keys.conflict_marks("", "")[:-1]  # the key of a pair, without the pair: Keys spells the name
    found = sorted(client.scan_iter(match=_glob_escaped(prefix) + "*", count=1000))[:MAX_PAIRS]
    pipe = client.pipeline()
    for key in found:
        pipe.hgetall(key)
    marks = {str(key)[len(prefix) :]: dict(fields) for key, fields in zip(found, pipe.execute(), strict=True)}
    agents = AgentStore(client, keys)
    names = {a for pair in marks if (sides := sides_of(pair)) for a in _agents(*sides)}
    return at_risk(marks, {name: _state(agents, name) for name in sorted(names)})


def _agents(*sides: str) -> Iterable[str]:
    return [side for side in sides if not side.startswith(BRANCH)]


def _state(agents: AgentStore, agent_id: str) -> str | None:
    try:
        found = agents.find(agent_id)
    except BusError:  # an id no agent may have, or a record garbled on the bus: not a live agent
        return None
    return found.state if found is not None else None


def _glob_escaped(text: str) -> str:
    """`text` matched as it is by SCAN's MATCH (a namespace may hold `*`, `?`, `[`)."""
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)
