"""At an account's reset, the agents its usage limit parked go on by themselves: each of this worker's
parked agents that is still `limited` is sent RESUME_TEXT (its turn continues where the limit cut it), a
`resumed` event tells the person, and the limit is lifted once nobody is parked on it.

Runs on every worker tick from what the bus holds (bus.stores.limit_store), so a worker restarted while
agents are parked resumes them at the reset all the same.
"""

from __future__ import annotations

import logging
import time

from bus.costs.usage_limits import Limit, limit_line, until_text
from bus.poll import wait_until
from bus.stores.agent_store import Agent
from bus.stores.limit_store import LimitStore
from worker.agents import talk
from worker.errors import SessionGone, WorkerError
from worker.runtime import Runtime

log = logging.getLogger(__name__)

RESUME_TEXT = "continue"
LIMIT_GONE_WAIT = 5.0  # seconds the limit the agent was parked on may take to leave its screen


def resume_due(rt: Runtime, now: float | None = None) -> tuple[list[str], list[str]]:
    """Resume the agents of every limit whose reset has come: the ids of the agents resumed, and the
    accounts whose limit was lifted (the /auto claims it held back may go on)."""
    store = LimitStore(rt.client, rt.keys)
    moment = time.time() if now is None else now
    resumed: list[str] = []
    lifted: list[str] = []
    for limit in store.all():
        if not limit.due(moment):
            continue
        for agent_id in limit.agents:
            if _resume(rt, store, limit, agent_id, moment):
                resumed.append(agent_id)
        if store.lift(limit.account, limit.reset_at):
            log.info("account %s: its %s limit is lifted", limit.account, limit.window)
            lifted.append(limit.account)
    return resumed, lifted


def _resume(rt: Runtime, store: LimitStore, limit: Limit, agent_id: str, now: float) -> bool:
    agent = rt.agents.find(agent_id)
    if agent is not None and agent.worker != rt.worker_id:
        return False  # its own worker resumes it
    if agent is None or agent.state != "limited":
        store.unpark(limit.account, agent_id)  # gone, or someone went on with it already
        return False
    try:
        talk.send(rt, agent.id, RESUME_TEXT)
    except WorkerError as e:  # a dialog on screen, or the session gone: the person hears why
        log.warning("agent %s: not resumed at the reset of account %s: %s", agent.id, limit.account, e)
        store.unpark(limit.account, agent_id)
        rt.publish(
            "error",
            f"{agent.id} could not be resumed after its usage limit: {e}",
            sender=agent.id,
            data={"kind": "limit_resume", "error": str(e), "account": limit.account},
            **agent.event_fields(),
        )
        return False
    store.unpark(limit.account, agent_id)
    late = max(0.0, now - limit.reset_at)
    log.info("agent %s: resumed at the reset of account %s (%.1f s after it)", agent.id, limit.account, late)
    rt.publish(
        "resumed",
        f"{agent.id} resumed: the {limit.window} limit reset at {until_text(limit.reset_at, now)}",
        sender=agent.id,
        data={
            "account": limit.account,
            "window": limit.window,
            "reset_at": limit.reset_at,
            "limited_since": limit.since,
            "late_by": round(late, 3),
            "sent": RESUME_TEXT,
        },
        **agent.event_fields(),
    )
    _went_on(rt, agent)
    return True


def _went_on(rt: Runtime, agent: Agent) -> None:
    """The agent works again: the limit line it was parked on is forgotten once it leaves the screen, or
    LIMIT_GONE_WAIT after the resume if it stays (until then the watcher would park it on the dialog the
    program has not redrawn yet), and the pane watcher tells and parks on whatever limit the screen shows
    after that. Gemini CLI's "Keep trying" into a quota still used up draws the same dialog again at once
    (no frame without it), and the agent stayed `limited`, parked on nothing, never resumed again."""
    if not agent.limit_line:
        return

    def gone() -> bool:
        try:
            return limit_line(rt.tmux.capture(agent.session)) != agent.limit_line
        except SessionGone:
            return True

    if not wait_until(gone, LIMIT_GONE_WAIT):
        log.info("agent %s: its limit still shows after the resume; parked again if it holds", agent.id)
    rt.agents.update(agent.id, limit_line="")
    # the turn may have gone on and ended meanwhile (its hook said `complete`): that state stands
    rt.agents.set_state_if(agent.id, "limited", "running")
