"""The pure parts of `ib web`: who may in (web.guard), a click into its worker command (web.actions), the
board's tree and buttons (web.board), the stream's frames and cursor (web.render, web.stream) and which
options may serve (web.options)."""

from __future__ import annotations

import pytest

from bus.commands.worker_commands import Approve, Choose, Deny
from bus.inbox.prompts import Prompt
from bus.stores.agent_store import Agent
from web.actions import Click, command_of, lines_of
from web.board import agent_rows, dialog_view
from web.errors import Refused
from web.guard import Asked, Verdict, decide, post_refusal
from web.options import Options, exposure_problem
from web.render import MAX_DIFF_LINES, diff_html, sse_frame
from web.stream import Wanted, entries, valid_cursor
from worker.service.supervisor import service_specs

TOKEN = "t" * 43
OWN = "http://127.0.0.1:8000"


def _asked(cookie: str = "", query: str = "", origin: str = "", site: str = "") -> Asked:
    return Asked(cookie, query, origin, site, OWN)


@pytest.mark.parametrize(
    ("asked", "verdict"),
    [
        (_asked(cookie=TOKEN), Verdict.PASS),
        (_asked(cookie=TOKEN, origin="http://evil.example"), Verdict.PASS),  # SameSite keeps it home
        (_asked(query=TOKEN), Verdict.ADMIT),
        (_asked(query=TOKEN, site="none"), Verdict.ADMIT),
        (_asked(query=TOKEN, site="same-origin", origin=OWN), Verdict.ADMIT),
        (_asked(query=TOKEN, origin="http://evil.example"), Verdict.REFUSE),
        (_asked(query=TOKEN, site="cross-site"), Verdict.REFUSE),
        (_asked(query=TOKEN, site="same-site"), Verdict.REFUSE),
        (_asked(), Verdict.REFUSE),
        (_asked(cookie="x", query="y"), Verdict.REFUSE),
        (_asked(cookie=TOKEN[:-1]), Verdict.REFUSE),
    ],
    ids=[
        "cookie",
        "cookie-other-origin",
        "query",
        "query-typed",
        "query-same-origin",
        "query-other-origin",
        "query-cross-site",
        "query-same-site",
        "nothing",
        "wrong-both",
        "cookie-short",
    ],
)
def test_who_may_in(asked: Asked, verdict: Verdict) -> None:
    assert decide(asked, TOKEN).verdict is verdict


@pytest.mark.parametrize(
    ("origin", "csrf", "refused"),
    [
        (OWN, "c", None),
        ("", "c", "carries no Origin"),
        ("http://evil.example", "c", "may not act here"),
        (OWN, "", "CSRF field"),
        (OWN, "d", "CSRF field"),
    ],
    ids=["fine", "no-origin", "other-origin", "no-csrf", "wrong-csrf"],
)
def test_a_click_needs_its_origin_and_csrf_field(origin: str, csrf: str, refused: str | None) -> None:
    said = post_refusal(origin, OWN, csrf, "c")
    assert said is None if refused is None else refused in (said or "")


@pytest.mark.parametrize(
    ("choice", "command"),
    [
        ("approve", Approve(agent="a1", prompt="p-1")),
        ("always", Approve(agent="a1", prompt="p-1", always=True)),
        ("deny", Deny(agent="a1", prompt="p-1")),
        ("choose:2", Choose(agent="a1", answer="2", prompt="p-1")),
    ],
    ids=["approve", "always", "deny", "choose"],
)
def test_a_click_is_the_command_the_cli_sends(choice: str, command: object) -> None:
    assert command_of(Click("a1", "p-1", choice)) == command


@pytest.mark.parametrize(
    ("click", "said"),
    [
        (Click("../etc", "p-1", "approve"), "no such agent"),
        (Click("<b>", "p-1", "approve"), "no such agent"),
        (Click("a1", "", "approve"), "names no dialog"),
        (Click("a1", "p-1", "merge"), "no such button"),
        (Click("a1", "p-1", "choose:0"), "no such option"),
        (Click("a1", "p-1", "choose:x"), "no such option"),
        (Click("a1", "p-1", "choose:100"), "no such option"),
    ],
    ids=["dots", "html", "no-prompt", "other-action", "option-0", "option-word", "option-large"],
)
def test_a_click_no_button_sends_is_refused(click: Click, said: str) -> None:
    with pytest.raises(Refused, match=said):
        command_of(click)


def test_the_agents_read_as_a_tree_in_the_order_made() -> None:
    agents = [
        Agent(id="boss", created_at=1),
        Agent(id="lone", created_at=2),
        Agent(id="w1", manager="boss", created_at=3),
        Agent(id="w2", manager="w1", created_at=4),
        Agent(id="orphan", manager="gone", created_at=5),
        Agent(id="c1", manager="c2", created_at=6),
        Agent(id="c2", manager="c1", created_at=7),
    ]
    rows = agent_rows(agents, now=10)
    assert [(r.id, r.depth) for r in rows] == [
        ("boss", 0),
        ("w1", 1),
        ("w2", 2),
        ("lone", 0),
        ("orphan", 0),
        ("c1", 0),  # a cycle of managers is shown flat, nothing lost
        ("c2", 0),
    ]
    assert rows[0].elapsed == "9s" and rows[0].program == "Claude Code"


def test_an_agent_whose_dialog_is_open_reads_waiting_on_you() -> None:
    agents = [
        Agent(id="asker", state="running", created_at=1),
        Agent(id="busy", state="running", created_at=2),
    ]
    rows = agent_rows(agents, now=10, asking=frozenset({"asker"}))
    assert [(r.id, r.state) for r in rows] == [("asker", "waiting on you"), ("busy", "running")]


@pytest.mark.parametrize(
    ("prompt", "labels"),
    [
        (Prompt(id="p", agent="a", kind="permission", options=("approve", "approve always", "deny")),
         ["Allow", "Always allow", "Deny"]),
        (Prompt(id="p", agent="a", kind="plan"), ["Approve", "Keep planning"]),
        (Prompt(id="p", agent="a", kind="trust", detail="/w"), ["Trust", "Refuse"]),
        (Prompt(id="p", agent="a", kind="ask", options=("Postgres", "SQLite"), question_id="q"),
         ["Postgres", "SQLite"]),
        (Prompt(id="p", agent="a", kind="", options=("Yes", "No"), question_id="q"), ["Yes", "No"]),
    ],
    ids=["permission-by-hook", "plan", "trust", "ask-drawn", "unknown-drawn"],
)  # fmt: skip
def test_a_dialog_gets_a_button_per_option_as_drawn(prompt: Prompt, labels: list[str]) -> None:
    assert [b.label for b in dialog_view(prompt).buttons] == labels


def test_a_frame_keeps_every_line_of_its_data() -> None:
    assert sse_frame("a\nb\r\nc", "log", "1-0") == "id: 1-0\nevent: log\ndata: a\ndata: b\ndata: c\n\n"
    assert sse_frame("x") == "data: x\n\n"


def test_the_cursor_moves_past_deleted_entries() -> None:
    reply = [("ib:events", [("1-0", {"e": "{}"}), ("2-0", None)])]
    assert entries(reply) == ([("1-0", {"e": "{}"})], "2-0")
    assert entries(None) == ([], None)


@pytest.mark.parametrize("text", ["0-0", "1732560005123-0", "5"])
def test_a_stream_id_is_a_cursor(text: str) -> None:
    assert valid_cursor(text)


@pytest.mark.parametrize("text", ["", "$", "x", "1-x", "1-2-3", "-1", "99999999999999999999999-0"])
def test_anything_else_is_not(text: str) -> None:
    assert not valid_cursor(text)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (Options(), None),
        (Options(host="::1"), None),
        (Options(host="localhost"), None),
        (Options(host="0.0.0.0"), "--expose-agents-without-tls"),
        (Options(host="192.168.1.5"), "plain HTTP"),
        (Options(host="0.0.0.0", expose=True), None),
        (Options(host="0.0.0.0", tls_cert="c", tls_key="k"), None),
        (Options(tls_cert="c"), "go together"),
        (Options(port=70000), "is not a port"),
    ],
    ids=["default", "v6-loopback", "localhost", "all", "lan", "flag", "tls", "half-tls", "port"],
)
def test_only_loopback_serves_without_tls_or_the_flag(options: Options, problem: str | None) -> None:
    said = exposure_problem(options)
    assert said is None if problem is None else problem in (said or "")


@pytest.mark.parametrize(
    ("query", "event", "shown"),
    [
        ({}, {"type": "complete"}, True),
        ({"type": "complete,waiting"}, {"type": "waiting"}, True),
        ({"type": "complete waiting"}, {"type": "permission"}, False),
        ({"project": "house"}, {"type": "x", "project": "shed"}, False),
        ({"agent": "a1"}, {"type": "x", "agent": "a1"}, True),
        ({"agent": "a1", "project": "p"}, {"type": "x", "agent": "a1"}, False),
    ],
    ids=["nothing-asked", "types-comma", "types-space", "other-project", "agent", "agent-and-project"],
)
def test_the_event_filter(query: dict[str, str], event: dict[str, object], shown: bool) -> None:
    assert Wanted.of(query)(event) is shown


def test_a_diff_of_ten_thousand_lines_is_drawn_up_to_the_cap_and_escaped() -> None:
    head = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1,10000 @@\n"
    html, left_out = diff_html(head + "".join(f"+<b>{n}</b>\n" for n in range(10_000)))
    assert left_out == 10_004 - MAX_DIFF_LINES
    assert "<b>" not in html and "&lt;b&gt;0&lt;/b&gt;" in html


def test_a_binary_file_reads_as_git_says_it() -> None:
    html, left_out = diff_html("diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n")
    assert "Binary files a/i.png and b/i.png differ" in html and left_out == 0


def test_ib_up_starts_the_page_when_its_port_is_set() -> None:
    assert [s.name for s in service_specs("ib", with_bot=False)] == ["worker"]
    specs = service_specs("ib", with_bot=True, web_port=8765)
    assert [s.name for s in specs] == ["worker", "bot", "web"]
    assert specs[-1].argv == (
        "ib",
        "web",
        "--port",
        "8765",
        "--hide-token",
        "--verbose",
    )  # its log holds no token


@pytest.mark.parametrize(
    ("text", "lines"), [("12", (12, 12)), (" 3-5 ", (3, 5)), ("3–5", (3, 5)), ("7-7", (7, 7))]
)
def test_a_comments_lines(text: str, lines: tuple[int, int]) -> None:
    assert lines_of(text) == lines


@pytest.mark.parametrize("text", ["", "ten", "0", "5-2", "-3", "1-", "1-2-3", "1.5", "١٢", "99999999"])
def test_lines_no_file_has_are_refused(text: str) -> None:
    with pytest.raises(Refused, match="lines are a number or a range"):
        lines_of(text)
