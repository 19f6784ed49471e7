"""One bus, several machines: two workers (`wa`, `wb`), each with its own clone and tmux server, a Redis
that wants a user and a password, and a CLI host that also runs the bot against the fake Bot API.

The same scenario runs twice: over Linux network namespaces (tests/hosts.py: every host its own
network, joined by a bridge, 192.0.2.0/24), and with every host on this machine's loopback. From the
CLI host it spawns an agent on each worker, talks to both, answers a question from Telegram for the
agent on wb, runs `/auto --worktrees --on wa`, kills wb (its agents go `unreachable`, every command for
them is refused with when wb was last seen, nothing is half deleted), restarts it (they come back), and
counts that nothing was lost or doubled.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IB, git, init_repo
from tests.fake_telegram import FakeTelegram
from tests.hosts import REDIS_PORT, Host, Network, NoNamespaces, inside
from tests.streams import stream_entries
from tests.waiting import retry_until

USER = 4242
SCALE = 20.0
PASSWORD = "s3cret/with:odd@chars"
TTL = 5  # the workers' heartbeat: the least a worker uses
KEYS = Keys("ib:")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _quoted(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


@dataclass
class Cluster:
    """The machines of one run, the processes they run, and a Redis client for the test's checks."""

    tmp: Path
    hosts: dict[str, Host]
    rds: redis.Redis
    network: Network | None
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def log(self, name: str) -> Path:
        return self.tmp / f"{name}.log"

    def start_workers(self, *names: str) -> None:
        for name in names:
            self.procs[name] = self.hosts[name].start(self.log(name), IB, "worker", "-v")
        for name in names:
            proc = self.procs[name]
            retry_until(
                lambda: self.rds.exists(KEYS.worker(name)) or proc.poll() is not None,  # noqa: B023
                30,
                0.05,
                f"worker {name}",
            )
            assert proc.poll() is None, self.log(name).read_text()

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs.pop(name)
        if proc.poll() is None:
            proc.send_signal(sig)
            proc.wait(30)

    def received(self, host: str) -> str:
        path = self.tmp / host / "received.txt"
        return path.read_text() if path.exists() else ""

    def tmux_sessions(self, host: str) -> list[str]:
        done = subprocess.run(
            ["tmux", "-L", self.hosts[host].env["IB_TMUX_SOCKET"], "list-sessions", "-F", "#{session_name}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.split()

    def events(self, type_: str | None = None) -> list[dict[str, Any]]:
        out = [json.loads(fields["e"]) for _id, fields in stream_entries(self.rds, KEYS.events)]
        return [e for e in out if type_ is None or e["type"] == type_]


def _redis_server(host: Host, bind: str, port: int, tmp: Path) -> subprocess.Popen[bytes]:
    """Our own Redis (never the shared one): an ACL user with a password, the default user off."""
    return host.start(
        tmp / "redis.log",
        "redis-server",
        "--bind", bind, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(tmp),
        "--user", "default", "off",
        "--user", "ittybus", "on", f">{PASSWORD}", "~*", "&*", "+@all",
    )  # fmt: skip


def _cluster(tmp: Path, network: Network | None, stack: ExitStack) -> Cluster:
    def netns(name: str) -> str | None:
        return network.netns(name) if network else None

    if network:
        redis_host, port = network.address("redis"), REDIS_PORT
    else:
        redis_host, port = "127.0.0.1", _free_port()
    server = _redis_server(Host("redis", netns("redis"), tmp), redis_host, port, tmp)
    stack.callback(server.wait, 10)  # callbacks run last first: terminate, then wait
    stack.callback(server.terminate)
    url = f"redis://ittybus:{_quoted(PASSWORD)}@{redis_host}:{port}/0"
    origin = init_repo(tmp / "origin")
    hosts: dict[str, Host] = {}
    for name in ("wa", "wb", "cli"):
        home = tmp / name
        home.mkdir()
        env = {
            "IB_REDIS_URL": url,
            "IB_WORKER_ID": name,
            "IB_SPOOL_DIR": str(home / "spool"),
            "IB_HEARTBEAT_TTL": str(TTL),
            "IB_PANE_INTERVAL": "0.3",
        }
        cwd = home
        if name != "cli":
            git(tmp, "clone", "-q", str(origin), str(home / "repo"))
            for key, value in (("user.email", f"{name}@example.com"), ("user.name", name)):
                git(home / "repo", "config", key, value)
            cwd = home / "repo"
            socket_name = f"ibtest-{uuid.uuid4().hex[:8]}-{name}"
            stack.callback(
                subprocess.run, ["tmux", "-L", socket_name, "kill-server"], capture_output=True, check=False
            )
            env.update(
                {
                    "IB_TMUX_SOCKET": socket_name,
                    "IB_AGENT_COMMAND": f"{sys.executable} -m worker.fake.agent",
                    "IB_FAKE_TRANSCRIPT_DIR": str(home / "transcripts"),
                    "IB_FAKE_RECEIVED": str(home / "received.txt"),
                    "IB_SEND_DELAY": "0.05",
                }
            )
        hosts[name] = Host(name, netns(name), cwd, env)
    with inside(network.netns("cli")) if network else nullcontext():
        rds = redis.Redis.from_url(url, decode_responses=True, single_connection_client=True)
        retry_until(lambda: _answers(rds), 10, 0.05, "our Redis")
    stack.callback(rds.close)
    return Cluster(tmp, hosts, rds, network)


def _answers(rds: redis.Redis) -> bool:
    try:
        return bool(rds.ping())
    except redis.ConnectionError:
        return False


def _all(host: Host, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Several `ib` commands at once on one host (each is a process: in parallel they cost less)."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: host.ib(*args), commands))


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.args, done.stdout, done.stderr)
    return done.stdout


def _none_left(done: subprocess.CompletedProcess[str]) -> bool:
    """An empty JSON list printed by a command that succeeded (a `retry_until` check: never raises)."""
    return done.returncode == 0 and done.stdout.strip() == "[]"


def _refused(done: subprocess.CompletedProcess[str], *said: str) -> str:
    """A one-line error on stderr, exit 1, no traceback."""
    assert done.returncode == 1, (done.args, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for text in said:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def _state(c: Cluster, agent: str) -> str:
    return str(c.rds.hget(KEYS.agent(agent), "state") or "")


def _shown(fake: FakeTelegram, thread: int | None) -> str:
    return "\n".join(m.text for m in fake.messages(thread) if m.sender_id == fake.bot_id)


def _wait_shown(fake: FakeTelegram, thread: int | None, text: str, timeout: float = 30) -> None:
    retry_until(lambda: text in _shown(fake, thread), timeout, 0.05, f"{text!r} in topic {thread}")


def _topic(fake: FakeTelegram, agent: str) -> int:
    def find() -> int | None:
        return next((t.thread_id for t in fake.topics() if t.name.split(" [")[0] == agent), None)

    found = retry_until(find, 30, 0.05, f"the topic of {agent}")
    assert found is not None
    return found


_T0 = [time.monotonic()]


def _mark(phase: str) -> None:
    """Where the time goes (printed; shown with -s or when the test fails)."""
    now = time.monotonic()
    print(f"{now - _T0[0]:6.1f}s  {phase}")
    _T0[0] = now


def _scenario(c: Cluster, fake: FakeTelegram) -> None:
    cli, wa, wb = c.hosts["cli"], c.hosts["wa"], c.hosts["wb"]
    c.start_workers("wa", "wb")
    bot_env = {
        "IB_TELEGRAM_TOKEN": fake.token,
        "IB_TELEGRAM_CHAT_ID": str(fake.chat_id),
        "IB_TELEGRAM_ALLOWED_USERS": str(USER),
        "IB_TELEGRAM_API_URL": fake.base_url,
        "IB_TELEGRAM_TIME_SCALE": str(SCALE),
    }
    cli.env.update(bot_env)
    polls = fake.calls("getUpdates")
    c.procs["bot"] = cli.start(c.log("bot"), IB, "bot", "-v")
    retry_until(lambda: fake.calls("getUpdates") > polls, 30, 0.05, "the bot polling")

    _mark("an agent on each wor")
    # an agent on each worker, from the CLI host; one id can live on one worker only
    asking = "Help.\nfake: ask Which colour?\nfake: wait"
    made = _all(
        cli, ("new-agent", "--on", "wa", "--name", "ra", "Help.\nfake: wait"),
        ("new-agent", "--on", "wb", "--name", "rb", asking), ("new-agent", "--on", "w:b", "x"),
    )  # fmt: skip
    assert [_ok(m).strip() for m in made[:2]] == ["ra", "rb"]
    _refused(made[2], "bad worker id 'w:b'")
    _refused(cli.ib("new-agent", "--on", "wb", "--name", "ra", "again"), "already exists on worker 'wa'")
    assert "ra" in c.tmux_sessions("wa")[0] and "rb" in c.tmux_sessions("wb")[0]
    assert len(c.tmux_sessions("wa")) == len(c.tmux_sessions("wb")) == 1

    _mark("question from rb")
    # question from rb answered in Telegram, then text to both, read back from the CLI host
    rb_topic = _topic(fake, "rb")
    _wait_shown(fake, rb_topic, "❓ rb asks: Which colour?")
    question = next(m for m in fake.messages(rb_topic) if "❓" in m.text)
    fake.inject_message(USER, "Green", thread_id=rb_topic, reply_to=question.message_id)
    retry_until(lambda: "Green" in c.received("wb"), 30, 0.05, "the answer on wb")
    retry_until(lambda: _none_left(cli.ib("questions", "--json")), 10, 0.1, "acknowledged")
    retry_until(lambda: _state(c, "ra") == "waiting" and _state(c, "rb") == "waiting", 30, 0.1, "waiting")
    for done in _all(cli, ("send", "ra", "hello A"), ("send", "rb", "hello B")):
        _ok(done)
    retry_until(lambda: "hello A" in c.received("wa") and "hello B" in c.received("wb"), 30, 0.05, "texts")
    looked = _all(cli, ("look", "ra"), ("look", "rb"), ("status", "rb"))
    assert "hello A" in _ok(looked[0]) and "hello B" in _ok(looked[1]) and _ok(looked[2]).strip()

    _mark("/auto --worktrees")
    # /auto --worktrees on wa, from Telegram: the task's agent runs on wa and merges into wa's clone
    task = [
        "Write the auth notes.",
        "fake: write auth.txt jwt",
        "fake: commit auth notes",
        'fake: run ib task done auth --summary "JWT auth"',
        "fake: done",
    ]
    _ok(cli.ib("task", "add", "auth", "--id", "auth", "--project", "repo", "--body", "\n".join(task)))
    project = fake.create_topic("repo")
    fake.inject_message(USER, "/project repo", thread_id=project)
    _wait_shown(fake, project, "This is project repo's topic now")
    fake.inject_message(USER, "/auto --worktrees --on wa", thread_id=project)
    _wait_shown(fake, project, "Auto mode finished. 1/1 tasks done.", timeout=60)
    assert (wa.cwd / "auth.txt").read_text() == "jwt\n" and not (wb.cwd / "auth.txt").exists()

    _mark("wb dies")
    # wb dies: its agent goes unreachable (seen by wa and the bot), nothing is done to it half way
    retry_until(lambda: _state(c, "rb") == "waiting", 30, 0.1, "rb waiting")
    started = time.monotonic()
    c.kill("wb")
    retry_until(lambda: _state(c, "rb") == "unreachable", TTL + 5, 0.1, "rb unreachable")
    assert time.monotonic() - started < TTL + 4
    _wait_shown(fake, rb_topic, "rb: waiting → unreachable (worker wb stopped answering)")
    assert _state(c, "ra") == "waiting"
    c.rds.hset(KEYS.agent("ghost"), mapping={"id": "ghost", "goal": "no owner on record"})
    commands = (("look", "rb"), ("send", "rb", "hi"), ("kill", "rb", "--force"), ("resume", "rb"))
    *refused, ghost = _all(cli, *commands, ("look", "ghost"))
    for done in refused:
        _refused(done, "worker 'wb' is gone (its heartbeat expired): last seen", "s ago")
    _refused(ghost, "ghost has no worker on record")
    assert c.rds.sismember(KEYS.agents, "rb")
    assert len(c.tmux_sessions("wb")) == 1 and (wb.cwd / ".ib" / "agents" / "rb" / "repo").is_dir()

    _mark("wb is back")
    # wb is back: it re-adopts rb, which is reachable again with the state it had
    c.start_workers("wb")
    retry_until(lambda: _state(c, "rb") == "waiting", 15, 0.1, "rb back")
    _wait_shown(fake, rb_topic, "rb: unreachable → waiting (worker wb is back)")
    _ok(cli.ib("send", "rb", "still there?"))
    retry_until(lambda: "still there?" in c.received("wb"), 30, 0.05, "text after the restart")

    if c.network is not None:  # Redis goes away for wa alone: its link is down, its worker lives on
        _mark("Redis gone for wa")
        c.network.cut("wa")
        retry_until(lambda: _state(c, "ra") == "unreachable", TTL + 10, 0.1, "ra unreachable")
        _refused(cli.ib("look", "ra"), "worker 'wa' is gone (its heartbeat expired): last seen")
        c.network.mend("wa")
        retry_until(lambda: _state(c, "ra") == "waiting", 40, 0.1, "ra back once wa reaches Redis")
        assert c.procs["wa"].poll() is None
        _ok(cli.ib("send", "ra", "welcome back"))
        retry_until(lambda: "welcome back" in c.received("wa"), 30, 0.05, "text after the partition")

    _mark("nothing lost")
    # nothing lost, nothing doubled
    assert c.received("wa").count("hello A") == 1
    assert c.received("wa").count("welcome back") == (1 if c.network else 0)
    ra_states = [e["data"] for e in c.events("state") if e["agent"] == "ra"]
    cut_off = [(d["from_state"], d["to_state"]) for d in ra_states if "unreachable" in d.values()]
    assert cut_off == ([("waiting", "unreachable"), ("unreachable", "waiting")] if c.network else [])
    assert [c.received("wb").count(t) for t in ("Green", "hello B", "still there?")] == [1, 1, 1]
    spawned = [e["agent"] for e in c.events("spawned")]
    assert sorted(spawned) == sorted(set(spawned)) and {"ra", "rb"} <= set(spawned)
    moves = [
        (e["data"]["from_state"], e["data"]["to_state"]) for e in c.events("state") if e["agent"] == "rb"
    ]
    assert moves.count(("waiting", "unreachable")) == 1 and moves.count(("unreachable", "waiting")) == 1
    assert _shown(fake, rb_topic).count("→ unreachable") == 1
    assert len(c.tmux_sessions("wb")) == 1


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as s:
        yield s


def _run(c: Cluster, fake: FakeTelegram) -> None:
    try:
        _scenario(c, fake)
    finally:
        for name in list(c.procs):
            c.kill(name, signal.SIGTERM)
        for name in ("wa", "wb", "bot"):
            if c.log(name).exists():
                print(f"--- {name} ---\n{c.log(name).read_text()[-4000:]}")


@pytest.mark.timeout(150)
def test_two_machines_over_network_namespaces(tmp_path: Path, stack: ExitStack) -> None:
    network = Network()
    stack.callback(network.close)
    try:
        network.open()
    except NoNamespaces as e:
        pytest.skip(f"cannot make network namespaces here ({e}); test_two_machines_on_loopback runs instead")
    cluster = _cluster(tmp_path, network, stack)
    with inside(network.netns("cli")):
        fake = FakeTelegram(time_scale=SCALE).start()
    stack.callback(fake.stop)
    _run(cluster, fake)


@pytest.mark.timeout(150)
def test_two_machines_on_loopback(tmp_path: Path, stack: ExitStack) -> None:
    cluster = _cluster(tmp_path, None, stack)
    fake = FakeTelegram(time_scale=SCALE).start()
    stack.callback(fake.stop)
    _run(cluster, fake)
