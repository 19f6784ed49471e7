"""An agent's own page in `ib web`, in Debian's Chromium, with a fast fake agent and a real worker: its screen
(as `ib look`), its output, a send box that reaches the agent and is refused while a dialog is open, and
Resume / Kill through its worker."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from playwright.sync_api import Browser

from bus.inbox.prompts import PromptStore
from bus.inbox.questions import QuestionStore
from bus.inbox.review_comments import ReviewComments
from bus.stores import budget_store
from bus.stores.agent_store import AgentStore
from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.reads import pane_text
from tests.waiting import retry_until
from tests.web_process import WebProcess, chromium, picture

WAIT = 30.0


@pytest.fixture
def browser() -> Iterator[Browser]:
    yield from chromium()


@pytest.fixture
def web(agents_ib: IbRunner, running_worker: Worker, tmp_path: Path) -> Iterator[WebProcess]:
    process = WebProcess(agents_ib, tmp_path / "web.log")
    process.start()
    yield process
    process.stop()
    print((tmp_path / "web.log").read_text())


def test_an_agents_page_shows_its_screen_and_takes_a_message(
    agents_ib: IbRunner, web: WebProcess, browser: Browser, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    spawned = agents_ib.run("new-agent", "idle", "--name", "painter")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: AgentStore(rds, keys).find("painter"), WAIT, 0.1, "the agent")
    page = browser.new_page()
    page.goto(web.address)
    page.click('tr.agent[data-agent="painter"] a')
    assert page.url == web.base + "/agent/painter"
    retry_until(lambda: "idle" in page.inner_text("#screen"), WAIT, 0.2, "the screen")

    page.fill("#send textarea", "paint it <b>blue</b>")
    page.click("#send button")
    page.wait_for_selector("#notice .ok", timeout=WAIT * 1000)
    assert page.inner_text("#notice") == "✓ sent to painter"
    received = tmp_path / "received.txt"
    retry_until(
        lambda: received.exists() and "paint it <b>blue</b>" in received.read_text(), WAIT, 0.1, "sent"
    )
    retry_until(  # the page followed the agent's events: its screen again, the text as text
        lambda: "Received: paint it <b>blue</b>" in page.inner_text("#screen"), WAIT, 0.1, "the screen after"
    )
    assert page.query_selector("#screen b") is None
    picture(page, "web-agent", tmp_path)
    png = httpx.get(web.base + "/agent/painter/screen.png", headers=web.cookie, timeout=WAIT)
    assert png.headers["content-type"] == "image/png" and png.content.startswith(b"\x89PNG\r\n")

    prompt = PromptStore(rds, keys).record(
        "painter", "permission", "rm -rf /", (), tool="Bash", question="Run?"
    )
    assert prompt is not None
    page.reload()
    assert page.is_disabled("#send textarea") and page.query_selector(".dialog") is not None
    refused = httpx.post(
        web.base + "/agent/painter/send",
        headers={**web.cookie, "origin": web.base},
        data={"csrf": page.get_attribute("body", "data-csrf") or "", "text": "typed into a dialog?"},
        timeout=WAIT,
    )
    assert "painter shows a dialog: answer it first; nothing was typed" in refused.text
    assert "typed into a dialog?" not in received.read_text()
    PromptStore(rds, keys).clear("painter", prompt.id)

    page.reload()
    page.once("dialog", lambda d: d.accept())  # the Kill button asks first
    page.click(".controls button:has-text('Kill')")
    page.wait_for_selector("#notice .ok", timeout=WAIT * 1000)
    retry_until(lambda: AgentStore(rds, keys).find("painter") is None, WAIT, 0.1, "the agent killed")
    assert httpx.get(web.base + "/agent/painter", headers=web.cookie).status_code == 404
    html = httpx.get(web.base + "/agent/a%3Cb%3E", headers=web.cookie)
    assert html.status_code == 404 and html.text == "no agent a<b> on the bus\n"
    assert html.headers["content-type"].startswith("text/plain")  # never read as HTML
    assert httpx.get(web.base + "/agent/..%2Fetc", headers=web.cookie).status_code in (404, 405)


def test_the_review_shows_the_change_and_approve_merges_it(
    agents_ib: IbRunner, web: WebProcess, browser: Browser, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    steps = ["fake: write shipped.txt <script>alert(1)</script>", "fake: commit ship it", "fake: done"]
    spawned = agents_ib.run("new-agent", "\n".join(["Help the person.", *steps]), "--name", "shipit")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(
        lambda: (a := AgentStore(rds, keys).find("shipit")) is not None and a.state == "complete",
        WAIT,
        0.2,
        "the agent done",
    )
    page = browser.new_page()
    page.goto(web.address)
    page.goto(web.base + "/agent/shipit/review")
    assert page.inner_text("#files") == "a/shipped.txt b/shipped.txt"
    assert "+<script>alert(1)</script>" in page.inner_text("#diff")  # shown as text, never run
    assert page.query_selector("#diff script") is None
    picture(page, "web-review", repo.parent)
    page.click("#approve")
    page.wait_for_selector("#notice .ok", timeout=WAIT * 1000)
    assert "shipit is in the merge queue" in page.inner_text("#notice")
    retry_until((repo / "shipped.txt").exists, 60, 0.2, "the change merged into main")
    assert (repo / "shipped.txt").read_text().strip() == "<script>alert(1)</script>"


def test_questions_pauses_and_limits_wait_on_the_page_and_are_answered_there(
    agents_ib: IbRunner, web: WebProcess, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    # the limit line is on the agent's screen too: the worker forgets a limit line its pane no longer shows
    spawned = agents_ib.run("new-agent", "fake: say 5-hour limit reached", "--name", "asker")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: "5-hour limit reached" in pane_text(agents_ib, "asker"), WAIT, 0.1, "the line shown")
    asked = QuestionStore(rds, keys).ask("asker", "Which <i>colour</i>?", options=("blue", "red"))
    budget_store.hold(rds, keys, "asker", budget_store.WATCHDOG, "the same Bash call 5 times")
    AgentStore(rds, keys).update("asker", limited_until=time.time() + 3600, limit_line="5-hour limit reached")
    page = httpx.get(web.base + "/", headers=web.cookie).text
    assert f'data-question="{asked.id}"' in page and "Which &lt;i&gt;colour&lt;/i&gt;?" in page
    assert '<button type="submit" name="text" value="red">red</button>' in page
    assert 'class="pause" data-agent="asker" data-kind="runaway"' in page and ">Continue</button>" in page
    assert 'class="limit" data-agent="asker"' in page and "5-hour limit reached" in page

    csrf = page.split('data-csrf="')[1].split('"')[0]
    own = {**web.cookie, "origin": web.base}
    answered = httpx.post(
        web.base + "/answer", headers=own, data={"csrf": csrf, "question": asked.id, "text": "red"}
    )
    assert "✓ answered asker" in answered.text, answered.text
    received = tmp_path / "received.txt"
    retry_until(lambda: received.exists() and "red" in received.read_text(), WAIT, 0.1, "the answer typed")
    again = httpx.post(
        web.base + "/answer", headers=own, data={"csrf": csrf, "question": asked.id, "text": "blue"}
    )
    assert "that question was already answered; nothing was sent" in again.text

    refused = httpx.post(web.base + "/agent/asker/raise", headers=own, data={"csrf": csrf})
    assert "asker is not paused by a budget (the watchdog paused it" in refused.text
    going = httpx.post(web.base + "/agent/asker/continue", headers=own, data={"csrf": csrf}, timeout=WAIT)
    assert "▶ asker goes on" in going.text
    assert budget_store.hold_of(rds, keys, "asker") == {}
    page = httpx.get(web.base + "/", headers=web.cookie).text
    assert 'class="pause"' not in page and f'data-question="{asked.id}"' not in page


def test_merge_from_the_agents_page(
    agents_ib: IbRunner, web: WebProcess, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    steps = ["fake: write merged.txt yes", "fake: commit merge it", "fake: done"]
    spawned = agents_ib.run("new-agent", "\n".join(["Help the person.", *steps]), "--name", "merger")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(
        lambda: (a := AgentStore(rds, keys).find("merger")) is not None and a.state == "complete",
        WAIT,
        0.2,
        "the agent done",
    )
    page = httpx.get(web.base + "/agent/merger", headers=web.cookie).text
    assert 'hx-post="/agent/merger/merge"' in page
    csrf = page.split('data-csrf="')[1].split('"')[0]
    merged = httpx.post(
        web.base + "/agent/merger/merge",
        headers={**web.cookie, "origin": web.base},
        data={"csrf": csrf},
        timeout=120,
    )
    assert "✓ merged merger into main (" in merged.text, merged.text
    assert (repo / "merged.txt").read_text().strip() == "yes"


def test_comments_on_the_review_go_to_the_agent_as_one_request_for_changes(
    agents_ib: IbRunner, web: WebProcess, rds: redis.Redis, keys: Keys
) -> None:
    steps = ["fake: write notes.txt first draft", "fake: commit draft", "fake: done"]
    spawned = agents_ib.run("new-agent", "\n".join(["Help the person.", *steps]), "--name", "drafter")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(
        lambda: (a := AgentStore(rds, keys).find("drafter")) is not None and a.state == "complete",
        WAIT,
        0.2,
        "the agent done",
    )
    page = httpx.get(web.base + "/agent/drafter/review", headers=web.cookie).text
    assert '<option value="notes.txt">notes.txt</option>' in page
    csrf = page.split('data-csrf="')[1].split('"')[0]
    own = {**web.cookie, "origin": web.base}

    def post(agent: str, action: str, **fields: str) -> str:
        url = f"{web.base}/agent/{agent}/{action}"
        return httpx.post(url, data={"csrf": csrf, **fields}, headers=own).text

    # what cannot be kept or sent says so in one line, and keeps and sends nothing
    assert "no comments on drafter&#39;s change to send" in post("drafter", "request-changes")
    assert "lines are a number or a range" in post(
        "drafter", "comment", path="notes.txt", lines="ten", text="x"
    )
    assert "lines are a number or a range" in post(
        "drafter", "comment", path="notes.txt", lines="5-2", text="x"
    )
    assert "nothing to keep" in post("drafter", "comment", path="notes.txt", lines="1", text="  ")
    assert "no agent ghost" in post("ghost", "comment", path="notes.txt", lines="1", text="x")
    refused = httpx.post(
        f"{web.base}/agent/drafter/comment", data={"path": "notes.txt", "lines": "1"}, headers=own
    )
    assert refused.status_code == 403  # no CSRF field
    assert ReviewComments(rds, keys).waiting("drafter")[0] == []

    assert "1 waiting" in post("drafter", "comment", path="notes.txt", lines="1", text="say <b>final</b>")
    assert "2 waiting" in post("drafter", "comment", path="notes.txt", lines="1–2", text="and add a date")
    assert "2 comments sent to drafter" in post("drafter", "request-changes")
    retry_until(
        lambda: "Changes requested on your work (2 comments" in pane_text(agents_ib, "drafter"),
        WAIT,
        0.2,
        "the one prompt typed into the agent",
    )
    assert ReviewComments(rds, keys).waiting("drafter")[0] == []
