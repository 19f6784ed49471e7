"""Told exactly once: for each agent program and each kind of incident, how many events tell one incident,
and how soon after it the first is on the bus, with the real CLIs (issue 33's figures).

    .venv/bin/python -m bench.incident_bench [--runs N] [--minutes M] [--programs claude,codex,gemini]
                                             [--kinds complete,waiting,...] [--dump FILE]

One repository, one `ib worker` as the product starts it (no extra flags), and the pinned CLIs: Claude
Code (claude_agent_sdk's), Codex CLI and Gemini CLI, each offline against its scripted API stand-in, the
three programs at once (one thread each, its incidents one after the other). Per program one agent takes
every turn-end and dialog incident, scripted turn by turn (`ib send`, then `ib approve` / `ib answer` /
`ib deny` for a dialog, whose next turn ends it); Claude Code's plan dialogs have an agent in plan mode of
their own; each `stopped` is a fresh agent whose tmux session the bench kills. bench/incident_scripts.py
holds what each incident is made of, bench/incident_count.py how its events are counted (every telling
event of the agent, a late or stray one included, and a `stopped` before the agent's `spawned`).

The moment is when the stand-in sent the last byte of the answer that causes the incident (for
`stopped`, when tmux killed the session); the event's time is its stream id's milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import redis

from bench.common import IB, REDIS_URL, ib_env, pane_text, percentile, scratch_namespace
from bench.incident_count import Incident, Row, Seen, count
from bench.incident_scripts import KINDS, PROGRAMS, STOPPED, Kind
from bus.settings.relay_port import HOST, PORT_FILE
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_anthropic import CLAUDE_CODE_VERSION, FakeAnthropic, claude_binary
from tests.fake_anthropic import client_env as claude_env
from tests.fake_anthropic import reply as claude_reply
from tests.fake_anthropic import write_home as claude_home
from tests.fake_gemini.client import MODEL as GEMINI_MODEL
from tests.fake_gemini.client import client_env as gemini_env
from tests.fake_gemini.client import gemini_binary, gemini_version
from tests.fake_gemini.script import reply as gemini_reply
from tests.fake_gemini.server import FakeGemini
from tests.fake_openai import API_KEY as OPENAI_KEY
from tests.fake_openai import CODEX_VERSION, FakeOpenAI, write_codex_home
from tests.fake_openai import reply as codex_reply
from tests.fake_openai.client import KEY_VARIABLE
from tests.fake_openai.client import MODEL as CODEX_MODEL
from worker.agents.layout import session_name
from worker.markers import WAITING_MARKER
from worker.programs.registry import PROGRAMS as PROGRAM_OF

DEADLINE = 90.0  # seconds an incident's event (or an agent's first turn) may take at load before it is missed
GRACE = 3.0  # seconds the right event may still take once another one told the incident
SHORT = 10.0  # seconds waited for the event of a row none of whose first UNTOLD incidents was told
UNTOLD = 3
STUCK = 3  # incidents in a row that got stuck before a program's run ends
TELLINGS = frozenset({"complete", "waiting", "question", "permission", "error", "limited", "stopped"})
BUSY = frozenset({"running", "permission", "creating", "starting"})
FOREIGN = ("IB_", "ANTHROPIC_", "CLAUDE", "CODEX_", "OPENAI_", "GEMINI_", "GOOGLE_")
READY = f"Ready.\n\n{WAITING_MARKER}"
TRUST = "Yes, I trust this folder"
FIRST = {"claude": claude_reply, "codex": codex_reply, "gemini": gemini_reply}


class Stream:
    """Every event of the namespace as it comes (a thread reading the stream from its start), so that
    trimming never hides one."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.seen: list[Seen] = []
        self.cond = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(target=self._read, name="events", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        last = "0-0"
        while not self.stopping:
            answer = client.xread({self.keys.events: last}, block=500, count=500)
            for _name, entries in cast(list[tuple[str, list[tuple[str, dict[str, str]]]]], answer or []):
                found = [Seen(i, int(i.split("-")[0]) / 1000, json.loads(f["e"])) for i, f in entries]
                last = entries[-1][0]
                with self.cond:
                    self.seen.extend(found)
                    self.cond.notify_all()
        client.close()

    def wait(
        self,
        agent: str,
        type_: str,
        after: float,
        limit: float = DEADLINE,
        others: frozenset[str] = frozenset(),
        stuck: Callable[[], bool] = lambda: False,
    ) -> Seen | None:
        """The first event telling `type_` of `agent` at or after `after` (seconds), within `limit`; only
        GRACE seconds more once one of `others` told the incident instead, or once `stuck()` (checked each
        second) says nothing more will come."""
        deadline = time.monotonic() + limit
        with self.cond:
            while True:
                mine = [s for s in self.seen if s.at >= after - 0.001 and s.event.get("agent") == agent]
                found = next((s for s in mine if s.telling == type_), None)
                if found is not None:
                    return found
                if any(s.telling in others for s in mine) or stuck():
                    deadline = min(deadline, time.monotonic() + GRACE)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 1.0))

    def stop(self) -> list[Seen]:
        time.sleep(1.5)  # the last tellings, and any late second one, reach the reader
        self.stopping = True
        self.thread.join(10)
        return list(self.seen)


class Rig:
    """The repository, the three stand-ins, the environment, `ib worker`, and the events as they come."""

    def __init__(self, namespace: str, work: Path) -> None:
        self.namespace, self.work = namespace, work
        self.socket = f"ibinc-{uuid.uuid4().hex[:8]}"
        self.fakes: dict[str, Any] = {
            "claude": FakeAnthropic(),
            "codex": FakeOpenAI(),
            "gemini": FakeGemini(),
        }
        for fake in self.fakes.values():
            fake.start()
        self.repo = init_repo(work / "repo")
        home = claude_home(work / "home", [self.repo])
        env = ib_env(namespace, str(work / "spool"))
        self.env = {k: v for k, v in env.items() if not k.startswith(FOREIGN) or k.startswith("IB_")}
        self.env |= {
            **claude_env(self.fakes["claude"].base_url, home),
            **gemini_env(self.fakes["gemini"].base_url, home),
            "CODEX_HOME": str(write_codex_home(work / "codex-home", self.fakes["codex"].base_url, [])),
            KEY_VARIABLE: OPENAI_KEY,
            "IB_AGENT_ENV": KEY_VARIABLE,
            "IB_AGENT_COMMAND": str(claude_binary()),
            "IB_GEMINI_MODEL": GEMINI_MODEL,  # Gemini CLI's default ("Auto") asks a router model first
            "IB_CODEX_MODEL": CODEX_MODEL,  # a model of Codex's own catalog keeps its apply_patch tool
            "IB_TMUX_SOCKET": self.socket,
            "IB_WORKER_ID": f"bench-{uuid.uuid4().hex[:6]}",
            "IB_STATUS_NODE_AUTO": "false",
        }
        self.keys = Keys(namespace)
        self.redis = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        self.stream = Stream(self.keys)
        self.log_path = Path(tempfile.gettempdir()) / f"{work.name}-worker.log"  # kept: read it after a miss
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.worker = subprocess.Popen(
            [IB, "worker"], cwd=self.repo, env=self.env, stdout=self.log, stderr=subprocess.STDOUT
        )
        heartbeat = self.keys.worker(self.env["IB_WORKER_ID"])
        _until(lambda: bool(self.redis.exists(heartbeat)), 60, "the worker's heartbeat")
        _until(self._relay_listening, 60, "the worker's relay")  # Codex and Gemini CLI's hooks go through it

    def _relay_listening(self) -> bool:
        try:
            port = int((self.repo / ".ib" / PORT_FILE).read_text().strip())
            with socket.create_connection((HOST, port), timeout=1):
                return True
        except (OSError, ValueError):
            return False

    def ib(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [IB, *args], cwd=self.repo, env=self.env, capture_output=True, text=True, check=False
        )

    def state(self, agent: str) -> str:
        return str(self.redis.hget(self.keys.agent(agent), "state") or "")

    def screen(self, agent: str) -> str:
        return pane_text(self.socket, f"={session_name(self.repo, agent)}:")

    def press(self, agent: str, *keys: str) -> None:
        target = f"={session_name(self.repo, agent)}:"
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", target, *keys], check=True)

    def kill_session(self, agent: str) -> None:
        target = f"={session_name(self.repo, agent)}"
        subprocess.run(["tmux", "-L", self.socket, "kill-session", "-t", target], check=True)

    def stop(self) -> list[Seen]:
        seen = self.stream.stop()
        self.worker.terminate()
        self.worker.wait(60)
        self.log.close()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
        for fake in self.fakes.values():
            fake.stop()
        return seen


def _until(check: Callable[[], bool], limit: float, what: str) -> None:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {what} within {limit:.0f} s")
        time.sleep(0.05)


class Driver:
    """One program's incidents, one after the other: its stand-in serves one turn at a time."""

    def __init__(self, rig: Rig, program: str, kinds: list[str], runs: int, until: float) -> None:
        self.rig, self.program, self.kinds, self.runs, self.until = rig, program, kinds, runs, until
        self.fake = rig.fakes[program]
        self.table: dict[str, Kind] = PROGRAMS[program]
        self.incidents: list[Incident] = []
        self.spawned: dict[str, str] = {}
        self.failure = ""
        self.trusts = 0  # first turns that waited on Claude Code's folder-trust dialog
        self.short = -1  # the rounds done when the time ran out before `runs`
        self.stuck = 0  # incidents in a row that got stuck
        self.notes: list[str] = []  # the incidents that got stuck, and why

    def run(self) -> None:
        try:
            turns = [k for k in self.kinds if k != STOPPED]
            modes = dict.fromkeys(self.table[k].mode for k in turns if not self.table[k].fresh)
            agents = {mode: self._spawn(f"{self.program}-{mode or 'main'}", mode) for mode in modes}
            for n in range(self.runs):
                if time.monotonic() > self.until:
                    self.short = n
                    break
                for kind in turns:
                    spec = self.table[kind]
                    if spec.renew and n and n % spec.renew == 0:
                        agents[spec.mode] = self._spawn(f"{self.program}-{spec.mode}{n}", spec.mode)
                    fresh = spec.fresh and self._spawn(f"{self.program}-{kind}{n}", spec.mode)
                    self._survive(fresh or agents[spec.mode], kind, n)
                if STOPPED in self.kinds:
                    self._stop(n)
                print(f"  {self.program}: round {n + 1}/{self.runs}", file=sys.stderr, flush=True)
        except Exception as e:  # said once in the table's notes; the other programs go on
            self.failure = f"{type(e).__name__}: {e}"
            print(f"  {self.program}: stopped early: {self.failure}", file=sys.stderr, flush=True)

    def _survive(self, agent: str, kind: str, n: int) -> None:
        """One incident; one that gets stuck (a send left in the input box, a dialog never drawn) is noted
        and the agent brought back to idle with Escape. Three in a row end the program's run."""
        try:
            self._incident(agent, kind, n)
            self.stuck = 0
        except RuntimeError as e:
            self.stuck += 1
            self.notes.append(f"{agent} {kind} #{n}: {str(e).splitlines()[0]}")
            print(f"  {agent}: stuck ({e}); its screen:\n{self.rig.screen(agent)}", file=sys.stderr)
            if self.stuck >= STUCK:
                raise
            self.rig.ib("esc", agent)
            self._drain(agent)

    def _spawn(self, name: str, mode: str) -> str:
        self.fake.script(FIRST[self.program](READY))
        chosen = ["--permission-mode", mode] if mode else []
        started = time.time()
        done = self.rig.ib("new-agent", "wait for orders", "--name", name, "--cli", self.program, *chosen)
        if done.returncode != 0:
            raise RuntimeError(f"ib new-agent {name}: {done.stderr.strip()}")
        self.spawned[name] = self.program
        deadline = time.monotonic() + DEADLINE
        while self.rig.stream.wait(name, "waiting", started, 5.0) is None:
            if TRUST in self.rig.screen(name):  # Claude Code lost the folder's trust ittybus wrote for it
                self.trusts += 1
                self.rig.ib("approve", name)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}'s first turn never ended; its screen:\n{self.rig.screen(name)}")
        self._idle(name)
        return name

    def _idle(self, agent: str) -> None:
        _until(lambda: self._quiet(agent), DEADLINE, f"{agent} idle")

    def _quiet(self, agent: str) -> bool:
        return self.fake.pending() == 0 and self.rig.state(agent) not in BUSY

    def _incident(self, agent: str, kind: str, n: int) -> None:
        spec = self.table[kind]
        turns = spec.turns()
        ends = len(self.fake.turn_ends())
        limit = SHORT if self._untold(kind) else DEADLINE
        incident = Incident(self.program, kind, agent, spec.told, spec.follows, time.time())
        self.incidents.append(incident)
        self.fake.script(*turns)
        before = self.fake.set_default(spec.exhausted()) if spec.exhausted else None
        sent = self.rig.ib("send", agent, f"step {n} ({kind})")
        if sent.returncode != 0:
            raise RuntimeError(f"ib send {agent}: {sent.stderr.strip()}")
        others = TELLINGS - {spec.told, spec.follows}
        stuck = (lambda: spec.keys_if in self.rig.screen(agent)) if spec.keys_if else lambda: False
        told = self.rig.stream.wait(agent, spec.told, incident.start, limit, others, stuck)
        answers = [t for t in self.fake.turn_ends()[ends:] if told is None or t <= told.at + 0.001]
        incident.moment = answers[-1] if answers else incident.start
        incident.told_at = told.at if told is not None else 0.0
        if told is None:
            print(f"  {agent}: no {spec.told} for {kind}; screen:\n{self.rig.screen(agent)}", file=sys.stderr)
        if spec.answer:
            self._answer(agent, spec, incident.start)
        if spec.keys and spec.keys_if in self.rig.screen(agent):
            self.rig.press(agent, *spec.keys)
        if before is not None:
            self.fake.set_default(before)
        self._drain(agent)

    def _untold(self, kind: str) -> bool:
        """Whether the first UNTOLD incidents of `kind` were all missed (waiting less for the rest paces the
        bench only: the counting reads the whole stream afterwards)."""
        mine = [i for i in self.incidents if i.kind == kind][:UNTOLD]
        return len(mine) == UNTOLD and not any(i.told_at for i in mine)

    def _answer(self, agent: str, spec: Kind, after: float) -> None:
        """Close the dialog once it is drawn, then wait for what that leads to."""
        drawn = PROGRAM_OF[self.program].read_dialog
        _until(lambda: drawn(self.rig.screen(agent)) is not None, DEADLINE, f"{agent}'s dialog drawn")
        deadline = time.monotonic() + DEADLINE
        while (done := self.rig.ib(*spec.answer[:1], agent, *spec.answer[1:])).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"ib {' '.join(spec.answer)} {agent}: {done.stderr.strip()}")
            time.sleep(0.2)
        if spec.follows and self.rig.stream.wait(agent, spec.follows, after) is None:
            print(f"  {agent}: no {spec.follows} after ib {spec.answer[0]}", file=sys.stderr)

    def _drain(self, agent: str) -> None:
        """Back to idle; else Escape (a dialog the product does not know), and what is left of the script
        (a turn that never came) is dropped."""
        try:
            _until(lambda: self._quiet(agent), SHORT, f"{agent} idle")
        except RuntimeError:
            print(f"  {agent}: not idle; Escape; its screen:\n{self.rig.screen(agent)}", file=sys.stderr)
            self.rig.ib("esc", agent)
            while self.fake.pending():
                self.fake.next_turn()
            _until(lambda: self._quiet(agent), DEADLINE, f"{agent} idle after Escape")

    def _stop(self, n: int) -> None:
        agent = self._spawn(f"{self.program}-stopped{n}", "")
        incident = Incident(self.program, STOPPED, agent, STOPPED, "", time.time())
        self.incidents.append(incident)
        self.rig.kill_session(agent)
        incident.moment = time.time()
        if self.rig.stream.wait(agent, STOPPED, incident.start) is None:
            print(f"  {agent}: no stopped after its session was killed", file=sys.stderr)


def bench(
    programs: list[str], kinds: list[str], runs: int, minutes: float, dump: str = ""
) -> tuple[dict[tuple[str, str], Row], list[str]]:
    until = time.monotonic() + minutes * 60
    with scratch_namespace() as namespace:
        work = Path(tempfile.mkdtemp(prefix="ib-incidents-"))
        rig = Rig(namespace, work)
        drivers = [Driver(rig, p, [k for k in kinds if k in PROGRAMS[p]], runs, until) for p in programs]
        try:
            threads = [threading.Thread(target=d.run, name=d.program) for d in drivers]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            seen = rig.stop()
            for _ in range(10):  # the CLIs, hung up on, may still write their HOME for a moment
                shutil.rmtree(work, ignore_errors=True)
                if not work.exists():
                    break
                time.sleep(0.3)
    incidents = [i for d in drivers for i in d.incidents]
    if dump:
        _dump(dump, incidents, seen)
    spawned = {a: p for d in drivers for a, p in d.spawned.items()}
    notes = [f"{d.program} stopped early: {d.failure}" for d in drivers if d.failure]
    notes += [f"stuck: {note}" for d in drivers for note in d.notes]
    notes += [f"{d.program}: {d.short} of {runs} rounds within {minutes:g} min"
              for d in drivers if d.short >= 0]  # fmt: skip
    notes += [f"{d.program}: {d.trusts} new agents asked to trust their folder (approved)"
              for d in drivers if d.trusts]  # fmt: skip
    return count(incidents, seen, spawned), notes


def _dump(path: str, incidents: list[Incident], seen: list[Seen]) -> None:
    """The incidents, then every event, as JSON lines (to look into a row that is not 1.00)."""
    with open(path, "w", encoding="utf-8") as f:
        for i in incidents:
            f.write(json.dumps({"incident": i.kind, "agent": i.agent, "start": i.start, "moment": i.moment}))
            f.write("\n")
        for s in seen:
            f.write(json.dumps({"id": s.id, **s.event}) + "\n")


def _row(program: str, kind: str, row: Row) -> str:
    ms = [s * 1000 for s in row.latencies()]
    timing = f"{percentile(ms, 50):.0f} ms | {percentile(ms, 99):.0f} ms" if ms else "— | —"
    told = f"**{row.per_incident:.2f}**" if row.per_incident != 1 else "1.00"
    wrong = row.told_as()
    extra = [
        f"{len(row.twice())} told twice or more" if row.twice() else "",
        *(f"{n} told as `{told}` instead" for told, n in wrong.items()),
        f"{row.missed - sum(wrong.values())} not told" if row.missed > sum(wrong.values()) else "",
        f"{len(row.strays)} stray" if row.strays else "",
        f"{len(row.phantoms)} phantom stopped" if row.phantoms else "",
    ]
    notes = ", ".join(e for e in extra if e)
    return f"| {program} | {kind} | {len(row.incidents)} | {told} | {timing} | {notes} |"


def report(rows: dict[tuple[str, str], Row], programs: list[str], kinds: list[str]) -> None:
    print("| program | kind | incidents | events per incident (goal 1.00) | moment → event p50 | p99 (goal "
          "≤ 1000 ms) | notes |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    asked = [(p, k) for p in programs for k in kinds]
    order = asked + sorted(set(rows) - set(asked))
    for key in order:
        if key in rows:
            print(_row(*key, rows[key]))
    for (program, kind), row in rows.items():
        wrong = [i.wrong for i in row.incidents if i.wrong][:1]
        shown = [i.events for i in row.twice()[:2]] + wrong + [row.strays[:3], row.phantoms[:3]]
        for events in (e for e in shown if e):
            print(f"\n{program} {kind}: " + "; ".join(s.line() for s in events), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="incidents per program and kind (default 50)")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="some of claude,codex,gemini")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"some of {','.join(KINDS)}")
    parser.add_argument(
        "--minutes", type=float, default=0, help="start no round after this many minutes (0: no limit)"
    )
    parser.add_argument("--dump", default="", help="write the incidents and every event to this JSONL file")
    args = parser.parse_args()
    programs = [p for p in args.programs.split(",") if p]
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [p for p in programs if p not in PROGRAMS] + [k for k in kinds if k not in KINDS]
    if unknown or args.runs < 1:
        parser.error(f"unknown {', '.join(unknown)}" if unknown else "--runs must be at least 1")
    load, started = os.getloadavg()[0], time.time()
    rows, notes = bench(programs, kinds, args.runs, args.minutes or 1e9, args.dump)
    minutes = (time.time() - started) / 60
    print(
        f"Claude Code {CLAUDE_CODE_VERSION}, Codex CLI {CODEX_VERSION}, Gemini CLI "
        f"{gemini_version(gemini_binary())}; {args.runs} runs per row; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, {minutes:.0f} min; load average "
        f"{load:.1f} at start, {os.getloadavg()[0]:.1f} at end"
    )
    for note in notes:
        print(f"note: {note}")
    report(rows, programs, kinds)


if __name__ == "__main__":
    main()
