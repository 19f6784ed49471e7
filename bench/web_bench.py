"""`ib web` (issue 35's figures): an event on the bus → visible in Chromium, p50/p99; the first paint of the
page with 1,000 agents; the server's CPU with 20 open streams and 100 events/s; a page's JavaScript heap
before and after thousands of events.

    .venv/bin/python -m bench.web_bench [--runs 200] [--agents 1000] [--seconds 20] [--events 6000]

Debian's Chromium driven by Playwright (headless), `ib web` as a process on a scratch namespace of the
shared Redis. Visible means: the page's own script put the event's line into the list (a MutationObserver,
injected by the browser, notes the time); the wait is from just before the publish to that time, one clock.
A dialog visible: from the `permission` event to the dialog's box on the page (`data-shown-at`).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import redis
from playwright.sync_api import Browser, Page, sync_playwright

from bench.common import IB, REDIS_URL, cpu_seconds, ib_env, scratch_namespace, summary_ms
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.prompts import PromptStore
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys

CHROMIUM = "/usr/bin/chromium"
OBSERVE = """
window.__seen = {};
new MutationObserver(function (changes) {
  const now = performance.timeOrigin + performance.now();
  for (const change of changes) for (const node of change.addedNodes) {
    const id = node.dataset && node.dataset.id;
    if (id && !(id in window.__seen)) window.__seen[id] = now;
  }
}).observe(document, {childList: true, subtree: true});
"""


@contextmanager
def web_site() -> Iterator[tuple[redis.Redis, Keys, Browser, str, int]]:
    """`ib web` on a scratch namespace and a headless Chromium to open it: (a client of that bus, its keys,
    the browser, the address `ib web` printed, its pid)."""
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as scratch, sync_playwright() as pw:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--enable-precise-memory-info", "--js-flags=--expose-gc"]
        )
        env = ib_env(namespace, str(Path(scratch) / "spool"))
        try:
            with web_running(env, Path(scratch) / "repo") as (address, pid):
                yield client, Keys(namespace), browser, address, pid
        finally:
            browser.close()
            client.close()


@contextmanager
def web_running(env: dict[str, str], folder: Path) -> Iterator[tuple[str, int]]:
    """`ib web` on the scratch namespace: (its address with the token, its pid)."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    proc = subprocess.Popen([IB, "web"], env=env, cwd=folder, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    try:
        yield address, proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def event_to_visible(page: Page, client: redis.Redis, keys: Keys, runs: int) -> list[float]:
    waits = []
    for n in range(runs):
        before = time.time()
        entry = publish(client, keys, make_event("message", f"bench {n}", agent="bench"), 100_000)
        page.wait_for_selector(f'li[data-id="{entry}"]', state="attached", timeout=10_000)
        seen = cast(float, page.evaluate(f"() => window.__seen['{entry}']"))
        waits.append(seen / 1000 - before)
        time.sleep(0.02)
    return waits


def dialog_to_visible(page: Page, client: redis.Redis, keys: Keys, runs: int) -> list[float]:
    agents, prompts = AgentStore(client, keys), PromptStore(client, keys)
    agents.save(Agent(id="asker", worker="w1", state="running"))
    waits = []
    for _ in range(runs):
        prompt = prompts.record("asker", "permission", "ls", (), tool="Bash", question="Proceed?")
        assert prompt is not None
        before = time.time()
        publish(client, keys, make_event("permission", "asker asks", agent="asker"), 100_000)
        box = page.wait_for_selector(f'.dialog[data-prompt="{prompt.id}"]', timeout=10_000)
        assert box is not None
        waits.append(int(box.get_attribute("data-shown-at") or 0) / 1000 - before)
        prompts.clear("asker", prompt.id)
    return waits


def crowd(client: redis.Redis, keys: Keys, count: int) -> None:
    """`count` agents (a manager per 10 workers), one in 20 with an open dialog."""
    agents, prompts = AgentStore(client, keys), PromptStore(client, keys)
    now = time.time()
    for n in range(count):
        manager = "" if n % 10 == 0 else f"agent-{n - n % 10}"
        agents.save(
            Agent(
                id=f"agent-{n}",
                manager=manager,
                worker="w1",
                state="running",
                created_at=now - n,
                goal=f"goal number {n} with some words to draw",
            )
        )
        if n % 20 == 0:
            prompts.record(f"agent-{n}", "permission", f"make test {n}", (), tool="Bash", question="Proceed?")


def first_paint(page: Page, address: str, runs: int) -> tuple[list[float], list[float]]:
    """First contentful paint and the load event, from navigation start, of `runs` loads."""
    paints, loads = [], []
    for _ in range(runs):
        page.goto(address.split("/?", maxsplit=1)[0] + "/", wait_until="load")
        timing = cast(
            dict[str, Any],
            page.evaluate(
                "() => ({fcp: performance.getEntriesByName('first-contentful-paint')[0].startTime,"
                " load: performance.getEntriesByType('navigation')[0].loadEventEnd})"
            ),
        )
        paints.append(timing["fcp"] / 1000)
        loads.append(timing["load"] / 1000)
    return paints, loads


def server_cpu(
    base: str,
    cookie: dict[str, str],
    pid: int,
    client: redis.Redis,
    keys: Keys,
    pages: int,
    rate: int,
    seconds: float,
) -> tuple[float, int]:
    """CPU share of `ib web` while `pages` streams are open and `rate` events a second are published, and
    the frames the streams got."""
    stop = threading.Event()
    got = [0] * pages

    def read(index: int) -> None:
        with httpx.stream("GET", base + "/stream", headers=cookie, timeout=None) as stream:
            for line in stream.iter_lines():
                if line.startswith("event: log"):
                    got[index] += 1
                if stop.is_set():
                    return

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(pages)]
    for reader in readers:
        reader.start()
    time.sleep(1.0)
    start_cpu, start = cpu_seconds(pid), time.monotonic()
    sent = 0
    while time.monotonic() - start < seconds:
        publish(client, keys, make_event("message", f"load {sent}", agent="bench"), 100_000)
        sent += 1
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
    used = cpu_seconds(pid) - start_cpu
    elapsed = time.monotonic() - start
    stop.set()
    publish(client, keys, make_event("message", "last"), 100_000)
    return used / elapsed, sum(got)


def heap(page: Page) -> float:
    page.evaluate("() => { if (window.gc) window.gc(); }")
    return cast(float, page.evaluate("() => performance.memory.usedJSHeapSize")) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--events", type=int, default=6000)
    args = parser.parse_args()
    with web_site() as (client, keys, browser, address, pid):
        base = address.split("/?")[0]
        token = address.split("?t=")[1]
        cookie = {"cookie": f"ib_web_{base.rsplit(':', 1)[1]}={token}"}
        page = browser.new_page()
        page.add_init_script(OBSERVE)
        page.goto(address)
        page.wait_for_selector("#bus[data-up=yes]")
        print(f"== event on the bus → its line on the page ({args.runs} events)")
        print("  event → visible    ", summary_ms(event_to_visible(page, client, keys, args.runs)))
        print(f"== permission event → its dialog on the page ({args.runs // 4} dialogs)")
        print("  dialog → visible   ", summary_ms(dialog_to_visible(page, client, keys, args.runs // 4)))
        crowd(client, keys, args.agents)
        served = []
        for _ in range(10):
            begun = time.perf_counter()
            httpx.get(base + "/", headers=cookie).raise_for_status()
            served.append(time.perf_counter() - begun)
        paints, loads = first_paint(page, address, 10)
        print(f"== the page with {args.agents} agents ({args.agents // 20} dialogs open), 10 loads")
        print("  server: GET /      ", summary_ms(served))
        print("  first paint        ", summary_ms(paints))
        print("  load event         ", summary_ms(loads))
        for n in range(args.agents):
            AgentStore(client, keys).remove(f"agent-{n}")
            PromptStore(client, keys).clear(f"agent-{n}")
        share, frames = server_cpu(base, cookie, pid, client, keys, 20, 100, args.seconds)
        print(f"== ib web's CPU, 20 open streams, 100 events/s for {args.seconds:g} s")
        print(f"  CPU {share * 100:.1f} % of one core; {frames} event frames sent")
        page.goto(base + "/")
        page.wait_for_selector("#event-list")
        before = heap(page)
        for n in range(args.events):
            publish(client, keys, make_event("message", f"flood {n} " + "x" * 80, agent="bench"), 100_000)
            if n % 500 == 0:
                time.sleep(0.2)
        last = publish(client, keys, make_event("message", "the last"), 100_000)
        page.wait_for_selector(f'li[data-id="{last}"]', state="attached", timeout=60_000)
        after = heap(page)
        shown = cast(int, page.evaluate("() => document.querySelectorAll('#event-list li').length"))
        print(f"== a page's JavaScript heap before and after {args.events} events")
        print(f"  {before:.1f} MB → {after:.1f} MB; lines kept {shown}")


if __name__ == "__main__":
    main()
