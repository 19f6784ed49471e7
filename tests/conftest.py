"""The fixtures every test folder shares, each defined once: the bus (a real Redis, a namespace of its own
per test, scrubbed afterwards), `ib` on a temporary repository with fake or real Claude Code agents in the
test's own tmux server, the fake Bot API with `ib bot` and `ib worker` as processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from hypothesis import settings

from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.bot_process import SCALE, BotProcess, Worker, bot_env, worker_running
from tests.cli import IbRunner, init_repo
from tests.fake_anthropic import FakeAnthropic, claude_binary, client_env, write_home
from tests.fake_anthropic.client import ClaudeMissing
from tests.fake_gemini.client import MODEL as GEMINI_MODEL
from tests.fake_gemini.client import GeminiMissing, gemini_binary
from tests.fake_gemini.client import client_env as gemini_env
from tests.fake_gemini.server import FakeGemini
from tests.fake_openai import API_KEY as OPENAI_KEY
from tests.fake_openai import FakeOpenAI, codex_binary, write_codex_home
from tests.fake_openai.client import KEY_VARIABLE, CodexMissing
from tests.fake_telegram import FakeTelegram
from tests.schedule import spread, weight
from tests.wheel import Installed, installed_once

REDIS_URL = os.environ.get("IB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

# Hypothesis fails an example that takes over 200 ms by default: a deadline of the machine's load, not of
# the code (a property test failed so on two busy cores). Speed is measured in bench/, never asserted.
settings.register_profile("ittybus", deadline=None)
settings.load_profile("ittybus")

# A shell without job control starts background commands with SIGINT ignored, and an ignored signal stays
# ignored in every child: the `ib` processes the tests stop with SIGINT (as Ctrl-C would) would never hear
# it. Tests start their children the way a terminal does.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_telegram(**options): the options of the test's fake Bot API (FakeTelegram's keywords); "
        f"without it: time_scale={SCALE}",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long tests first, spread over the test processes (tests/schedule.py says why)."""
    processes = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = spread(
        items, lambda item: weight(str(item.path), {m.name for m in item.iter_markers()}), processes
    )


# --- the bus --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_url() -> str:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as e:  # the test command starts one; say so when it did not
        pytest.fail(f"no Redis at {REDIS_URL} ({e}); run the tests with .ci/run or start redis-server")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture
def namespace() -> str:
    return f"ibtest:{uuid.uuid4().hex[:10]}:"


@pytest.fixture
def keys(namespace: str) -> Keys:
    return Keys(namespace)


@pytest.fixture
def rds(redis_url: str, namespace: str) -> Iterator[redis.Redis]:
    """A client for assertions; every key of the test's namespace is deleted afterwards."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    batch = list(client.scan_iter(match=namespace.replace("[", "\\[").replace("]", "\\]") + "*", count=1000))
    for i in range(0, len(batch), 500):
        client.delete(*batch[i : i + 500])
    client.close()


@pytest.fixture
def store(rds: redis.Redis, keys: Keys) -> TaskStore:
    """The task graph in-process, on the test's namespace."""
    return TaskStore(rds, keys, events_maxlen=10_000)


# --- `ib` and its agents --------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


@pytest.fixture
def ib(repo: Path, tmp_path: Path, redis_url: str, namespace: str, rds: object) -> IbRunner:
    """`ib` on the shared test Redis in the test's namespace (the `rds` fixture scrubs it afterwards)."""
    return IbRunner(
        repo,
        {"IB_REDIS_URL": redis_url, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path / "spool")},
    )


@pytest.fixture
def tmux_socket() -> Iterator[str]:
    """A tmux server of the test's own; killed (and its socket file removed) afterwards."""
    name = f"ibtest-{uuid.uuid4().hex[:10]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False)
    socket_file = Path(f"/tmp/tmux-{os.getuid()}") / name
    socket_file.unlink(missing_ok=True)


@pytest.fixture
def agents_ib(ib: IbRunner, tmux_socket: str, tmp_path: Path) -> IbRunner:
    """`ib` whose agents are fake agents in the test's own tmux server."""
    ib.env.update(
        {
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_AGENT_COMMAND": f"{sys.executable} -m worker.fake.agent",
            "IB_FAKE_TRANSCRIPT_DIR": str(tmp_path / "transcripts"),
            "IB_FAKE_RECEIVED": str(tmp_path / "received.txt"),
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
            "IB_SEND_DELAY": "0.05",
        }
    )
    return ib


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    """The scripted Messages API on loopback; streams still held at the end are released."""
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def claude_bin() -> Path:
    """The pinned real Claude Code CLI; a missing one fails the test (the test command installs it)."""
    try:
        return claude_binary()
    except ClaudeMissing as e:
        pytest.fail(str(e))


@pytest.fixture
def claude_ib(
    ib: IbRunner, tmux_socket: str, tmp_path: Path, repo: Path, anthropic: FakeAnthropic, claude_bin: Path
) -> IbRunner:
    """`ib` whose agents are the real Claude Code CLI, offline against `anthropic`, in the test's own tmux
    server, with a private HOME that trusts the test repository (and so the agents' worktrees in it)."""
    home = write_home(tmp_path / "home", [repo])
    ib.unset_prefixes = ("IB_", "ANTHROPIC_", "CLAUDE")  # nothing of an outer Claude session leaks in
    ib.env.update(
        {
            **client_env(anthropic.base_url, home),
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_AGENT_COMMAND": str(claude_bin),
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
        }
    )
    return ib


@pytest.fixture(scope="session")
def installed_wheel(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """ittybus built and installed from its wheel (with the `web` extra) into a fresh virtual environment,
    once per test run: the test processes (xdist's workers, each with a folder of its own in the run's
    temporary folder) share one in that run's folder (tests/wheel.py)."""
    run_folder = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        run_folder = run_folder.parent
    return installed_once(run_folder / "installed-wheel")


@pytest.fixture
def openai() -> Iterator[FakeOpenAI]:
    """The scripted Responses API on loopback; streams still held at the end are released."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def codex_ib(ib: IbRunner, tmux_socket: str, tmp_path: Path, openai: FakeOpenAI) -> IbRunner:
    """`ib` whose agents are the real Codex CLI (`--cli codex`), offline against `openai`, in the test's
    own tmux server. The person's CODEX_HOME names the stand-in as its provider (each agent's own home
    starts from it); the stand-in's key reaches agents through IB_AGENT_ENV."""
    try:
        codex = codex_binary()
    except CodexMissing as e:
        pytest.fail(str(e))
    home = write_codex_home(tmp_path / "person-codex-home", openai.base_url, [])
    person = tmp_path / "person"  # the agents' login shells read its (empty) profile, not the machine's
    person.mkdir(exist_ok=True)
    ib.unset_prefixes = ("IB_", "CODEX_", "OPENAI_")
    ib.env.update(
        {
            "HOME": str(person),
            "CODEX_HOME": str(home),
            KEY_VARIABLE: OPENAI_KEY,
            "IB_AGENT_ENV": KEY_VARIABLE,
            "IB_DEFAULT_CLI": "codex",  # the setting `--cli` defaults to
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
            "PATH": f"{codex.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        }
    )
    return ib


@pytest.fixture
def codex_worker(codex_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker` for the real Codex CLI agents: its relay runs their hooks and notify (their box holds no
    bus address), its pane watcher reads their screens."""
    with worker_running(codex_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    """The scripted Gemini API on loopback; streams still held at the end are released."""
    with FakeGemini() as fake:
        yield fake


@pytest.fixture
def gemini_ib(ib: IbRunner, tmux_socket: str, tmp_path: Path, gemini: FakeGemini) -> IbRunner:
    """`ib` whose agents are the real Gemini CLI (`--cli gemini`) against `gemini`, in the test's own tmux
    server. One model for the agents: Gemini CLI's default ("Auto") first asks a router model the
    stand-in does not play."""
    try:
        gemini_binary()
    except GeminiMissing as e:
        pytest.fail(str(e))
    ib.unset_prefixes = ("IB_", "GEMINI_", "GOOGLE_")
    home = tmp_path / "person"
    home.mkdir()
    ib.env.update(
        {
            **gemini_env(gemini.base_url, home),
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
            "IB_MODEL": GEMINI_MODEL,
        }
    )
    return ib


# --- Telegram: the fake Bot API, `ib bot`, and `ib worker` for the bot to talk to -------------------------


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeTelegram]:
    """The fake Bot API on loopback. A module or test gives its options with
    `@pytest.mark.fake_telegram(limits=False)` (FakeTelegram's keywords); without: its clock SCALE times
    faster, as `bot_env` tells the bot."""
    mark = request.node.get_closest_marker("fake_telegram")
    options = mark.kwargs if mark is not None else {"time_scale": SCALE}
    with FakeTelegram(**options) as server:
        yield server


@pytest.fixture
def bot(ib: IbRunner, fake: FakeTelegram, tmp_path: Path) -> Iterator[BotProcess]:
    """`ib bot` against `fake`, started by the test (`bot.start()`); stopped afterwards, its log printed."""
    run = BotProcess(ib, fake, tmp_path / "bot.log", bot_env(fake))
    yield run
    run.stop()
    print(run.log.read_text() if run.log.exists() else "(no bot log)")


@pytest.fixture
def running_worker(agents_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker` with fake agents, up once its heartbeat is on the bus; stopped afterwards, log printed."""
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running
