"""Which way another agent's message reaches an agent: into its Claude Code inbox, or typed into its pane.

A Claude Code agent (>= 2.1.224) has an inbox its SessionStart hook records (bus.inbox.session_inbox). A
message from another agent (a manager's `ib send`, a worker's note to its manager) goes there: Claude
Code takes it between tool calls and holds it while a dialog is open, so it is never typed into one.
Without an inbox (another program, an older Claude Code, `CLAUDE_CODE_HARBOR_KITE=0`, a stale one), and
in bypassPermissions (Claude Code holds a message of a session that names no permission mode behind a
dialog), it is typed as the person's messages always are: what the person sends is the user's voice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from bus.inbox import push_store
from bus.inbox.push_store import AgentInbox, SessionInbox
from bus.inbox.session_inbox import this_host
from bus.inbox.session_socket import StaleSession, deliver, stale
from bus.stores.agent_store import Agent
from worker.runtime import Runtime

log = logging.getLogger(__name__)

NO_INBOX = "no inbox recorded: Claude Code older than 2.1.224, or CLAUDE_CODE_HARBOR_KITE=0"
BYPASS = (
    "it runs in bypassPermissions, where Claude Code holds a message from another session behind a "
    "dialog until a person allows it"
)


@dataclass(frozen=True)
class MessagePath:
    """Where other agents' messages to one agent go, and why."""

    way: Literal["inbox", "pane"]
    why: str
    inbox: SessionInbox | None = None

    def line(self) -> str:
        """What `ib info` says about it."""
        if self.way == "inbox" and self.inbox is not None:
            return (
                f"from agents through its inbox {self.inbox.socket} (between tool calls; held while a "
                "dialog is open); from you typed into its pane"
            )
        return f"typed into its pane ({self.why})"


def message_path(cli: str, mode: str, record: AgentInbox) -> MessagePath:
    """The path for an agent running `cli` in permission mode `mode` with this inbox record. Pure."""
    if cli != "claude":
        return MessagePath("pane", f"{cli} has no inbox")
    if mode == "bypassPermissions":
        return MessagePath("pane", BYPASS)
    if record.inbox is None:
        return MessagePath("pane", record.dropped or NO_INBOX)
    return MessagePath("inbox", "", record.inbox)


def path_of(rt: Runtime, agent: Agent) -> MessagePath:
    """The agent's message path now. An inbox of this machine found stale (its session exited or was
    killed) is dropped first, with the line `ib info` shows."""
    record = push_store.agent_inbox(rt.client, rt.keys, agent.id)
    inbox = record.inbox
    if inbox is not None and inbox.host == this_host():
        why = stale(inbox.socket, inbox.pid)
        if why:
            record = AgentInbox(None, _drop(rt, agent.id, inbox, why))
    return message_path(agent.cli, agent.permission_mode, record)


def post(rt: Runtime, agent: Agent, text: str) -> bool:
    """Write `text` into the agent's inbox; False when it has none that takes it (then it is typed)."""
    path = path_of(rt, agent)
    if path.inbox is None:
        return False
    try:
        deliver(path.inbox.socket, path.inbox.token, text)
    except StaleSession as e:
        _drop(rt, agent.id, path.inbox, str(e))
        return False
    except (OSError, ValueError) as e:  # a timeout, a line over the inbox's limit: typed instead
        log.warning("agent inbox: writing to %s's inbox failed (%s); typed instead", agent.id, e)
        return False
    log.info("agent inbox: a message into %s's inbox (pid %s)", agent.id, path.inbox.pid)
    return True


def _drop(rt: Runtime, agent_id: str, inbox: SessionInbox, why: str) -> str:
    line = push_store.drop_agent_inbox(rt.client, rt.keys, agent_id, inbox.pid, why)
    log.info("agent inbox: %s %s", agent_id, line)  # `ib info` shows the line; a warning would say it twice
    return line
