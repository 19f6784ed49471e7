"""Who may use the page: a token, on every request — the owner's (`.ib/web-token`) or that of a person the
owner let in by name (web.people). The address `ib web` prints carries it once in its query string (`?t=`);
that visit is answered with a cookie and a redirect to the same page without it, and every later request
carries the cookie. A wrong, missing or revoked token gets 401 and nothing else; a token in the query string
that comes from another site (its `Origin`, or the browser's `Sec-Fetch-Site`) too.

`decide` is pure; `TokenGate` is the ASGI middleware around the app: it reads the people anew when their
file changed, and puts who is signed in into the scope (`person_of`). Actions (POST) are checked further by
the routes: the CSRF field and the Origin (`post_refusal`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from enum import Enum
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from web.page_token import same
from web.people import NOBODY, People

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger(__name__)

QUERY_TOKEN = "t"
CROSS = ("cross-site", "same-site")  # Sec-Fetch-Site values of a request another site started
UNAUTHORIZED = b"401 unauthorized: open the address ib web printed\n"
OWNER = ""  # who the owner is: the one person without a name
PERSON = "ib.person"  # the scope's key for who is signed in


class Verdict(Enum):
    PASS = "pass"  # the cookie holds the token
    ADMIT = "admit"  # the token in the query string, from the person's own browser: cookie, then redirect
    REFUSE = "refuse"


@dataclass(frozen=True)
class Asked:
    """What a request brings that decides whether it may be served."""

    cookie: str
    query: str
    origin: str  # the Origin header, "" when none
    fetch_site: str  # Sec-Fetch-Site, "" when none
    own_origin: str  # scheme://host:port as the request addressed this server


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    person: str = OWNER  # whose token it is (for PASS and ADMIT)


REFUSED = Decision(Verdict.REFUSE)


def holder(given: str, token: str, people: People) -> str | None:
    """Whose token `given` is: OWNER, a person's name, or None. Pure; constant time per comparison."""
    if not given:
        return None
    return OWNER if same(given, token) else people.name_of(given)


def decide(asked: Asked, token: str, people: People = NOBODY) -> Decision:
    """Pure: `token` is the owner's, `people` those let in by name."""
    cookie = holder(asked.cookie, token, people)
    if cookie is not None:
        return Decision(Verdict.PASS, cookie)
    query = holder(asked.query, token, people)
    if query is None:
        return REFUSED
    if asked.origin and asked.origin != asked.own_origin:
        return REFUSED
    return REFUSED if asked.fetch_site in CROSS else Decision(Verdict.ADMIT, query)


def person_of(scope: Scope) -> str:
    """Who is signed in for this request (OWNER or a name): the gate put it there."""
    return str(scope.get(PERSON, OWNER))


def post_refusal(origin: str, own_origin: str, csrf_given: str, csrf_wanted: str) -> str | None:
    """Why a POST is refused (403), None when it may act. Pure."""
    if not origin:
        return "refused: the request carries no Origin"
    if origin != own_origin:
        return f"refused: a request from {origin} may not act here"
    if not csrf_given or not same(csrf_given, csrf_wanted):
        return "refused: the form's CSRF field is missing or wrong; reload the page"
    return None


def cookie_name(port: int) -> str:
    """One per port: two `ib web` on one host keep their own cookies."""
    return f"ib_web_{port}"


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def own_origin(scope: Scope) -> str:
    headers = _headers(scope)
    host = headers.get("host", "")
    return f"{scope.get('scheme', 'http')}://{host}"


def asked_of(scope: Scope, port: int) -> Asked:
    headers = _headers(scope)
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header is no cookie (http.cookies raises CookieError or others)
        jar = SimpleCookie()
    morsel = jar.get(cookie_name(port))
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    return Asked(
        cookie=morsel.value if morsel is not None else "",
        query=query.get(QUERY_TOKEN, ""),
        origin=headers.get("origin", ""),
        fetch_site=headers.get("sec-fetch-site", ""),
        own_origin=own_origin(scope),
    )


def _without_token(scope: Scope) -> str:
    query = [
        (k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1")) if k != QUERY_TOKEN
    ]
    path = str(scope.get("path", "/"))
    return path + (f"?{urlencode(query)}" if query else "")


class _Revoked(Exception):
    """Ends the answer to a person the owner let in no more, once its end is sent."""


class TokenGate:
    """The ASGI app behind the tokens: every HTTP request is decided before the app sees it. `people` gives
    those let in by name as they are now."""

    def __init__(self, app: App, token: str, port: int, secure: bool, people: Callable[[], People]) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.secure = secure
        self.people = people

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        asked = asked_of(scope, self.port)
        decision = decide(asked, self.token, self.people())
        if decision.verdict is Verdict.PASS and decision.person == OWNER:
            scope[PERSON] = OWNER
            await self.app(scope, receive, send)
        elif decision.verdict is Verdict.PASS:
            scope[PERSON] = decision.person
            await self._as_person(scope, receive, send, asked.cookie)
        elif decision.verdict is Verdict.ADMIT:
            log.info("let %s in", decision.person or "the owner")
            await self._admit(scope, send, asked.query)
        else:
            log.info("refused %s %s: no valid token", scope.get("method"), scope.get("path"))
            await _plain(send, 401, UNAUTHORIZED)

    async def _as_person(self, scope: Scope, receive: Receive, send: Send, token: str) -> None:
        """Serve a person let in by name; an answer still going (the event stream) when the owner revokes
        them ends at its next part."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.body" and holder(token, self.token, self.people()) is None:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                raise _Revoked
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except _Revoked:
            log.info("ended %s's %s: let in no more", scope[PERSON], scope.get("path"))

    async def _admit(self, scope: Scope, send: Send, token: str) -> None:
        flags = "; HttpOnly; SameSite=Strict; Path=/" + ("; Secure" if self.secure else "")
        cookie = f"{cookie_name(self.port)}={token}{flags}"
        headers = [
            (b"location", _without_token(scope).encode("latin-1")),
            (b"set-cookie", cookie.encode("latin-1")),
            (b"cache-control", b"no-store"),
            (b"referrer-policy", b"no-referrer"),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
