"""`ib web` left open (issue 35's figures): a page's memory over a long run of events, and the server's CPU
with real browser pages open rather than bare streams.

    .venv/bin/python -m bench.web_soak_bench [--minutes 60] [--rate 5] [--pages 20] [--burst-rate 100]

First `--pages` Chromium pages (one headless browser, Debian's) stay open on the page while `--burst-rate`
events a second are published for 20 s: the CPU share of `ib web` and of the browser. Then one page stays
open for `--minutes` while `--rate` events a second arrive — messages, state changes of 50 agents, a dialog
opened and answered every 30 s — and its JavaScript heap (after a forced GC), its DOM node count and the
server's resident memory are printed every 5 minutes: the page should hold steady.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import cast

import redis
from playwright.sync_api import Page

from bench.common import cpu_seconds
from bench.web_bench import heap, web_site
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.prompts import PromptStore
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys

STATES = ("running", "waiting", "running", "complete")
REPORT_EVERY_S = 300.0
BURST_S = 20.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def browser_pids() -> list[int]:
    """The headless Chromium processes running (the one Playwright started and its helpers)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"chromium" in command and b"--headless" in command:
            found.append(int(entry))
    return found


def _row(elapsed: float, sent: int, page: Page, pid: int, note: str = "") -> None:
    line = f"  {elapsed / 60:6.1f}  {sent:6d}  {heap(page):5.1f} MB  {nodes(page):9d}  {rss_mb(pid):6.1f} MB"
    print(line + note, flush=True)


def nodes(page: Page) -> int:
    return cast(int, page.evaluate("() => document.getElementsByTagName('*').length"))


def pages_cpu(pages: list[Page], address: str, pid: int, client: redis.Redis, keys: Keys, rate: int) -> None:
    for page in pages:
        page.goto(address)
        page.wait_for_selector("#bus[data-up=yes]")
    chromium = browser_pids()
    time.sleep(1.0)
    server0, browser0, start = cpu_seconds(pid), sum(cpu_seconds(p) for p in chromium), time.monotonic()
    sent = 0
    while time.monotonic() - start < BURST_S:
        publish(client, keys, make_event("message", f"load {sent}", agent="bench"), 100_000)
        sent += 1
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
    last = publish(client, keys, make_event("message", "the last of the burst", agent="bench"), 100_000)
    for page in pages:
        page.wait_for_selector(f'li[data-id="{last}"]', state="attached", timeout=60_000)
    elapsed = time.monotonic() - start
    server = (cpu_seconds(pid) - server0) / elapsed
    browser = (sum(cpu_seconds(p) for p in chromium if Path(f"/proc/{p}").exists()) - browser0) / elapsed
    print(f"== {len(pages)} Chromium pages open, {rate} events/s for {BURST_S:g} s")
    print(f"  {sent} events sent in {elapsed:.1f} s; each page showed the last")
    print(f"  ib web: CPU {server * 100:.1f} % of one core; the browser: {browser * 100:.1f} %")


def soak(
    page: Page, address: str, pid: int, client: redis.Redis, keys: Keys, minutes: float, rate: float
) -> None:
    agents, prompts = AgentStore(client, keys), PromptStore(client, keys)
    for n in range(50):
        agents.save(Agent(id=f"soak-{n}", worker="w1", state="running", goal=f"soak goal {n}"))
    page.goto(address)
    page.wait_for_selector("#bus[data-up=yes]")
    what = "messages, states of 50 agents, a dialog every 30 s"
    print(f"== one page open for {minutes:g} min, {rate:g} events/s ({what})")
    print("  minute  events  JS heap   DOM nodes  ib web RSS")
    start = time.monotonic()
    sent, next_report, open_prompt = 0, 0.0, None
    while (elapsed := time.monotonic() - start) < minutes * 60:
        if elapsed >= next_report:
            _row(elapsed, sent, page, pid)
            next_report += REPORT_EVERY_S
        agent = f"soak-{sent % 50}"
        if sent % int(rate * 30) == 0:
            if open_prompt is not None:
                prompts.clear("soak-0", open_prompt)
                publish(
                    client,
                    keys,
                    make_event("state", "soak-0 running", agent="soak-0", data={"state": "running"}),
                    100_000,
                )
            prompt = prompts.record(
                "soak-0", "permission", f"make {sent}", (), tool="Bash", question="Proceed?"
            )
            open_prompt = prompt.id if prompt else None
            publish(client, keys, make_event("permission", "soak-0 asks", agent="soak-0"), 100_000)
        elif sent % 3 == 0:
            state = STATES[(sent // 3) % len(STATES)]
            agents.save(Agent(id=agent, worker="w1", state=state, goal=f"soak goal {agent}"))
            publish(
                client,
                keys,
                make_event("state", f"{agent} {state}", agent=agent, data={"state": state}),
                100_000,
            )
        else:
            publish(client, keys, make_event("message", f"soak {sent} " + "y" * 120, agent=agent), 100_000)
        sent += 1
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
    last = publish(client, keys, make_event("message", "the last of the soak"), 100_000)
    page.wait_for_selector(f'li[data-id="{last}"]', state="attached", timeout=60_000)
    elapsed = time.monotonic() - start
    _row(elapsed, sent, page, pid, " (end)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=5.0)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--burst-rate", type=int, default=100)
    args = parser.parse_args()
    with web_site() as (client, keys, browser, address, pid):
        pages = [browser.new_page() for _ in range(args.pages)]
        pages_cpu(pages, address, pid, client, keys, args.burst_rate)
        for page in pages[1:]:
            page.close()
        soak(pages[0], address, pid, client, keys, args.minutes, args.rate)


if __name__ == "__main__":
    main()
