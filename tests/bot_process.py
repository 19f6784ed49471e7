"""`ib bot` and `ib worker` run as processes for the bot tests, against the fake Bot API and the test's bus.

The fake's clock runs SCALE times faster and the bot's limits are scaled to match, so a minute of
Telegram's rate limits passes in three seconds.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.waiting import retry_until

USER = 4242  # the person allowed to talk to the bot
SCALE = 20.0
STARTING = 90.0  # a hang guard: at load 12 the bot took 20 s to import and load before it polled
STOPPING = 30.0  # seconds a signalled bot has to end


@dataclass
class BotProcess:
    """`ib bot` against the fake, with the test's bus; its log goes to a file (printed when a test fails)."""

    ib: IbRunner
    fake: FakeTelegram
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        polls = self.fake.calls("getUpdates")
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [self.ib.program, "bot", "-v"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.ib.environ({**self.env, "PYTHONFAULTHANDLER": "1"}),  # stacks on SIGABRT: see stop()
                cwd=self.ib.cwd,
            )
        proc = self.proc

        def polling() -> bool:
            return self.fake.calls("getUpdates") > polls or proc.poll() is not None

        retry_until(polling, STARTING, 0.02, "polling")
        assert proc.poll() is None, self.log.read_text()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(STOPPING)
            except subprocess.TimeoutExpired:
                # a bot that will not end (once beside stress-ng, after "Application.stop() complete"):
                # SIGABRT makes Python's fault handler write every thread's stack into its log
                self.proc.send_signal(signal.SIGABRT)
                self.proc.wait(10)
                raise AssertionError(
                    f"ib bot did not end within {STOPPING:.0f} s of signal {sig}:\n{self.log.read_text()}"
                ) from None
        self.proc = None


def bot_env(fake: FakeTelegram, scale: float = SCALE) -> dict[str, str]:
    """The settings that point `ib bot` at the fake, with USER allowed."""
    return {
        "IB_TELEGRAM_TOKEN": fake.token,
        "IB_TELEGRAM_CHAT_ID": str(fake.chat_id),
        "IB_TELEGRAM_ALLOWED_USERS": f"{USER},1234",
        "IB_TELEGRAM_API_URL": fake.base_url,
        "IB_TELEGRAM_TIME_SCALE": str(scale),
    }


@dataclass
class Worker:
    """`ib worker` running for the test, its output in `log`."""

    proc: subprocess.Popen[bytes]
    log: Path


@contextlib.contextmanager
def worker_running(runner: IbRunner, log: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker -v` for `runner`'s repository, up once its heartbeat is on the bus; stopped after, its log
    printed."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [runner.program, "worker", "-v"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=runner.environ(),
            cwd=runner.cwd,
        )
    worker_id = runner.env["IB_WORKER_ID"]
    retry_until(lambda: rds.exists(keys.worker(worker_id)) or proc.poll() is not None, 30, 0.05, "the worker")
    assert proc.poll() is None, log.read_text()
    try:
        yield Worker(proc, log)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        print(log.read_text())
