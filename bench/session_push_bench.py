"""From an event on the bus to the person's own Claude Code session asking the model about it: the push
into its inbox beside the `ib listen` background command, with the real Claude Code, in one run.

    .venv/bin/python -m bench.session_push_bench [--runs N]

One repository with `ib hooks install`, one `ib worker`, and the pinned Claude Code as the person's
session in tmux, offline against the scripted Messages API. Per sample: the event's stream id (Redis's
clock, milliseconds) to the arrival at the stand-in of the first request that carries the event — for
the push, the new turn the inbox starts; for the listener, the request after the extra Read of the
background command's output file (Claude Code tells the session only that the command finished and
where its output is). Both paths use the same session, one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import redis

from bench.common import IB, REDIS_URL, ib_env, percentile, scratch_namespace
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.session_inbox import this_host
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_anthropic import CLAUDE_CODE_VERSION, FakeAnthropic, Request, ToolUse, claude_binary, reply
from tests.fake_anthropic.client import client_env, write_home

DEADLINE = 60.0
GAP = 2.2  # seconds between two pushes into one session: the pusher folds what comes sooner
OUTPUT_FILE = re.compile(r"(/[^\s\"'<>]+\.output)")


def _carries(request: Request, text: str) -> bool:
    return request.kind == "turn" and text in json.dumps(request.body, ensure_ascii=False)


def _listeners_started(api: FakeAnthropic) -> list[Request]:
    """The requests that carry the result of starting `ib listen` in the background (its output file)."""
    return [
        r
        for r in api.requests()
        if r.kind == "turn" and "Output is being written to" in json.dumps(r.body["messages"][-1])
    ]


def _first_with(api: FakeAnthropic, text: str, since: int = 0) -> Request:
    _wait(lambda: any(_carries(r, text) for r in api.requests()[since:]), f"a request with {text}")
    return next(r for r in api.requests()[since:] if _carries(r, text))


def _more_listeners(api: FakeAnthropic, count: int) -> None:
    _wait(lambda: api.pending() == 0 and count < len(_listeners_started(api)), "the next listener")


def _wait(check: object, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"no {what} within {DEADLINE}s")
        time.sleep(0.02)


class Session:
    def __init__(self, socket: str, env: dict[str, str], repo: Path) -> None:
        self.socket, self.env, self.repo = socket, env, repo
        pairs = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        size = ["-x", "160", "-y", "50", "-c", str(repo)]
        self.tmux("new-session", "-d", "-s", "me", *size, *pairs, str(claude_binary()))

    def tmux(self, *args: str) -> str:
        cmd = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout

    def type(self, text: str) -> None:
        _wait(lambda: re.search("shortcuts|mode on", self.tmux("capture-pane", "-p", "-t", "me")), "prompt")
        self.tmux("send-keys", "-t", "me", "-l", text)
        _wait(lambda: text in self.tmux("capture-pane", "-p", "-t", "me"), "typed text")
        self.tmux("send-keys", "-t", "me", "Enter")


def _event(rds: redis.Redis, keys: Keys, n: int) -> tuple[str, float]:
    event_id = publish(
        rds, keys, make_event("complete", f"bench {n} done", sender=f"b{n}", agent=f"b{n}"), 10_000
    )
    return event_id, int(event_id.partition("-")[0]) / 1000


def push_rounds(api: FakeAnthropic, rds: redis.Redis, keys: Keys, runs: int) -> list[float]:
    samples = []
    for n in range(runs):
        api.script(reply("Noted."))
        event_id, at = _event(rds, keys, n)
        first = _first_with(api, event_id)
        samples.append(first.at - at)
        _wait(lambda: api.pending() == 0, "the turn")
        time.sleep(GAP)
    return samples


def listen_rounds(
    api: FakeAnthropic, rds: redis.Redis, keys: Keys, session: Session, runs: int
) -> list[float]:
    listen = {"command": f"{IB} listen --timeout 300", "run_in_background": True, "description": "listen"}
    drain = [IB, "listen", "--timeout", "1"]
    subprocess.run(drain, env=session.env, cwd=session.repo, capture_output=True, check=False)
    api.script(reply(ToolUse("Bash", dict(listen))), reply("Listening."))  # the backlog read above
    session.type("listen for the agents")
    samples = []
    for n in range(runs):
        _wait(lambda: rds.exists(keys.listener("default")), "the listener's heartbeat")
        # the heartbeat may still be the drain's above (it outlives its listener by seconds): the request
        # that carries the background command's start is what says the session's listener runs
        _wait(lambda n=n: len(_listeners_started(api)) > n, "the session's listener")
        started = _listeners_started(api)
        _wait(lambda: api.pending() == 0, "the turn that started the listener")
        output = OUTPUT_FILE.findall(json.dumps(started[-1].body["messages"][-1]))[-1]
        api.script(
            reply(ToolUse("Read", {"file_path": output})),  # what the wake-up's notification points to
            reply(ToolUse("Bash", dict(listen))),
            reply("Listening again."),
        )
        seen = len(api.requests())
        event_id, at = _event(rds, keys, 1000 + n)
        first = _first_with(api, event_id, seen)
        samples.append(first.at - at)
        _more_listeners(api, len(started))
    return samples


def _row(name: str, samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    p50, p99 = percentile(ms, 50), percentile(ms, 99)
    return f"| {name} | {len(ms)} | {p50:.0f} ms | {p99:.0f} ms | {max(ms):.0f} ms |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with (
        scratch_namespace() as namespace,
        tempfile.TemporaryDirectory(prefix="ib-pushbench-") as tmp,
        FakeAnthropic() as api,
    ):
        root = Path(tmp)
        repo = init_repo(root / "repo")
        env = ib_env(namespace, str(root / "spool"), IB_WORKER_ID=f"bench-{uuid.uuid4().hex[:6]}")
        env["IB_TMUX_SOCKET"] = f"ibpb-agents-{uuid.uuid4().hex[:6]}"
        subprocess.run([IB, "hooks", "install"], cwd=repo, env=env, check=True, capture_output=True)
        home = write_home(root / "home", [repo], {"permissions": {"allow": [f"Bash({IB}:*)"]}})
        person = {
            k: v for k, v in {**env, **client_env(api.base_url, home)}.items() if not k.startswith("CLAUDE")
        }
        rds = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(namespace)
        log = open(root / "worker.log", "wb")  # noqa: SIM115 - closed with the worker
        worker = subprocess.Popen([IB, "worker"], cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT)
        session = Session(f"ibpb-{uuid.uuid4().hex[:6]}", person, repo)
        try:
            _wait(lambda: rds.exists(keys.session_pusher(this_host(), os.path.realpath(repo))), "the pusher")
            api.script(reply("Ready."))
            session.type("hello")
            _wait(lambda: rds.smembers(keys.session_inboxes) and api.pending() == 0, "the session's record")
            time.sleep(GAP)
            pushed = push_rounds(api, rds, keys, args.runs)
            print(_row("pushed into the session's inbox (a new turn)", pushed), flush=True)
            worker.terminate()  # from now on only the listener reaches the session
            worker.wait(30)
            worker = subprocess.Popen(
                [IB, "worker"], cwd=repo, env={**env, "IB_PUSH_TO_SESSION": "false"}, stdout=log, stderr=log
            )
            listened = listen_rounds(api, rds, keys, session, args.runs)
        except SystemExit:
            print(session.tmux("capture-pane", "-p", "-t", "me"))  # what the session showed when it stuck
            raise
        finally:
            session.tmux("kill-server")
            worker.terminate()
            worker.wait(30)
            log.close()
    print(
        f"Claude Code {CLAUDE_CODE_VERSION}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print("| path: event on the bus → the model request that carries it | n | p50 | p99 | max |")
    print("|---|---|---|---|---|")
    print(_row("pushed into the session's inbox (a new turn)", pushed))
    print(_row("`ib listen` in the background (wake-up, then the extra Read)", listened))


if __name__ == "__main__":
    main()
