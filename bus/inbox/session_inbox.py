"""A Claude Code session's inbox, as its hooks see it: what to record, on the hooks' path.

Claude Code >= 2.1.224 gives a session a unix socket (`CLAUDE_CODE_MESSAGING_SOCKET`, named
`<pid>.sock`) and a token (`CLAUDE_CODE_MESSAGING_TOKEN`) in its hooks' environment. The person's
session's hook records them here so the worker can push events into that session, and an agent's
SessionStart hook records the agent's so other agents' messages reach it there (bus.inbox.push_store reads
both records; bus.inbox.session_socket writes to the socket). Stdlib only: hooks import it.
"""

from __future__ import annotations

import os
import socket
import time

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from bus.wire.keys import Keys

SOCKET_VAR = "CLAUDE_CODE_MESSAGING_SOCKET"
TOKEN_VAR = "CLAUDE_CODE_MESSAGING_TOKEN"
RECORD_TTL = 7 * 24 * 3600  # a session its hooks no longer refresh is forgotten after a week


def inbox_of(env: Mapping[str, str]) -> tuple[str, str] | None:
    """(socket path, token) of the session whose hook runs with `env`; None without an inbox (an older
    Claude Code, `CLAUDE_CODE_HARBOR_KITE=0`, another program)."""
    path = env.get(SOCKET_VAR, "")
    if not path or not os.path.isabs(path):
        return None
    return path, env.get(TOKEN_VAR, "")


def session_pid(path: str) -> int:
    """The session's pid from its socket's name (`/tmp/cc-socks/<pid>.sock`); 0 when the name says none."""
    stem = os.path.basename(path).partition(".")[0]
    return int(stem) if stem.isdigit() else 0


def this_host() -> str:
    return socket.gethostname()


def _hset(key: str, inbox: tuple[str, str], cwd: str, root: str, mode: str) -> list[tuple[str, ...]]:
    """HSET and EXPIRE of one inbox record. Pure but for the host name and the clock."""
    path, token = inbox
    fields = {
        "socket": path,
        "token": token,
        "pid": str(session_pid(path)),
        "cwd": cwd,
        "root": root,
        "host": this_host(),
        "mode": mode,  # the session's permission mode as its hook saw it ("" when the payload says none)
        "seen_at": str(int(time.time())),
    }
    return [
        ("HSET", key, *(part for item in fields.items() for part in item)),
        ("EXPIRE", key, str(RECORD_TTL)),
    ]


def record_commands(
    keys: Keys, session_id: str, inbox: tuple[str, str], cwd: str, root: str, mode: str = ""
) -> list[tuple[str, ...]]:
    """The Redis commands that record (or refresh) one person's session's inbox, for one pipeline with
    the hook's other reads."""
    return [
        *_hset(keys.session_inbox(session_id), inbox, cwd, root, mode),
        ("SADD", keys.session_inboxes, session_id),
    ]


def agent_record_commands(
    keys: Keys, agent_id: str, inbox: tuple[str, str], cwd: str, root: str
) -> list[tuple[str, ...]]:
    """The Redis commands that record an agent's inbox (never in the person's sessions' index: nothing
    meant for the person is pushed into an agent). A new session of the agent (`ib resume`) replaces it."""
    key = keys.agent_inbox(agent_id)
    return [("DEL", key), *_hset(key, inbox, cwd, root, "")]
