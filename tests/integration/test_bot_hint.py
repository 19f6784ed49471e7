"""Every place that says how to add the Telegram bot names every setting `ib bot` refuses to start without:
`ib up`, `ib ps` and the dashboard (the repository's embedded bus, no Telegram settings)."""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import Embedded
from tests.cli import IbRunner
from tests.waiting import retry_until


@pytest.fixture
def local(ib: IbRunner, repo: Path) -> Iterator[IbRunner]:
    runner = IbRunner(repo, {k: v for k, v in ib.env.items() if k != "IB_REDIS_URL"})
    yield runner
    runner.run("down", timeout=60)
    Embedded(str(repo)).stop()


def settings_named(text: str) -> set[str]:
    return set(re.findall(r"IB_TELEGRAM_[A-Z_]+", text))


def names_each(text: str, required: set[str]) -> bool:
    """Each setting by its full name, or after the first by its tail (`_CHAT_ID`) where room is short."""
    return all(name.removeprefix("IB_TELEGRAM") in text for name in required) and "IB_TELEGRAM_" in text


def test_the_bot_hints_name_every_setting_ib_bot_requires(local: IbRunner) -> None:
    refused = local.run("bot")
    assert refused.returncode == 1
    required = settings_named(refused.stderr)
    assert "IB_TELEGRAM_ALLOWED_USERS" in required and len(required) == 3

    up = local.run("up", "--detach")
    assert up.returncode == 0, up.stderr
    (hint,) = [line for line in up.stdout.splitlines() if "bot: off" in line]
    assert names_each(hint, required)

    (note,) = [line for line in local.run("ps").stdout.splitlines() if line.startswith("bot: ")]
    assert names_each(note, required)

    watch = local.popen("watch", "--plain")
    out: list[str] = []
    assert watch.stdout is not None
    lines = watch.stdout
    threading.Thread(target=lambda: out.extend(iter(lines.readline, "")), daemon=True).start()
    try:
        # once the worker `ib up` started has its heartbeat: before, its longer "no heartbeat" takes the room
        retry_until(lambda: _services(out), what="the dashboard's services line with the worker up")
    finally:
        watch.send_signal(signal.SIGINT)
        watch.wait(timeout=10)
    services = _services(out)[-1]
    assert names_each(services, required) and "…" not in services


def _services(out: list[str]) -> list[str]:
    """The dashboard's services lines that show the bot off beside a worker with its heartbeat."""
    return [line for line in list(out) if "bot off" in line and "no heartbeat" not in line]
