"""`ib web` as a process for the tests: started on the test's bus, its address (with the token) read from
the first line it prints, stopped with SIGTERM; and a reader of its server-sent events over HTTP."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.cli import IbRunner

CHROMIUM = "/usr/bin/chromium"  # Debian's package (tests/run.sh installs it); Playwright downloads none


def chromium() -> Iterator[Browser]:
    """Headless Chromium from Debian's package, driven by Playwright."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no {CHROMIUM}: apt-get install chromium (tests/run.sh installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


PICTURES = "IB_WEB_PICTURES"  # a folder: the browser tests draw the page's main views into it (docs/img)


def picture(page: Page, name: str, scratch: Path) -> Path:
    """A screenshot of what `page` shows, in `scratch`; copied into $IB_WEB_PICTURES when it is set
    (`IB_WEB_PICTURES=docs/img pytest tests/integration/test_web_*.py` draws the docs' pictures)."""
    drawn = scratch / f"{name}.png"
    page.set_viewport_size({"width": 1100, "height": 640})
    page.screenshot(path=str(drawn))
    if folder := os.environ.get(PICTURES):
        shutil.copyfile(drawn, Path(folder) / drawn.name)
    return drawn


@dataclass
class WebProcess:
    """`ib web` for `ib`'s repository; its log goes to a file, printed when a test fails."""

    ib: IbRunner
    log: Path
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[str] | None = None
    address: str = ""

    def start(self, port: int = 0) -> str:
        """Start it (on `port`, else a free one) and return the address it printed."""
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                [self.ib.program, "web", "-v", *(("--port", str(port)) if port else ()), *self.args],
                stdout=subprocess.PIPE,
                stderr=out,
                text=True,
                env=self.ib.environ(self.env),
                cwd=self.ib.cwd,
            )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().strip()
        assert first.startswith("http"), f"ib web printed {first!r}; its log:\n{self.log.read_text()}"
        self.address = first
        return first

    @property
    def port(self) -> int:
        found = urlsplit(self.address).port
        assert found is not None
        return found

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return parse_qs(urlsplit(self.address).query)["t"][0]

    @property
    def cookie(self) -> dict[str, str]:
        return {"cookie": f"ib_web_{self.port}={self.token}"}

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
        self.proc = None


@dataclass(frozen=True)
class Frame:
    """One server-sent event as the browser's EventSource reads it."""

    id: str
    event: str
    data: str


def frames(response: httpx.Response) -> Iterator[Frame]:
    """The events of an open `text/event-stream` response, as they come (comments and `retry:` skipped)."""
    fields: dict[str, list[str]] = {}
    for line in response.iter_lines():
        if line == "":
            if "data" in fields:
                yield Frame(
                    "".join(fields.get("id", [])), "".join(fields.get("event", [])), "\n".join(fields["data"])
                )
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name, []).append(value.removeprefix(" "))
