"""`ib web` in Debian's Chromium without an agent: a dialog recorded on the bus appears on the open page and,
while the page is not looked at, as a notification (the Notification API); the tasks page draws the task
graph and shows a collision the worker's conflict check finds while the page is open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from playwright.sync_api import Browser

from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.prompts import PromptStore
from bus.stores.agent_store import Agent, AgentStore
from bus.tasks.merges import MergeStore
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.conflict_pairs import agent_repo_of, base_repo, edit, runtime
from tests.waiting import retry_until
from tests.web_process import WebProcess, chromium, picture
from worker.conflicts.check import ConflictCheck

WAIT = 30.0


@pytest.fixture
def browser() -> Iterator[Browser]:
    yield from chromium()


@pytest.fixture
def web(ib: IbRunner, tmp_path: Path) -> Iterator[WebProcess]:
    process = WebProcess(ib, tmp_path / "web.log")
    process.start()
    yield process
    process.stop()
    print((tmp_path / "web.log").read_text())


def test_a_dialog_that_appears_while_the_page_is_in_the_background_is_notified(
    web: WebProcess, browser: Browser, rds: redis.Redis, keys: Keys
) -> None:
    context = browser.new_context()
    context.grant_permissions(["notifications"], origin=web.base)
    page = context.new_page()
    # the person looks at another window: headless Chromium keeps every page focused and visible, so the
    # page is told it has no focus (an init script, injected by the browser, not a change to the page)
    page.add_init_script("Document.prototype.hasFocus = function () { return false; };")
    page.goto(web.address)
    page.wait_for_selector("#bus[data-up=yes]")
    AgentStore(rds, keys).save(Agent(id="a1", worker="w1", state="running"))
    prompt = PromptStore(rds, keys).record("a1", "permission", "ls", (), tool="Bash", question="Proceed?")
    assert prompt is not None
    publish(rds, keys, make_event("permission", "a1 asks to use Bash", agent="a1"), 1000)
    page.wait_for_selector(f'.dialog[data-prompt="{prompt.id}"]', timeout=WAIT * 1000)
    assert page.inner_text('tr.agent[data-agent="a1"] td.state') == "waiting on you"  # its pane: "running"
    retry_until(lambda: page.get_attribute("body", "data-notified") == "1", WAIT, 0.1, "one notification")


def test_the_page_resumes_after_a_restart_of_ib_web_with_nothing_lost_or_twice(
    web: WebProcess, browser: Browser, rds: redis.Redis, keys: Keys
) -> None:
    page = browser.new_page()
    page.goto(web.address)
    page.wait_for_selector("#bus[data-up=yes]")
    start = publish(rds, keys, make_event("message", "start"), 1000)
    page.wait_for_selector(f'li[data-id="{start}"]', state="attached", timeout=WAIT * 1000)
    before = [publish(rds, keys, make_event("message", f"before {n}"), 1000) for n in range(3)]
    page.wait_for_selector(f'li[data-id="{before[-1]}"]', state="attached", timeout=WAIT * 1000)
    port = web.port
    web.stop()
    while_down = [publish(rds, keys, make_event("message", f"while down {n}"), 1000) for n in range(3)]
    web.start(port)
    after = [publish(rds, keys, make_event("message", f"after {n}"), 1000) for n in range(2)]
    page.wait_for_selector(f'li[data-id="{after[-1]}"]', state="attached", timeout=WAIT * 1000)
    shown = [li.get_attribute("data-id") for li in page.query_selector_all("#event-list li")]
    assert shown[: 1 + 3 + 3 + 2] == list(reversed([start, *before, *while_down, *after]))  # newest first
    assert len(shown) == len(set(shown))
    page.wait_for_selector("#bus[data-up=yes]")


def test_the_tasks_page_draws_the_graph_and_shows_a_collision_as_it_is_found(
    web: WebProcess,
    browser: Browser,
    rds: redis.Redis,
    keys: Keys,
    redis_url: str,
    namespace: str,
    tmp_path: Path,
) -> None:
    tasks = TaskStore(rds, keys, 1000)
    tasks.add("design the <b>API</b>", project="shop", task_id="api", priority=8)
    tasks.add("write the schema", project="shop", task_id="schema")
    tasks.add("the cart", project="shop", task_id="cart", after=["api", "schema"])
    tasks.add("the checkout", project="shop", task_id="checkout", after=["api"])
    tasks.add("release", project="shop", task_id="release", after=["cart", "checkout"], priority=9)
    tasks.claim_task("schema", "bob")
    tasks.done("schema", "bob")
    tasks.claim_task("api", "ann")
    repo = base_repo(tmp_path / "base")
    rt = runtime(repo, redis_url, namespace)
    ann, bob = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    MergeStore(rds, keys, 1000).enqueue(
        project="shop", agent="carol", branch="agent/carol", target="main", worker="w1", size=40
    )
    page = browser.new_page()
    page.goto(web.address)
    page.goto(web.base + "/tasks")
    page.wait_for_selector("#bus[data-up=yes]")
    boxes = page.locator("figure.task-graph g.box")
    assert boxes.evaluate_all("gs => gs.map(g => [g.dataset.node, g.dataset.state])") == [
        ["api", "claimed"],
        ["schema", "done"],
        ["checkout", "pending"],
        ["cart", "pending"],
        ["release", "pending"],
    ]
    assert page.locator("figure.task-graph path.edge").count() == 5
    assert page.locator('g.box[data-node="release"]').is_visible()
    assert page.locator("#at-risk .risk").count() == 0
    edit(ann / "calc.py", "return a + b", "return a + b + 1")
    edit(bob / "calc.py", "return a + b", "return a - b")
    assert len(ConflictCheck(rt).run(["bob"])) == 1  # its conflict_risk event refreshes the open page
    page.wait_for_selector('#at-risk .risk[data-agent="ann"][data-other="bob"]', timeout=WAIT * 1000)
    assert page.inner_text("#at-risk .risk code") == "calc.py"
    picture(page, "web-tasks", tmp_path)
