"""The page's live feed: every entry of the events stream after a cursor, as one server-sent event whose
`id:` is the entry's stream id, so a browser that reconnects (`Last-Event-ID`) resumes exactly there:
nothing lost, nothing twice. After each batch, the board as it is now (no id: it moves no cursor); `board`
is given the id the batch ended at, so the pages that read the same batch share one reading of it.

While the bus cannot be reached the feed says so (`bus: down`), waits for it, then says `up` and sends the
board again. A connection that stays quiet gets a comment every BLOCK_MS, so proxies keep it open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aredis

from bus.connection.reconnect import LOST
from bus.events.envelope import EVENT_FIELD, Envelope, decode
from bus.wire.keys import Keys
from bus.wire.names import stream_id_problem
from web.render import event_html, sse_frame

log = logging.getLogger(__name__)

BLOCK_MS = 15_000
BATCH = 500
DOWN_RETRY_S = 1.0
RETRY_MS = 1000  # how soon a browser reconnects after the connection dropped (the SSE `retry:` field)


@dataclass(frozen=True)
class Wanted:
    """Which events a page shows (its filter form): empty fields mean every one. Pure."""

    project: str = ""
    agent: str = ""
    types: tuple[str, ...] = ()

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Wanted:
        words = query.get("type", "").replace(",", " ").split()
        return cls(
            query.get("project", "").strip()[:128], query.get("agent", "").strip()[:128], tuple(words[:20])
        )

    def __call__(self, event: Envelope) -> bool:
        if self.project and event.get("project") != self.project:
            return False
        if self.agent and event.get("agent") != self.agent:
            return False
        return not self.types or event.get("type") in self.types


def valid_cursor(text: str) -> bool:
    return stream_id_problem(text) is None


def entries(reply: Any) -> tuple[list[tuple[str, dict[str, str]]], str | None]:
    """The entries of an XREAD reply, and the last id it read (deleted entries included, so the cursor
    moves past them). Pure."""
    found: list[tuple[str, dict[str, str]]] = []
    last = None
    for _stream, items in reply or ():
        for entry_id, fields in items:
            last = entry_id
            if fields is not None:
                found.append((entry_id, fields))
    return found, last


async def last_id(client: aredis.Redis, keys: Keys) -> str:
    """The id of the newest entry of the events stream, "0-0" when it is empty."""
    newest = await client.xrevrange(keys.events, count=1)
    return str(newest[0][0]) if newest else "0-0"


async def feed(
    client: aredis.Redis,
    keys: Keys,
    cursor: str,
    board: Callable[[str], Awaitable[str]],
    wanted: Wanted = Wanted(),
) -> AsyncIterator[str]:
    """The frames of one page's stream, from after `cursor`, until the page goes away; the events `wanted`
    does not take are not sent (the cursor moves past them all the same)."""
    yield f"retry: {RETRY_MS}\n\n"
    up = True
    try:
        yield sse_frame(await board(cursor), "board")
    except LOST:
        up = False
        yield sse_frame("down", "bus")
    while True:
        try:
            reply = await client.xread({keys.events: cursor}, count=BATCH, block=BLOCK_MS)
            if not up:
                up = True
                log.info("the bus answers again; the stream goes on after %s", cursor)
                yield sse_frame("up", "bus")
                yield sse_frame(await board(""), "board")
        except LOST as e:
            if up:
                log.warning("the bus cannot be reached (%s); the page is told", e)
                up = False
                yield sse_frame("down", "bus")
            await asyncio.sleep(DOWN_RETRY_S)  # waiting out a stopped bus: nothing can push meanwhile
            continue
        found, last = entries(reply)
        if last is None:
            yield ": quiet\n\n"
            continue
        for entry_id, fields in found:
            event = decode(entry_id, fields.get(EVENT_FIELD))
            if wanted(event):
                yield sse_frame(event_html(event), "log", entry_id)
        cursor = last
        try:
            yield sse_frame(await board(cursor), "board")
        except LOST:
            continue  # the next read finds the bus down and says so
