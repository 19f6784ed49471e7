"""Waiting for an event with a deadline, in a task that can be cancelled. Not `asyncio.wait_for`: on Python
3.11 it returns normally when the cancel arrives as the event is set (python/cpython#86296), and a loop
around it then never ends: `ib bot` hung on SIGTERM so, its sender waiting on an empty outbox forever."""

from __future__ import annotations

import asyncio


async def wait_set(event: asyncio.Event, seconds: float | None) -> bool:
    """Until `event` is set (True) or `seconds` pass (False; None: no deadline). A cancel is raised."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True
