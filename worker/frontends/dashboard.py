"""`ib watch`: the live dashboard's shell. It reads a snapshot from the bus, draws it with
`worker.frontends.dashboard_render`, and redraws when an event arrives (a blocking XREAD in a thread),
each second (agent records the pane watcher keeps current, ages), and on each key (cbreak mode,
`worker.frontends.dashboard_keys`).

With a stdout that is not a terminal it prints a plain snapshot whenever something changed.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import termios
import threading
import time
import tty
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TextIO, cast

import redis
from rich.console import Console
from rich.live import Live

from bus.commands.worker_commands import Answer, Command, Look, Send
from bus.commands.worker_rpc import request
from bus.errors import BusError
from bus.events.activity import IDLE_STATES, activity_line, current, item_usd
from bus.events.envelope import Envelope
from bus.events.streams import Entry
from bus.readers import dead_letters
from bus.readers.stream_reader import Cursor, StreamReader
from bus.stores.agent_store import USAGE_USD, Agent
from bus.stores.hashes import members
from bus.tasks.merges import MergeStore
from bus.tasks.task_model import Task
from bus.wire.keys import Keys
from worker.agents.dialog_answer import answer
from worker.agents.talk import look, send
from worker.errors import WorkerError
from worker.frontends.bus_down import bus_down
from worker.frontends.dashboard_keys import Action, Ui, decode_keys, footer, step
from worker.frontends.dashboard_render import (
    AgentRow,
    EventRow,
    MergeRow,
    ProjectTasks,
    QuestionRow,
    ServiceRow,
    Snapshot,
    render,
    render_plain,
    tree,
)
from worker.frontends.fleet_view import MANY
from worker.runtime import Runtime
from worker.service.supervisor import StackFiles, probe, process_alive
from worker.service.supervisor_state import healthy, service_line

KEEP_EVENTS = 50
READY_SHOWN = 3
CLAIMED_SHOWN = 5
MERGES_SHOWN = 10
ACTIVITY_ITEMS = 200  # output items read back to find what a working agent does
REFRESH = 1.0  # seconds between two reads when nothing happens: ages and pane states
MIN_FRAME = 0.05  # at most 20 redraws a second, however many events arrive
BLOCK_MS = 1000


def event_row(event: Envelope) -> EventRow:
    ts = str(event.get("ts") or "")
    try:
        shown = datetime.fromisoformat(ts).astimezone().strftime("%H:%M:%S")
    except ValueError:
        shown = ts[11:19]
    return EventRow(shown, str(event.get("type") or ""), str(event.get("msg") or ""))


@dataclass
class EventFeed:
    """The last events, kept current by a thread blocked in XREAD on the events stream."""

    reader: redis.Redis
    keys: Keys
    on_event: Callable[[], None]
    recent: deque[Envelope] = field(default_factory=lambda: deque(maxlen=KEEP_EVENTS))
    projects: set[str] = field(default_factory=set)
    error: str = ""
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        last = cast("list[Entry]", self.reader.xrevrange(self.keys.events, count=KEEP_EVENTS) or [])
        cursor = str(last[0][0]) if last else "0-0"
        self._take(last[::-1])
        StreamReader(
            Cursor(self.reader, self.keys.events, cursor),
            self._take,
            "ib watch",
            keep_going=lambda: not self.stopping.is_set(),
            pause=self.stopping.wait,
            block_ms=lambda: BLOCK_MS,
            count=500,
            between=lambda _found: self._down(None) if self.error else None,
            on_bug=self._down,  # the footer says the bus is down; read again in a second
        ).in_thread("events")

    def _down(self, error: Exception | None) -> None:
        self.error = "" if error is None else str(error)
        self.on_event()

    def _take(self, entries: Sequence[Entry]) -> None:
        events, _poison = dead_letters.sort(self.reader, self.keys, self.keys.events, entries)
        for event in events:
            self.recent.append(event)
            if event.get("project"):
                self.projects.add(str(event["project"]))
        self.on_event()


class Wake:
    """A self-pipe: other threads wake the loop waiting in select()."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)

    def __call__(self) -> None:
        with contextlib.suppress(BlockingIOError):  # already full of wake-ups
            os.write(self.write_fd, b".")

    def drain(self) -> None:
        try:
            while os.read(self.read_fd, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        os.close(self.read_fd)
        os.close(self.write_fd)


@dataclass
class Dashboard:
    rt: Runtime
    reader: redis.Redis  # no socket timeout, for the blocking XREAD
    bus: str = ""
    files: StackFiles | None = None
    ui: Ui = field(default_factory=Ui)

    def __post_init__(self) -> None:
        self.wake = Wake()
        self.stopping = threading.Event()
        self.feed = EventFeed(self.reader, self.rt.keys, self.wake)
        self.projects: set[str] = set()
        self.last: Snapshot | None = None
        self.read_at = ""  # the clock of the last view read from the bus

    def start(self) -> None:
        self.feed.start()
        pattern = self.rt.keys.project_tasks("*")
        head, tail = pattern.split("*")
        self.projects = {
            k[len(head) : -len(tail)] for k in self.rt.client.scan_iter(match=pattern, count=1000)
        } | set(MergeStore(self.rt.client, self.rt.keys, self.rt.settings.events_maxlen).projects())

    def stop(self) -> None:
        self.stopping.set()
        self.feed.stopping.set()
        self.wake()

    # reading the bus

    def snapshot(self, width: int = 80, interactive: bool = True) -> Snapshot:
        """What to show now; when the bus does not answer, the last snapshot with the error below it."""
        try:
            return self._read(width, interactive)
        except (BusError, redis.RedisError) as e:
            now = time.time()
            last = self.last or Snapshot(now, title=self.rt.root.name, bus=self.bus)
            self.last = replace(last, now=now, clock=_clock(now), footer=bus_down(str(e), self.read_at))
            return self.last

    def _read(self, width: int, interactive: bool) -> Snapshot:
        now = time.time()
        spent = self.rt.agents.all_with(USAGE_USD)
        records = [a for a, _usd in spent]
        doing = self._activities(records, now)
        costs = {a.id: item_usd(usd) if usd else None for a, usd in spent}
        agents = [
            AgentRow(
                a.id,
                a.state,
                a.created_at,
                a.manager,
                a.task,
                a.goal,
                a.paused,
                doing.get(a.id, ""),
                costs[a.id],
                a.cli,
                a.project,
            )
            for a in records
        ]
        questions = [QuestionRow(q.id, q.agent, q.text, q.asked_at) for q in self.rt.questions.pending()]
        projects = sorted(self.projects | self.feed.projects | {a.project for a in records if a.project})
        if interactive and agents and self.ui.selected not in {a.id for a in agents}:
            self.ui = replace(self.ui, selected=tree(agents)[0][1].id)
        snap = Snapshot(
            now=now,
            clock=_clock(now),
            title=self.rt.root.name,
            bus=self.bus,
            services=self._services(now),
            agents=tuple(agents),
            tasks=self._task_queues(projects),
            merges=tuple(m for p in projects for m in self._merges(p)),
            questions=tuple(questions),
            events=tuple(event_row(e) for e in list(self.feed.recent)),
            selected=self.ui.selected if interactive else "",
            footer=bus_down(self.feed.error) if self.feed.error else footer(self.ui, len(questions), width),
        )
        self.read_at = snap.clock
        if interactive and self.ui.mode == "look" and self.ui.target:
            snap = replace(snap, look=(self.ui.target, self._look(self.ui.target)))
        self.last = snap
        return snap

    def _activities(self, records: Sequence[Agent], now: float) -> dict[str, str]:
        """The live status line of each working agent, from the tail of its output stream; of the selected
        one only when there are many (a screen shows a few of them, a plain snapshot none)."""
        working = [a for a in records if a.state not in IDLE_STATES]
        if len(records) > MANY:
            working = [a for a in working if a.id == self.ui.selected]
        pipe = self.rt.client.pipeline(transaction=False)
        for a in working:
            pipe.xrevrange(self.rt.keys.output(a.id), count=ACTIVITY_ITEMS)
        tails = cast(list[list[tuple[str, dict[str, str]]]], pipe.execute() if working else [])
        lines = {}
        for a, tail in zip(working, tails, strict=True):
            activity = current((fields for _id, fields in reversed(tail)), a.state, now)
            lines[a.id] = activity_line(activity, now)
        return lines

    def _services(self, now: float) -> tuple[ServiceRow, ...]:
        record = self.files.read() if self.files is not None else None
        if record is not None and process_alive(record.supervisor):
            probes = probe(record, self.rt.client)
            return tuple(
                ServiceRow(service_line(s, probes[s.name], now), healthy(s, probes[s.name]))
                for s in record.services
            )
        workers = sorted(members(self.rt.client, self.rt.keys.workers))
        pipe = self.rt.client.pipeline()
        for w in workers:
            pipe.exists(self.rt.keys.worker(w))
        alive = pipe.execute() if workers else []
        return tuple(ServiceRow(f"worker {w}", bool(up)) for w, up in zip(workers, alive, strict=True))

    def _task_queues(self, projects: list[str]) -> tuple[ProjectTasks, ...]:
        claimed = self._task_records([str(i) for i in self.rt.client.zrange(self.rt.keys.task_claims, 0, -1)])
        queues = []
        for project in projects:
            try:
                counts = self.rt.tasks.counts(project)
                ready = (
                    self._task_records(self.rt.tasks.ready_ids(project)[:READY_SHOWN])
                    if counts["ready"]
                    else []
                )
            except BusError:
                continue  # a project name the task store refuses (it came from some event)
            if any(counts.values()):
                held = [(t.id, t.claimed_by or "?") for t in claimed if t.project == project]
                queues.append(
                    ProjectTasks(
                        project,
                        tuple(counts.items()),
                        tuple((t.id, t.title, t.priority) for t in ready),
                        tuple(held[:CLAIMED_SHOWN]),
                    )
                )
        return tuple(queues)

    def _task_records(self, ids: list[str]) -> list[Task]:
        """Tasks by id in one round trip (a task deleted meanwhile is left out)."""
        pipe = self.rt.client.pipeline(transaction=False)
        for task_id in ids:
            pipe.hgetall(self.rt.keys.task(task_id))
        return [Task.from_hash(fields) for fields in (pipe.execute() if ids else []) if fields]

    def _merges(self, project: str) -> list[MergeRow]:
        """The project's merge queue in merge order; a request put before earlier ones says it is smaller."""
        order = MergeStore(self.rt.client, self.rt.keys, self.rt.settings.events_maxlen).ordered(project)
        return [
            MergeRow(
                project, m.request.id, m.request.agent, m.request.status + (" ↑ smaller" if m.reason else "")
            )
            for m in order[:MERGES_SHOWN]
        ]

    def _look(self, agent_id: str) -> str:
        try:
            text = self._on_worker(agent_id, Look(agent=agent_id), lambda: look(self.rt, agent_id))
        except (BusError, WorkerError) as e:
            return f"cannot look at {agent_id}: {e}"
        return str(text)

    # acting

    def act(self, action: Action) -> None:
        try:
            if action.kind == "quit":
                self.stop()
            elif action.kind == "answer":
                self._answer(action.target, action.text)
                self.ui = replace(self.ui, message=f"answered {action.target}")
            elif action.kind == "send":
                command = Send(agent=action.target, text=action.text)
                self._on_worker(action.target, command, lambda: send(self.rt, action.target, action.text))
                self.ui = replace(self.ui, message=f"sent to {action.target}")
        except (BusError, WorkerError) as e:
            self.ui = replace(self.ui, mode="browse", message=f"error: {e}")

    def _answer(self, question_id: str, text: str) -> None:
        agent = self.rt.questions.get(question_id).agent
        command = Answer(question=question_id, text=text)
        self._on_worker(agent, command, lambda: answer(self.rt, question_id, text))

    def _on_worker(self, agent_id: str, command: Command, here: Callable[[], object]) -> object:
        """Run it here when the agent lives on this machine, else ask its worker over the bus."""
        agent = self.rt.agents.get(agent_id)
        if agent.worker in ("", self.rt.worker_id):
            return here()
        return request(
            self.rt.client, self.rt.keys, agent.worker, command, timeout=15, wait=self.rt.settings.write_wait
        )

    def on_keys(self, data: str) -> None:
        snap = self.last
        agents = [a.id for _, a in tree(snap.agents)] if snap else []
        questions = [q.id for q in snap.questions] if snap else []
        for key in decode_keys(data):
            self.ui, action = step(self.ui, key, agents, questions)
            if action is not None:
                self.act(action)

    # the loops

    def _wait(self, timeout: float, fd: int | None = None) -> bool:
        """Sleep until an event, a key or the timeout; True when a key can be read."""
        watched = [self.wake.read_fd] + ([fd] if fd is not None else [])
        ready, _, _ = select.select(watched, [], [], max(0.0, timeout))
        if self.wake.read_fd in ready:
            self.wake.drain()
        return fd is not None and fd in ready

    def run_plain(self, out: TextIO, width: int = 80) -> None:
        """Print a plain snapshot whenever what it shows changed (ages alone do not count)."""
        shown: Snapshot | None = None
        while not self.stopping.is_set():
            snap = self.snapshot(interactive=False)
            same = replace(snap, now=0.0, clock="")
            if same != shown:
                out.write(render_plain(snap, width) + "\n")
                out.flush()
                shown = same
            self._wait(REFRESH)

    def run_live(self, console: Console, keys_fd: int | None) -> None:
        """Full screen, redrawn on events, keys and each second, until `q` or stop()."""
        drawn = 0.0
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGWINCH, lambda _signum, _frame: self.wake())  # redraw at the new size now
        with _cbreak(keys_fd), Live(console=console, screen=True, auto_refresh=False) as live:
            while not self.stopping.is_set():
                pause = drawn + MIN_FRAME - time.monotonic()
                if pause > 0:
                    time.sleep(pause)  # coalesce a burst of events into one frame
                width, height = console.size
                live.update(render(self.snapshot(width), width, height), refresh=True)
                drawn = time.monotonic()
                if self._wait(REFRESH, keys_fd) and keys_fd is not None:
                    self.on_keys(os.read(keys_fd, 1024).decode("utf-8", "replace"))


def _clock(now: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(now))


@contextmanager
def _cbreak(fd: int | None) -> Iterator[None]:
    """Single keys without Enter and without echo; Ctrl-C still interrupts."""
    if fd is None:
        yield
        return
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def keys_fd(stdin: TextIO) -> int | None:
    try:
        return stdin.fileno() if stdin.isatty() else None
    except (OSError, ValueError):
        return None
