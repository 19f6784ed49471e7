"""The pane as the fallback for usage limits: a limit on screen that no hook reported (hooks missing or
broken) parks the agent as the StopFailure hook would (worker.hooks.limit_park), with the reset read from
the screen's limit line. One line parks an agent once while it shows: the text stays on screen after the
resumed turn.
A `limited` event the hook had to spool while Redis was away parks its agent when the worker reads it.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from bus.costs.usage_limits import (
    DEFAULT_ACCOUNT,
    limit_line,
    limit_text,
    read_reset,
    settle,
    until_text,
    window_of,
)
from bus.events.event_model import Event
from bus.stores.agent_store import Agent
from bus.stores.limit_store import LimitStore
from worker.programs.registry import program_of
from worker.runtime import Runtime

log = logging.getLogger(__name__)


def park_from_pane(rt: Runtime, agent: Agent, screen: str) -> bool:
    """Park `agent` on the limit its screen shows; False when there is none new to park on. The reset and
    the window are the API's when the program's own log recorded them (Codex's rollout), else the
    screen's text says them."""
    line = limit_line(screen)
    if not line or agent.state == "limited" or line == agent.limit_line:
        return False
    now = time.time()
    account = agent.account or DEFAULT_ACCOUNT
    store = LimitStore(rt.client, rt.keys)
    recorded = program_of(agent).recorded_limit(agent.transcript_path)
    window = recorded.window if recorded else window_of(None, line)
    header = recorded.reset_at if recorded else None
    reset = read_reset(header, limit_text(screen), window, datetime.now().astimezone())
    known = store.is_limited(account, now) if reset.source == "none" else None
    if known is not None:
        reset = settle(known.reset_at, "account", window, now)
    store.park(account, agent.id, reset, window, now)
    rt.agents.update(agent.id, limit_line=line, limited_until=reset.at)
    previous = rt.agents.set_state(agent.id, "limited")
    until = until_text(reset.at, now)
    log.info("agent %s: limited until %s (%s), seen on its pane", agent.id, until, window)
    message = f"{agent.id} is limited until {until} ({window})" + (f"; {reset.note}" if reset.note else "")
    rt.publish(
        "limited",
        message,
        sender=agent.id,
        data={
            "kind": "rate_limit",
            "account": account,
            "window": window,
            "reset_at": round(reset.at, 3),
            "until": until,
            "reset_source": reset.source,
            "note": reset.note,
            "last_message": line,
            "from_state": previous or agent.state,
            "seen": "pane",
        },
        **agent.event_fields(),
    )
    return True


def forget_gone_line(rt: Runtime, agent: Agent, screen: str) -> None:
    """Forget the limit line the agent was parked on once its screen no longer shows it: the same line
    drawn again later is a new limit (Gemini CLI's dialog reads the same every time; a line left in the
    scrollback after the resumed turn still shows, and parks nobody twice)."""
    if agent.limit_line and limit_line(screen) != agent.limit_line:
        rt.agents.update(agent.id, limit_line="")


def park_spooled(rt: Runtime, event: Event) -> bool:
    """A `limited` event the hook could only spool (Redis was away, so nothing was parked, and the event
    has no `reset_at`): park its agent now, from the error's text, if it is this worker's and nothing
    newer was recorded of it since; True when parked."""
    if event.type != "limited" or not event.agent or "reset_at" in event.data:
        return False
    agent = rt.agents.find(event.agent)
    if agent is None or agent.worker != rt.worker_id or agent.state in ("limited", "stopped"):
        return False
    if agent.state_at > _epoch(event.ts) + 1:  # it went on (or ended) after the limit: nothing to park
        return False
    now = time.time()
    account = agent.account or DEFAULT_ACCOUNT
    text = str(event.data.get("last_message") or "")
    window = window_of(event.data.get("claim"), text)
    reset = read_reset(event.data.get("reset_header"), text, window, datetime.now().astimezone())
    LimitStore(rt.client, rt.keys).park(account, agent.id, reset, window, now)
    rt.agents.update(agent.id, limited_until=reset.at)
    rt.agents.set_state(agent.id, "limited")
    log.info("agent %s: parked until %s from a spooled limited event", agent.id, until_text(reset.at, now))
    return True


def _epoch(ts: str) -> float:
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return 0.0
