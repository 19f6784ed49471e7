"""Which way another agent's message reaches an agent (pure), and what records an agent's inbox."""

from __future__ import annotations

import pytest

from bus.inbox.push_store import AgentInbox, SessionInbox
from bus.inbox.session_inbox import agent_record_commands
from bus.wire.keys import Keys
from worker.agents.agent_inbox import BYPASS, NO_INBOX, message_path

INBOX = SessionInbox("boss", "/tmp/cc-socks/41.sock", "t", 41, "/r", "/r", "host")


@pytest.mark.parametrize(
    ("cli", "mode", "record", "way", "why"),
    [
        ("claude", "acceptEdits", AgentInbox(INBOX), "inbox", ""),
        ("claude", "", AgentInbox(INBOX), "inbox", ""),  # an agent made before modes were recorded
        ("claude", "bypassPermissions", AgentInbox(INBOX), "pane", BYPASS),
        ("claude", "default", AgentInbox(None), "pane", NO_INBOX),
        (
            "claude",
            "default",
            AgentInbox(None, "… dropped its inbox (pid 41): gone"),
            "pane",
            "… dropped its inbox",
        ),
        ("codex", "default", AgentInbox(INBOX), "pane", "codex has no inbox"),
        ("gemini", "default", AgentInbox(None), "pane", "gemini has no inbox"),
    ],
    ids=["claude-inbox", "no-mode-recorded", "bypass", "none", "dropped", "codex", "gemini"],
)
def test_the_path_of_another_agents_message(
    cli: str, mode: str, record: AgentInbox, way: str, why: str
) -> None:
    path = message_path(cli, mode, record)
    assert path.way == way and path.why.startswith(why)
    line = path.line()
    if way == "inbox":
        assert (
            line.startswith("from agents through its inbox /tmp/cc-socks/41.sock")
            and "from you typed" in line
        )
    else:
        assert line == f"typed into its pane ({path.why})"


def test_an_agents_inbox_is_never_in_the_persons_sessions() -> None:
    keys = Keys("ns")
    commands = agent_record_commands(keys, "kid", ("/tmp/cc-socks/7.sock", "tok"), "/w", "/r")
    assert commands[0] == ("DEL", keys.agent_inbox("kid"))  # a new session replaces the old record
    assert all(keys.session_inboxes not in c for c in commands)
    [hset] = [c for c in commands if c[0] == "HSET"]
    fields = dict(zip(hset[2::2], hset[3::2], strict=True))
    assert (fields["socket"], fields["token"], fields["pid"]) == ("/tmp/cc-socks/7.sock", "tok", "7")
