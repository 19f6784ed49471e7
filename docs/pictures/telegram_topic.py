"""The README's picture of an agent's topic in Telegram (docs/img/telegram-topic.png), drawn from what the bot
really sent. One scenario runs as tests/integration/test_bot_claude.py's allowed command does: the pinned
Claude Code, offline against the scripted Messages API, asks to run a command; its worker and `ib bot`
(against the fake Bot API) show the dialog in the agent's topic with its buttons; the first button is tapped;
the command runs and the turn ends. The topic's messages are then written as a screen
(docs.pictures.topic_screen), each with the buttons it carried, and painted by the screenshot code of
`ib look --png`.

    .venv/bin/python -m docs.pictures.telegram_topic [--out PNG]

About 15 s. It needs what the tests need (tmux, git, the dev extras' Claude Code) and starts a Redis
server of its own in a scratch folder, removed afterwards (kept, with the logs, when the run fails).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import redis

from bus.wire.keys import Keys
from docs.pictures.topic_screen import Shown, topic_screen
from tests.bot_process import SCALE, USER, BotProcess, bot_env, worker_running
from tests.cli import IbRunner, init_repo
from tests.fake_anthropic import FakeAnthropic, bash, claude_binary, client_env, reply, write_home
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, settled, wait_agent_topic, wait_shown
from tests.reads import pane_text
from tests.redis_server import RedisServer
from tests.waiting import retry_until
from worker.tmux.screenshot import render_png

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "img" / "telegram-topic.png"
PROJECT, AGENT, GOAL = "shop", "totals", "make checkout totals exact"
COMMAND = "python3 -c 'print(0.10 + 0.20)'; echo \"exit=$?\""  # `$?` cannot be checked first: it asks
TURN = 120.0  # a cold CLI's turn through the bot, on a busy machine
WIDTH = 84
NAMESPACE = "ib:"
NOTE = "a forum topic, as the bot wrote it"
AUTHOR = "ittybus bot"


def script(anthropic: FakeAnthropic) -> None:
    """The model's two turns: a command that needs the person's yes, then the end of the goal."""
    anthropic.script(
        reply("Totals are floats. First, what two prices add up to:", bash(COMMAND, "Add two prices")),
        reply(
            "It printed 0.30000000000000004: a float cannot hold cents exactly, so the totals need "
            "Decimal.\n\nI HAVE COMPLETED THE GOAL"
        ),
    )


@contextlib.contextmanager
def bus(scratch: Path) -> Iterator[str]:
    """A Redis server of the run's own; its URL."""
    server = RedisServer(scratch / "redis").start()
    try:
        yield server.url
    finally:
        server.stop()


@contextlib.contextmanager
def tmux_server() -> Iterator[str]:
    """A tmux server of the run's own (its agents' sessions); killed afterwards."""
    name = f"ib-pictures-{uuid.uuid4().hex[:8]}"
    try:
        yield name
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False)


def runner(scratch: Path, url: str, anthropic: FakeAnthropic, socket: str) -> IbRunner:
    """`ib` in a fresh repository named PROJECT, its agents the real Claude Code against `anthropic`."""
    repo = init_repo(scratch / PROJECT)
    home = write_home(scratch / "home", [repo])
    env = {
        "IB_REDIS_URL": url,
        "IB_NAMESPACE": NAMESPACE,
        "IB_SPOOL_DIR": str(scratch / "spool"),
        "IB_WARM": "0",  # no `ib` server left running after the picture
        **client_env(anthropic.base_url, home),
        "IB_TMUX_SOCKET": socket,
        "IB_AGENT_COMMAND": str(claude_binary()),
        "IB_WORKER_ID": "pictures",
    }
    return IbRunner(repo, env, unset_prefixes=("IB_", "ANTHROPIC_", "CLAUDE"))


def record_topic(scratch: Path) -> tuple[str, list[Shown]]:
    """Run the scenario; the agent topic's name and its messages as the person saw them, the scratch folder
    written as `~` (the repository shows as ~/shop, not as a new temporary folder each run)."""
    with contextlib.ExitStack() as stack:
        anthropic = stack.enter_context(FakeAnthropic())
        fake = stack.enter_context(FakeTelegram(time_scale=SCALE))
        url = stack.enter_context(bus(scratch))
        socket = stack.enter_context(tmux_server())
        stack.enter_context(contextlib.redirect_stdout(stack.enter_context((scratch / "run.log").open("w"))))
        rds = stack.enter_context(redis.Redis.from_url(url, decode_responses=True))
        keys = Keys(NAMESPACE)
        ib = runner(scratch, url, anthropic, socket)
        script(anthropic)
        stack.enter_context(worker_running(ib, scratch / "worker.log", rds, keys))
        bot = BotProcess(ib, fake, scratch / "bot.log", bot_env(fake))
        stack.callback(bot.stop)
        topic, dialog = ask_and_allow(ib, bot, fake)
        retry_until(Steady(lambda: _seen(fake, topic)), TURN, 0.5, "the topic at rest")
        settled(rds, keys)
        results = [r for request in anthropic.turns_taken() for r in request.tool_results()]
        if not results or "exit=0" not in str(results[-1]["content"]):
            raise RuntimeError(f"the command did not run as allowed: {results[-1:]}")
        name = next(t.name for t in fake.topics() if t.thread_id == topic)
        messages = [_shown(m, dialog) for m in bot_messages(fake, topic) if m.text or m.buttons]
    home = str(scratch)
    return name, [replace(m, text=m.text.replace(home, "~")) for m in messages]


def ask_and_allow(ib: IbRunner, bot: BotProcess, fake: FakeTelegram) -> tuple[int, FakeMessage]:
    """The agent started from the bot's side: its dialog shown with buttons, the first one tapped, the turn
    ended. The topic, and the dialog's message as it was before the tap."""
    bot.start()
    spawned = ib.run("new-agent", GOAL, "--name", AGENT)
    if spawned.returncode != 0:
        raise RuntimeError(f"ib new-agent failed: {spawned.stderr.strip()}")
    topic = wait_agent_topic(fake, AGENT, timeout=TURN)
    asks = f"🔐 {AGENT} asks to use Bash"
    wait_shown(fake, topic, asks, timeout=TURN)
    retry_until(lambda: "Do you want to proceed?" in pane_text(ib, AGENT, 60), TURN, 0.2, "the dialog drawn")
    dialog = next(m for m in bot_messages(fake, topic) if asks in m.text)
    dialog = retry_until(lambda: _with_buttons(fake, dialog.message_id), TURN, 0.1, "the dialog's buttons")
    fake.inject_callback(USER, dialog.message_id, dialog.buttons[0][0][1])
    wait_shown(fake, topic, f"✓ {AGENT} completed", timeout=TURN)
    return topic, dialog


def _with_buttons(fake: FakeTelegram, message_id: int) -> FakeMessage | None:
    message = fake.message(message_id)
    return message if message is not None and message.buttons else None


def _seen(fake: FakeTelegram, topic: int) -> list[tuple[str, list[list[tuple[str, str]]]]]:
    return [(m.text, m.buttons) for m in bot_messages(fake, topic)]


class Steady:
    """A check that holds once `read` has given the same answer for `seconds` (the bot's late edits in)."""

    def __init__(self, read: Callable[[], object], seconds: float = 3.0) -> None:
        self.read, self.seconds = read, seconds
        self.last: object = None
        self.since = time.monotonic()

    def __call__(self) -> bool:
        value = self.read()
        if value != self.last:
            self.last, self.since = value, time.monotonic()
        return time.monotonic() - self.since >= self.seconds


def _shown(message: FakeMessage, dialog: FakeMessage) -> Shown:
    """A message with its buttons; the dialog's as they were before the tap (the bot takes them away
    once answered), the tapped one marked."""
    if message.message_id != dialog.message_id or message.buttons:
        return Shown(message.text, tuple(tuple(label for label, _ in row) for row in message.buttons))
    rows = tuple(tuple(label for label, _ in row) for row in dialog.buttons)
    return Shown(message.text, rows, pressed=rows[0][0])


def paint(name: str, messages: list[Shown]) -> bytes:
    lines = topic_screen(name, NOTE, messages, AUTHOR, WIDTH)
    return render_png("\n".join(lines), WIDTH, len(lines))


def _removed(folder: Path) -> bool:
    shutil.rmtree(folder, ignore_errors=True)
    return not folder.exists()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.pictures.telegram_topic",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=OUT, help=f"the PNG to write (default: {OUT})")
    args = parser.parse_args(argv)
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no folder {args.out.parent} to write it in")
    scratch = Path(tempfile.mkdtemp(prefix="ib-pictures-"))  # its repository, Redis, HOME and logs
    try:
        name, messages = record_topic(scratch)
    except (AssertionError, RuntimeError, OSError) as e:
        print(f"telegram_topic: {e} (logs in {scratch})", file=sys.stderr)
        return 1
    png = paint(name, messages)
    args.out.write_bytes(png)
    # the agent's last hooks may still be writing there as its tmux server goes
    retry_until(lambda: _removed(scratch), 30, 0.2, f"{scratch} removed")
    print(f"{args.out}: {len(messages)} messages, {len(png):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
