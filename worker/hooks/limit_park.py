"""An agent's turn ended on its plan's usage limit (Claude Code's StopFailure with `rate_limit`): the
account's limit and its reset go on the bus, the agent is parked on it, and the `limited` event says until
when. The worker resumes the agent at the reset (worker.service.limit_resume).

Claude Code 2.1.332 hands its hooks no reset time (the header stays inside it): the reset is read from the
error's text ("… · resets 3pm"), else the account's limit already on the bus, else it is unknown and the
agent is tried again after a while (bus.costs.usage_limits).
"""

from __future__ import annotations

import time
from datetime import datetime

from bus.costs.usage_limits import (
    DEFAULT_ACCOUNT,
    Reset,
    park_commands,
    read_reset,
    settle,
    until_text,
    window_of,
)
from bus.wire.agent_update import update_if_whole
from bus.wire.keys import Keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from bus.wire.resp import Connection


def park(
    conn: Connection, keys: Keys, agent_id: str, account: str, data: dict[str, object]
) -> dict[str, object]:
    """Record the limit and park the agent; the event's data with the reset added."""
    now = time.time()
    text = str(data.get("last_message") or "")
    window = window_of(data.get("claim"), text)
    reset = read_reset(data.get("reset_header"), text, window, datetime.now().astimezone())
    if reset.source == "none":
        reset = _known_reset(conn, keys, account, window, now) or reset
    conn.pipeline(list(park_commands(keys, account or DEFAULT_ACCOUNT, agent_id, reset, window, now)))
    conn.call(*update_if_whole(keys.agent(agent_id), {"limited_until": f"{reset.at:.3f}"}))
    return {
        **data,
        "account": account or DEFAULT_ACCOUNT,
        "window": window,
        "reset_at": round(reset.at, 3),
        "until": until_text(reset.at, now),
        "reset_source": reset.source,
        "note": reset.note,
    }


def _known_reset(conn: Connection, keys: Keys, account: str, window: str, now: float) -> Reset | None:
    """The reset of the account's limit already on the bus (another agent's report), when it is ahead."""
    stored = conn.call("HGET", keys.limit(account or DEFAULT_ACCOUNT), "reset_at")
    try:
        at = float(stored.decode()) if isinstance(stored, bytes) else None
    except ValueError:
        return None
    return settle(at, "account", window, now) if at is not None and at > now else None


def message(agent_id: str, data: dict[str, object]) -> str:
    """The `limited` event's line: "agent-1 is limited until 15:00 (five_hour)", and the note if any."""
    note = str(data.get("note") or "")
    line = f"{agent_id} is limited until {data.get('until')} ({data.get('window')})"
    return f"{line}; {note}" if note else line
