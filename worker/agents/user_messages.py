"""Messages for the person's primary session: `ib send user TEXT` queues one (its kind from the seed's
prefixes), `ib acknowledge m-...` / `--all` removes them. They wait in Redis (`bus.inbox.messages`) and show
in the CLAUDE.md status block until acknowledged."""

from __future__ import annotations

from bus.errors import InvalidInput
from bus.inbox.messages import Message, MessageStore, is_message_id
from worker.message_kinds import classify_message
from worker.runtime import Runtime

USER_TARGETS = ("user", "user-claude")
"""What `ib send` takes for the person's primary session (`user-claude` is the seed's spelling)."""

__all__ = ["USER_TARGETS", "acknowledge", "acknowledge_all", "is_message_id", "send_to_user", "store"]


def store(rt: Runtime) -> MessageStore:
    return MessageStore(rt.client, rt.keys, rt.settings.events_maxlen, rt.settings.write_wait)


def send_to_user(rt: Runtime, text: str, sender: str | None = None) -> Message:
    """Queue `text` for the person: `?`/`QUESTION:` a question, `!`/`ALERT:` an alert, `COMPLETE:`/`DONE:`
    a completion, anything else a status update. A `message` event (data: kind, message_id) announces it."""
    kind, content = classify_message(text)
    content = content.strip()
    if not content:
        raise InvalidInput('nothing to send: give the text, e.g. ib send user "? CSS variables or a theme?"')
    limit = rt.settings.max_message_bytes
    if len(content.encode("utf-8", "surrogatepass")) > limit:
        raise InvalidInput(f"the message is over {limit} bytes (IB_MAX_MESSAGE_BYTES); write it to a file")
    who = sender or "unknown"
    agent = rt.agents.find(who) if sender else None
    return store(rt).add(who, kind, content, agent.project if agent else "")


def acknowledge(rt: Runtime, message_id: str, by: str | None = None) -> Message:
    return store(rt).acknowledge(message_id, by or "user")


def acknowledge_all(rt: Runtime, by: str | None = None) -> list[str]:
    return store(rt).acknowledge_all(by or "user")
