"""What is pushed into the person's sessions: the recorded inboxes, the pending events, who got which.

The bus stays the source of truth: an event the person must act on is *pending* here until it is
acknowledged (`ib ack`, acting on its agent, or `ib listen` printing it); each session gets each
pending event at most once (`pushed:<session>`), so a new session gets what is still pending and an old
one never gets a thing twice. Sessions are recorded by the primary session's hook (bus.inbox.session_inbox).
An agent's own inbox is read here too (`agent_inbox`): other agents' messages go there, never events.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bus.wire.keys import Keys

if TYPE_CHECKING:
    import redis

DROPPED_KEPT = 20  # lines of dropped sessions `ib ps` can show
PUSHED_TTL = 7 * 24 * 3600
# events kept pending for a session that has not come: past this the oldest go (they stay on the stream
# for `ib events`); a person who never opens a session would otherwise grow the set without end
PENDING_KEPT = 1_000


@dataclass(frozen=True)
class SessionInbox:
    session_id: str
    socket: str
    token: str
    pid: int
    cwd: str
    root: str
    host: str
    mode: str = ""  # the session's permission mode as its hook last saw it


@dataclass(frozen=True)
class AgentInbox:
    """An agent's inbox record: the inbox, or the line saying why it was dropped, or neither."""

    inbox: SessionInbox | None
    dropped: str = ""


@dataclass(frozen=True)
class Pending:
    event_id: str
    agent: str
    line: str


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _fields(raw: Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    return {_text(k): _text(v) for k, v in raw.items()}


def sessions(client: redis.Redis, keys: Keys) -> list[SessionInbox]:
    """Every recorded session (records that expired leave the index here)."""
    found = []
    for raw_id in sorted(client.smembers(keys.session_inboxes)):
        session_id = _text(raw_id)
        inbox = _inbox(session_id, _fields(client.hgetall(keys.session_inbox(session_id))))
        if inbox is None:
            client.srem(keys.session_inboxes, session_id)
            continue
        found.append(inbox)
    return found


def _inbox(session_id: str, fields: Mapping[str, str]) -> SessionInbox | None:
    if not fields.get("socket"):
        return None
    pid = fields.get("pid", "0")
    return SessionInbox(
        session_id,
        fields["socket"],
        fields.get("token", ""),
        int(pid) if pid.isdigit() else 0,
        fields.get("cwd", ""),
        fields.get("root", ""),
        fields.get("host", ""),
        fields.get("mode", ""),
    )


def agent_inbox(client: redis.Redis, keys: Keys, agent_id: str) -> AgentInbox:
    """The agent's recorded inbox (its session id is the agent's id), or why it was dropped."""
    fields = _fields(client.hgetall(keys.agent_inbox(agent_id)))
    return AgentInbox(_inbox(agent_id, fields), fields.get("dropped", ""))


def drop_agent_inbox(client: redis.Redis, keys: Keys, agent_id: str, pid: int, reason: str) -> str:
    """Forget an agent's inbox that can no longer be reached (its messages are typed until its next
    session records a new one); returns the line `ib info` shows about it."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    line = f"{stamp} dropped its inbox (pid {pid}): {reason}"
    pipe = client.pipeline(transaction=True)
    pipe.delete(keys.agent_inbox(agent_id))
    pipe.hset(keys.agent_inbox(agent_id), "dropped", line)
    pipe.expire(keys.agent_inbox(agent_id), PUSHED_TTL)
    pipe.execute()
    return line


def drop(client: redis.Redis, keys: Keys, session: SessionInbox, reason: str) -> str:
    """Forget a session that can no longer be reached; returns the line `ib ps` shows about it."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    line = f"{stamp} dropped session {session.session_id} (pid {session.pid}, {session.cwd}): {reason}"
    pipe = client.pipeline(transaction=True)
    pipe.delete(keys.session_inbox(session.session_id), keys.pushed(session.session_id))
    pipe.srem(keys.session_inboxes, session.session_id)
    pipe.lpush(keys.push_dropped, line)
    pipe.ltrim(keys.push_dropped, 0, DROPPED_KEPT - 1)
    pipe.execute()
    return line


def dropped(client: redis.Redis, keys: Keys) -> list[str]:
    return [_text(line) for line in client.lrange(keys.push_dropped, 0, -1)]


def queue(client: redis.Redis, keys: Keys, items: Iterable[Pending]) -> None:
    """Make events pending (again: idempotent, so a redelivered stream entry changes nothing); past
    PENDING_KEPT pending events the oldest are let go."""
    pipe = client.pipeline(transaction=True)
    for item in items:
        pipe.zadd(keys.push_pending, {item.event_id: _stream_ms(item.event_id)}, nx=True)
        pipe.hsetnx(keys.push_lines, item.event_id, f"{item.agent}\n{item.line}")
        if item.agent:
            pipe.sadd(keys.push_agent(item.agent), item.event_id)
            pipe.expire(keys.push_agent(item.agent), PUSHED_TTL)
    pipe.zcard(keys.push_pending)
    over = int(pipe.execute()[-1]) - PENDING_KEPT
    if over > 0:
        acknowledge(client, keys, [_text(i) for i in client.zrange(keys.push_pending, 0, over - 1)])


def pending(client: redis.Redis, keys: Keys) -> list[Pending]:
    """The pending events, oldest first."""
    ids = [_text(i) for i in client.zrange(keys.push_pending, 0, -1)]
    if not ids:
        return []
    lines = client.hmget(keys.push_lines, ids)
    out = []
    for event_id, raw in zip(ids, lines, strict=True):
        agent, _, line = _text(raw or "").partition("\n")
        out.append(Pending(event_id, agent, line or f"event {event_id}"))
    return out


def pushed(client: redis.Redis, keys: Keys, session_id: str) -> set[str]:
    return {_text(i) for i in client.smembers(keys.pushed(session_id))}


def mark_pushed(client: redis.Redis, keys: Keys, session_id: str, ids: Iterable[str]) -> None:
    """Record before writing to the socket: a crash between the two may cost that session the message
    (it stays pending for the next session and `ib listen`), never give it twice."""
    ids = list(ids)
    if ids:
        pipe = client.pipeline(transaction=True)
        pipe.sadd(keys.pushed(session_id), *ids)
        pipe.expire(keys.pushed(session_id), PUSHED_TTL)
        pipe.execute()


def unmark_pushed(client: redis.Redis, keys: Keys, session_id: str, ids: Iterable[str]) -> None:
    """The write failed before the session read it: those events are still to push into it."""
    ids = list(ids)
    if ids:
        client.srem(keys.pushed(session_id), *ids)


def acknowledge(client: redis.Redis, keys: Keys, ids: Iterable[str]) -> int:
    """No longer pending; returns how many were. One round trip (`ib listen` calls it after each print);
    an id left in its agent's set is harmless and goes with the set."""
    ids = list(ids)
    if not ids:
        return 0
    pipe = client.pipeline(transaction=True)
    pipe.zrem(keys.push_pending, *ids)
    pipe.hdel(keys.push_lines, *ids)
    return int(pipe.execute()[0])


def acknowledge_agent(client: redis.Redis, keys: Keys, agent: str) -> int:
    """The person acted on `agent` (approved, answered, looked, diffed, merged…): its events are seen."""
    ids = [_text(i) for i in client.smembers(keys.push_agent(agent))]
    done = acknowledge(client, keys, ids)
    client.delete(keys.push_agent(agent))
    return done


def _stream_ms(event_id: str) -> float:
    ms = event_id.partition("-")[0]
    return float(ms) if ms.isdigit() else time.time() * 1000
