"""`ib web` in a real browser (Debian's chromium, driven by Playwright; no browser is downloaded) with a
real Claude Code agent (the pinned CLI, offline against the scripted Messages API), all run from the
installed wheel as a user has it (tests/wheel.py: `ib`, the worker, `ib web` and the agent's hooks): its
permission dialog appears on the page within a second of the event, a click on its button lets the agent go
on, the page shows `complete`, and a second answer to the same dialog is told it was already answered."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from playwright.sync_api import Browser, Page

from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply
from tests.streams import stream_entries
from tests.waiting import retry_until
from tests.web_process import WebProcess, chromium, picture
from tests.wheel import HIDDEN, Installed, run

# A hang guard: the first test of a run to need the wheel builds and installs it (tests/wheel.py, 250 s at
# load 20), then one turn of the agent after another.
pytestmark = [pytest.mark.claude, pytest.mark.timeout(720)]
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores
ASKING = 'touch built.txt; echo "exit=$?"'  # `$?` cannot be checked before it runs: Claude Code asks
SHOWN_WITHIN_MS = 1000


@pytest.fixture
def browser() -> Iterator[Browser]:
    yield from chromium()


@pytest.fixture
def wheel_ib(claude_ib: IbRunner, installed_wheel: Installed) -> IbRunner:
    """`claude_ib` running the installed wheel's `ib`, with nothing of this process's Python in its
    environment."""
    claude_ib.program = installed_wheel.ib
    claude_ib.unset_prefixes = (*claude_ib.unset_prefixes, *HIDDEN)
    return claude_ib


@pytest.fixture
def claude_worker(wheel_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    with worker_running(wheel_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


@pytest.fixture
def web(wheel_ib: IbRunner, tmp_path: Path) -> Iterator[WebProcess]:
    process = WebProcess(wheel_ib, tmp_path / "web.log")
    process.start()
    yield process
    process.stop()
    print((tmp_path / "web.log").read_text())


def _events(rds: redis.Redis, keys: Keys) -> list[tuple[str, dict[str, object]]]:
    return [(i, json.loads(f["e"])) for i, f in stream_entries(rds, keys.events)]


def _first(rds: redis.Redis, keys: Keys, kind: str, agent: str) -> str | None:
    return next((i for i, e in _events(rds, keys) if e["type"] == kind and e.get("agent") == agent), None)


def _all_installed(installed: Installed, ib: IbRunner, worker: Worker, web: WebProcess) -> None:
    """The worker and `ib web` run the venv's `ib`, and its python imports every package from the venv."""
    assert web.proc is not None
    assert installed.runs(worker.proc.pid) and installed.runs(web.proc.pid)
    files = "import bus, worker, bot, web; print(bus.__file__, worker.__file__, bot.__file__, web.__file__)"
    where = run([installed.python, "-c", files], ib.cwd, ib.environ()).split()
    assert len(where) == 4 and all(f.startswith(f"{installed.venv}/") for f in where), where


def test_a_permission_dialog_answered_from_the_page_lets_the_real_agent_finish(
    installed_wheel: Installed,
    wheel_ib: IbRunner,
    anthropic: FakeAnthropic,
    claude_worker: Worker,
    web: WebProcess,
    browser: Browser,
    repo: Path,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    _all_installed(installed_wheel, wheel_ib, claude_worker, web)
    anthropic.script(
        reply("Now the build.", bash(ASKING, "Build it")),
        reply("Built.\n\nI HAVE COMPLETED THE GOAL"),
    )
    page: Page = browser.new_page()
    page.goto(web.address)
    assert page.url == web.base + "/"  # the token left the address bar for a cookie
    page.wait_for_selector("#bus[data-up=yes]")
    spawned = wheel_ib.run("new-agent", "build it", "--name", "builder")
    assert spawned.returncode == 0, spawned.stderr

    dialog = page.wait_for_selector('#dialogs .dialog[data-agent="builder"]', timeout=TURN * 1000)
    assert dialog is not None
    told = retry_until(lambda: _first(rds, keys, "permission", "builder"), 10, 0.1, "the permission event")
    shown_at = int(dialog.get_attribute("data-shown-at") or 0)
    assert shown_at - int(told.split("-")[0]) <= SHOWN_WITHIN_MS, (told, shown_at)
    prompt = dialog.get_attribute("data-prompt")
    buttons = [b.inner_text() for b in dialog.query_selector_all("button")]
    assert buttons[0] in ("Allow", "Yes"), buttons  # told by the hook, or the options as drawn
    picture(page, "web-dialog", repo.parent)

    dialog.query_selector_all("button")[0].click()
    page.wait_for_selector("#notice .ok", timeout=TURN * 1000)
    assert "builder" in page.inner_text("#notice")
    page.wait_for_selector('tr.agent[data-agent="builder"][data-state="complete"]', timeout=TURN * 1000)
    assert (repo / ".ib" / "agents" / "builder" / "repo" / "built.txt").exists()
    settings = json.loads((repo / ".ib" / "agents" / "builder" / "settings.json").read_text())
    hooks = [h["command"] for on in settings["hooks"].values() for group in on for h in group["hooks"]]
    assert hooks and all(c.startswith(f"{installed_wheel.ib} hook ") for c in hooks), hooks
    assert page.query_selector('#dialogs .dialog[data-agent="builder"]') is None
    assert "complete" in page.inner_text("#event-list")

    csrf = page.get_attribute("body", "data-csrf") or ""
    again = httpx.post(
        web.base + "/act",
        headers={**web.cookie, "origin": web.base},
        data={"csrf": csrf, "agent": "builder", "prompt": prompt or "", "choice": "approve"},
        timeout=TURN,
    )
    assert again.status_code == 200 and "that dialog of builder was already answered" in again.text
