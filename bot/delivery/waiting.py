"""Waiting in tasks that can be cancelled, and for them. `wait_set` is not `asyncio.wait_for`: on Python
3.11 that returns normally when the cancel arrives as the event is set (python/cpython#86296), and a loop
around it then never ends: `ib bot` hung on SIGTERM so, its sender waiting on an empty outbox forever.
`cancel_and_wait` names in the log a task that still has not ended some time after its cancel."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)
STOP_GRACE_S = 10.0  # seconds the bot's tasks have to end once cancelled before the log names the late ones


async def wait_set(event: asyncio.Event, seconds: float | None) -> bool:
    """Until `event` is set (True) or `seconds` pass (False; None: no deadline). A cancel is raised."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def cancel_and_wait(tasks: list[asyncio.Task[Any]], grace: float = STOP_GRACE_S) -> None:
    """Cancel the tasks and wait for them; one still running `grace` seconds later is named in the log with
    where it waits (a task that let its cancel go kept `ib bot` from ever ending once), then waited for."""
    for task in tasks:
        task.cancel()
    _done, late = await asyncio.wait(tasks, timeout=grace)
    for task in late:
        log.warning(
            "the %s task has not ended %g s after the stop; it waits at:\n%s",
            task.get_name(),
            grace,
            awaiting(task),
        )
    await asyncio.gather(*tasks, return_exceptions=True)


def awaiting(task: asyncio.Task[Any]) -> str:
    """Where a suspended task waits: its chain of awaits, outermost first, a `file:line in function` each."""
    lines = []
    step: Any = task.get_coro()
    while step is not None:
        frame = getattr(step, "cr_frame", None) or getattr(step, "gi_frame", None)
        if frame is None:
            break
        lines.append(f"  {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        step = getattr(step, "cr_await", None) or getattr(step, "gi_yieldfrom", None)
    return "\n".join(lines)
