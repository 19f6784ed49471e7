"""The Starlette app: the page, its event stream, the clicks, the static files; behind the token gate
(web.guard) and with headers that keep the page in its own origin (no frames, no other scripts)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import parse_qsl

import redis
import redis.asyncio as aredis
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from bus.connection.reconnect import LOST
from bus.costs.budgets import Amount
from bus.errors import BusError
from bus.events.envelope import EVENT_FIELD, decode
from bus.events.streams import Entry
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from bus.wire.names import name_problem
from web import actions, board, render
from web.actions import Click
from web.errors import Refused
from web.guard import App, Message, Receive, Scope, Send, TokenGate, own_origin, person_of, post_refusal
from web.people import People
from web.queues import Queues, read_queues
from web.stream import Wanted, feed, last_id, valid_cursor

log = logging.getLogger(__name__)

SHARED_S = 1.0  # how long one reading of the board serves the streams that ended a batch at the same entry
EVENTS_ON_PAGE = 50
EVENTS_READ = 2000  # the newest events a page's filter looks through for its first EVENTS_ON_PAGE
MAX_FORM = 64 * 1024  # a message typed into the send box fits
HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


@dataclass(frozen=True)
class Site:
    """What every route shares: where the bus is, and the token's CSRF field."""

    keys: Keys
    sync: redis.Redis  # blocking: a click waits for the worker's reply
    reader: aredis.Redis
    csrf: str
    events_maxlen: int  # the stores take it; the page only reads
    day_limit: Amount | None = None  # IB_DAY_BUDGET: the day's budget when none is set on the bus


class BoardCache:
    """The board's HTML as read after the events stream's entry `at`: every open page's stream that ended a
    batch at the same entry gets the one reading (20 pages, one read of the bus per event, not 20), for
    SHARED_S at most: what changes on the bus without an event (a dialog answered) shows at the next read."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.at = ""
        self.html = ""
        self.read_at = 0.0
        self.lock = asyncio.Lock()

    async def after(self, at: str) -> str:
        """The board after entry `at` ("": read it now, shared with nobody)."""
        async with self.lock:
            if at and at == self.at and time.monotonic() - self.read_at < SHARED_S:
                return self.html
            shown = await run_in_threadpool(board.read_board, self.site.sync, self.site.keys)
            html = render.board_html(shown, self.site.csrf)
            if at:
                self.at, self.html, self.read_at = at, html, time.monotonic()
            return html


class Endpoints:
    """One method per route; each reads the bus through `site`."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.boards = BoardCache(site)

    async def page(self, request: Request) -> Response:
        person = person_of(request.scope)
        try:
            cursor = await last_id(self.site.reader, self.site.keys)
            shown = await run_in_threadpool(board.read_board, self.site.sync, self.site.keys)
            newest = cast(
                list[Entry], await self.site.reader.xrevrange(self.site.keys.events, count=EVENTS_READ)
            )
        except LOST:
            empty = board.Board((), ())
            return HTMLResponse(render.page(empty, [], "", self.site.csrf, bus_up=False, person=person))
        wanted = Wanted.of(request.query_params)
        events = [decode(i, f.get(EVENT_FIELD)) for i, f in reversed(newest) if f is not None]
        events = [e for e in events if wanted(e)][-EVENTS_ON_PAGE:]
        html = render.page(shown, events, cursor, self.site.csrf, bus_up=True, wanted=wanted, person=person)
        return HTMLResponse(html)

    async def stream(self, request: Request) -> Response:
        given = request.headers.get("last-event-id") or request.query_params.get("after") or ""
        if given and not valid_cursor(given):
            return PlainTextResponse("bad Last-Event-ID: a stream id (ms-seq) is expected\n", status_code=400)
        try:
            cursor = given or await last_id(self.site.reader, self.site.keys)
        except LOST:
            cursor = "$"  # nothing to resume from: the page was drawn without the bus
        wanted = Wanted.of(request.query_params)
        frames = feed(self.site.reader, self.site.keys, cursor, self.boards.after, wanted)
        headers = {"x-accel-buffering": "no"}
        return StreamingResponse(frames, media_type="text/event-stream", headers=headers)

    async def act(self, request: Request) -> Response:
        form = await _checked_form(request, self.site.csrf)
        if isinstance(form, Response):
            return form
        click = Click(form.get("agent", ""), form.get("prompt", ""), form.get("choice", ""))
        try:
            said, ok = await run_in_threadpool(actions.answer, _reach(self.site, request), click), True
        except Refused as e:
            said, ok = str(e), False
        except LOST as e:
            said, ok = f"the bus cannot be reached ({e}); nothing was sent", False
        try:
            shown = await run_in_threadpool(board.read_board, self.site.sync, self.site.keys)
        except LOST:
            return HTMLResponse(render.notice_html(said, ok))
        return HTMLResponse(render.answered_html(said, ok, shown, self.site.csrf))

    async def tasks_page(self, request: Request) -> Response:
        try:
            cursor = await last_id(self.site.reader, self.site.keys)
            queues = await run_in_threadpool(self._queues)
        except (*LOST, BusError) as e:
            return PlainTextResponse(
                f"the bus cannot be reached ({e}); reload when it is back\n", status_code=503
            )
        return HTMLResponse(render.tasks_page(queues, cursor, self.site.csrf))

    async def tasks_live(self, request: Request) -> Response:
        try:
            queues = await run_in_threadpool(self._queues)
        except (*LOST, BusError) as e:
            return HTMLResponse(render.notice_html(f"the bus cannot be reached ({e})", ok=False))
        return HTMLResponse(render.queues_html(queues))

    def _queues(self) -> Queues:
        return read_queues(self.site.sync, self.site.keys, self.site.events_maxlen)

    async def agent_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        agent = await _agent(self.site, name)
        if agent is None:
            return PlainTextResponse(f"no agent {name} on the bus\n", status_code=404)
        try:
            cursor = await last_id(self.site.reader, self.site.keys)
        except LOST:
            cursor = ""
        live = await run_in_threadpool(_live, _reach(self.site, request), agent.id)
        return HTMLResponse(render.agent_page(agent, live, cursor, self.site.csrf))

    async def agent_live(self, request: Request) -> Response:
        name = request.path_params["name"]
        agent = await _agent(self.site, name)
        if agent is None:
            return HTMLResponse(render.notice_html(f"{name} is gone from the bus", ok=False))
        live = await run_in_threadpool(_live, _reach(self.site, request), agent.id)
        return HTMLResponse(render.agent_live(agent, live, self.site.csrf))

    async def review(self, request: Request) -> Response:
        name = request.path_params["name"]
        agent = await _agent(self.site, name)
        if agent is None:
            return PlainTextResponse(f"no agent {name} on the bus\n", status_code=404)
        try:
            change = await run_in_threadpool(actions.diff, _reach(self.site, request), agent.id)
        except Refused as e:
            change = f"({e})"
        return HTMLResponse(render.review_page(agent, change, self.site.csrf))

    async def screenshot(self, request: Request) -> Response:
        name = request.path_params["name"]
        agent = await _agent(self.site, name)
        if agent is None:
            return PlainTextResponse(f"no agent {name} on the bus\n", status_code=404)
        try:
            png = await run_in_threadpool(actions.screenshot, _reach(self.site, request), agent.id)
        except Refused as e:
            return PlainTextResponse(f"{e}\n", status_code=409)
        return Response(png, media_type="image/png")

    async def approve(self, request: Request) -> Response:
        form = await _checked_form(request, self.site.csrf)
        if isinstance(form, Response):
            return form
        return await _notice(actions.approve_change, _reach(self.site, request), request.path_params["name"])

    async def _merge(self, reach: actions.Reach, name: str) -> Response:
        if name_problem("agent", name):
            return HTMLResponse(render.notice_html("no such agent; nothing was sent", False))
        return await _notice(actions.merge_now, reach, name)

    async def _review(self, reach: actions.Reach, name: str, action: str, form: dict[str, str]) -> Response:
        if action == "comment":
            where = (form.get("path", ""), form.get("lines", ""), form.get("text", ""))
            return await _notice(actions.add_comment, reach, name, *where)
        return await _notice(actions.request_changes, reach, name)

    async def _lift(self, reach: actions.Reach, name: str, how: str) -> Response:
        day_limit = self.site.day_limit
        return await _notice(actions.lift_pause, reach, name, how, day_limit, nothing="nothing was changed")

    async def answer(self, request: Request) -> Response:
        form = await _checked_form(request, self.site.csrf)
        if isinstance(form, Response):
            return form
        asked, text = form.get("question", ""), form.get("text", "")
        return await _notice(actions.answer_question, _reach(self.site, request), asked, text)

    async def agent_act(self, request: Request) -> Response:
        form = await _checked_form(request, self.site.csrf)
        if isinstance(form, Response):
            return form
        name, action = request.path_params["name"], request.path_params["action"]
        reach = _reach(self.site, request)
        if action in actions.PAUSE_ACTIONS:
            return await self._lift(reach, name, action)
        if action == "merge":
            return await self._merge(reach, name)
        if action in actions.REVIEW_ACTIONS:
            return await self._review(reach, name, action, form)
        try:
            command = actions.agent_command(name, action, form.get("text", ""))
            if action == "send" and await run_in_threadpool(
                board.open_dialog, self.site.sync, self.site.keys, name
            ):
                raise Refused(f"{name} shows a dialog: answer it first; nothing was typed")
            done = await run_in_threadpool(actions.on_agent, reach, name, command)
            said, ok = SAID.get(action, "{done}").format(agent=name, done=done), True
        except Refused as e:
            said, ok = str(e), False
        except LOST as e:
            said, ok = f"the bus cannot be reached ({e}); nothing was sent", False
        return HTMLResponse(render.notice_html(said, ok))


def build(site: Site, token: str, port: int, secure: bool, people: Callable[[], People]) -> App:
    """The page behind the gate: the owner's `token`, and `people` as they are now."""
    pages = Endpoints(site)
    app = Starlette(
        routes=[
            Route("/", pages.page),
            Route("/tasks", pages.tasks_page),
            Route("/tasks/live", pages.tasks_live),
            Route("/agent/{name}", pages.agent_page),
            Route("/agent/{name}/live", pages.agent_live),
            Route("/agent/{name}/review", pages.review),
            Route("/agent/{name}/screen.png", pages.screenshot),
            Route("/agent/{name}/approve", pages.approve, methods=["POST"]),
            Route("/agent/{name}/{action}", pages.agent_act, methods=["POST"]),
            Route("/stream", pages.stream),
            Route("/act", pages.act, methods=["POST"]),
            Route("/answer", pages.answer, methods=["POST"]),
            Mount("/static", StaticFiles(packages=[("web", "static")]), name="static"),
        ]
    )
    return TokenGate(_with_headers(app), token, port, secure, people)


SCREEN_LINES = 60
SAID = {"send": "✓ sent to {agent}", "kill": "✓ {agent} killed"}  # resume: the worker's own line


async def _agent(site: Site, name: str) -> Agent | None:
    if name_problem("agent", name):
        return None
    try:
        return await run_in_threadpool(AgentStore(site.sync, site.keys).find, name)
    except LOST:
        return None


def _reach(site: Site, request: Request) -> actions.Reach:
    """The bus, and who this request's clicks are from (the person the gate let in)."""
    return actions.Reach(site.sync, site.keys, actions.sender_of(person_of(request.scope)))


def _live(reach: actions.Reach, agent: str) -> dict[str, Any]:
    """What follows an agent on its page: its open dialog, its screen (or why there is none), its output."""
    try:
        screen = actions.screen(reach, agent, SCREEN_LINES)
    except Refused as e:
        screen = f"({e})"
    return {
        "dialog": board.open_dialog(reach.client, reach.keys, agent),
        "screen": screen,
        "output": board.recent_output(reach.client, reach.keys, agent),
    }


async def _notice(call: Callable[..., str], *args: Any, nothing: str = "nothing was sent") -> Response:
    """What a click did, as the page's notice: `call`'s one line (run off the loop), its refusal, or that
    the bus cannot be reached and `nothing` happened."""
    try:
        said, ok = await run_in_threadpool(call, *args), True
    except Refused as e:
        said, ok = str(e), False
    except LOST as e:
        said, ok = f"the bus cannot be reached ({e}); {nothing}", False
    return HTMLResponse(render.notice_html(said, ok))


async def _checked_form(request: Request, csrf: str) -> dict[str, str] | Response:
    """The form of a POST that may act: from this page's origin, with its CSRF field; else the refusal."""
    body = await request.body()
    if len(body) > MAX_FORM:
        return PlainTextResponse("refused: the form is too large\n", status_code=413)
    form = dict(parse_qsl(body.decode("utf-8", "replace")))
    refusal = post_refusal(
        request.headers.get("origin", ""), own_origin(request.scope), form.get("csrf", ""), csrf
    )
    if refusal is not None:
        log.warning("refused a click on %s: %s", request.url.path, refusal)
        return PlainTextResponse(refusal + "\n", status_code=403)
    return form


def _with_headers(app: App) -> App:
    extra = [(k.encode(), v.encode()) for k, v in HEADERS.items()]

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await app(scope, receive, sending)

    return wrapped
