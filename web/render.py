"""How the page reads: the Jinja2 templates (autoescaped: agent names, goals, questions and outputs are
untrusted text) and the frames of the event stream. Pure.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer

from bus.events.envelope import Envelope
from bus.stores.agent_store import Agent
from web.board import PROGRAMS, Board
from web.queues import Queues

_env = Environment(
    loader=PackageLoader("web", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
EVENTS_SHOWN = 200  # lines of the event stream a page keeps (the page drops older ones: steady memory)


def page(
    board: Board,
    events: list[Envelope],
    cursor: str,
    csrf: str,
    bus_up: bool,
    wanted: Any = None,
    person: str = "",
) -> str:
    """The whole page: the board, the latest events (newest first), and where its stream starts; `wanted`:
    the event filter's fields (project, agent, types) to show in its form; `person`: who is signed in (""
    the owner)."""
    return _env.get_template("page.html").render(
        person=person,
        wanted=wanted,
        board=board,
        events=[event_view(e) for e in reversed(events[-EVENTS_SHOWN:])],
        cursor=cursor,
        csrf=csrf,
        bus_up=bus_up,
        kept=EVENTS_SHOWN,
    )


def board_html(board: Board, csrf: str) -> str:
    return _env.get_template("board.html").render(board=board, csrf=csrf)


def event_html(event: Envelope) -> str:
    return _env.get_template("event_line.html").render(event=event_view(event))


def notice_html(text: str, ok: bool) -> str:
    return _env.get_template("notice.html").render(text=text, ok=ok)


def answered_html(text: str, ok: bool, board: Board, csrf: str) -> str:
    """What a click gets back: its outcome, and the board as it is now (the dialog gone when it took)."""
    return _env.get_template("answered.html").render(text=text, ok=ok, board=board, csrf=csrf)


def agent_page(agent: Agent, live: dict[str, Any], cursor: str, csrf: str) -> str:
    """An agent's own page: what it is, its controls, and the live part (`agent_live`)."""
    return _env.get_template("agent.html").render(
        agent=agent,
        program=PROGRAMS.get(agent.cli, agent.cli),
        cursor=cursor,
        csrf=csrf,
        kept=EVENTS_SHOWN,
        **live,
    )


def agent_live(agent: Agent, live: dict[str, Any], csrf: str) -> str:
    """The part of an agent's page that follows it: its open dialog, the send box, its screen, its output."""
    return _env.get_template("agent_live.html").render(agent=agent, csrf=csrf, **live)


def tasks_page(queues: Queues, cursor: str, csrf: str) -> str:
    return _env.get_template("tasks.html").render(queues=queues, cursor=cursor, csrf=csrf, kept=EVENTS_SHOWN)


def queues_html(queues: Queues) -> str:
    return _env.get_template("queues.html").render(queues=queues)


MAX_DIFF_LINES = 5000  # of a diff the review page draws; the rest is said, and `ib diff` shows it all
_DIFF = HtmlFormatter(cssclass="diff")


def diff_html(text: str) -> tuple[str, int]:
    """The diff highlighted as HTML (Pygments escapes every character of it: the template may show it as
    it is) and how many lines were left out past MAX_DIFF_LINES."""
    lines = text.splitlines(keepends=True)
    shown = "".join(lines[:MAX_DIFF_LINES])
    return highlight(shown, DiffLexer(), _DIFF), max(0, len(lines) - MAX_DIFF_LINES)


def review_page(agent: Agent, diff: str, csrf: str) -> str:
    html, left_out = diff_html(diff)
    files = [line[len("diff --git ") :] for line in diff.splitlines() if line.startswith("diff --git ")]
    paths = [file.split(" b/", 1)[1] if " b/" in file else file for file in files]
    return _env.get_template("review.html").render(
        agent=agent, diff=html, left_out=left_out, files=files, paths=paths, csrf=csrf
    )


def event_view(event: Envelope) -> dict[str, Any]:
    """The fields an event line shows, each as text."""
    return {
        "id": str(event.get("id", "")),
        "ts": str(event.get("ts", ""))[11:19],
        "type": str(event.get("type", "")),
        "agent": str(event.get("agent") or ""),
        "project": str(event.get("project") or ""),
        "msg": " ".join(str(event.get("msg", "")).split())[:300],
        "waits": str(event.get("type", "")) in ("permission", "question"),
    }


def sse_frame(data: str, event: str = "", event_id: str = "") -> str:
    """One server-sent event; each line of `data` on its own `data:` line (a newline never ends it early)."""
    lines = [f"id: {event_id}"] if event_id else []
    if event:
        lines.append(f"event: {event}")
    lines.extend(f"data: {line}" for line in data.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(lines) + "\n\n"
