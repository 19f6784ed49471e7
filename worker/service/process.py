"""`ib worker`: the one process per machine that owns its agents' tmux sessions and worktrees.

One loop: one blocking read of this worker's command stream and of the events stream
(worker/service/inbox.py; woken at least every pane interval), then the pane watcher and the transcript
tailer. Events drive the merge queue (worker/merges/merge_queue.py) and the /auto loops (worker/auto/loop.py),
in this one thread. On start it re-adopts the agents still running in tmux and marks the rest stopped; on
SIGTERM it stops and leaves the agents running. `--once` (burst) handles what is pending and returns, for
tests.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis

from bus.commands import workers
from bus.commands.command_wire import COMMAND_FIELD
from bus.commands.worker_rpc import NotACommand, Received, Refused, decode_command, reply
from bus.connection.clients import hotconf
from bus.connection.embedded import Embedded
from bus.connection.reconnect import Reconnect
from bus.errors import BusError
from bus.events.envelope import LISTEN_TYPES, MERGE_TYPES, Envelope
from bus.events.event_model import Event
from bus.events.publish import flush_spool
from bus.events.streams import consumer_name, first_time
from bus.readers import dead_letters
from bus.readers.dead_letters import Poison
from bus.settings.relay_port import relay_port
from bus.settings.repo_paths import ensure_state_dir
from bus.stores import agent_index
from bus.stores.agent_store import Agent
from bus.stores.heartbeat import Heartbeat
from bus.wire.address import masked_url
from worker.agents.transcript_tail import TranscriptTailer
from worker.auto.loop import WATCHED, AutoLoops
from worker.boundary import guard
from worker.boundary.relay import Relay
from worker.boundary.rules import AGENT_ID
from worker.budgets.keeper import BudgetKeeper
from worker.budgets.watchdog import Watchdog
from worker.conflicts.watch import ConflictWatch
from worker.errors import WorkerError

# Up into frontends/ on purpose: the worker starts the status node of its repository (`ib status-node`
# outlives it), and the dashboard above reads the stack's state from service/. Allowed by name in
# tests/unit/test_import_layers.py.
from worker.frontends.status_node import StatusNodeStarter
from worker.hooks.manager_notes import flush_waiting
from worker.merges.merge_queue import MergeQueue
from worker.runtime import Runtime
from worker.service.inbox import READ_COUNT, Batch, Inbox, Pace
from worker.service.limit_resume import resume_due
from worker.service.limit_watch import park_spooled
from worker.service.operations import run_operation
from worker.service.owners import Owners
from worker.service.pane_watch import CLOSE_INTERVAL, PaneWatcher
from worker.service.pulse import Pulse
from worker.service.relay_replay import replay_queued
from worker.service.session_push import SessionPusher
from worker.service.signals import stop_on_signals
from worker.tasks import planning

log = logging.getLogger(__name__)


class WorkerBusy(WorkerError):
    """Another worker with the same id is alive."""


class BusMoved(WorkerError):
    """The embedded bus was started again at another address; this worker's clients point at the old one."""


TURN_END_TYPES = frozenset({"complete", "waiting", "error", "limited"})
REPLAY_EVERY = 5.0  # seconds between looks at the boxed agents' hook queues
FIRST_REPLAY = 10.0  # seconds the start gives queued hooks before the first look at the panes
STOP_CHECK = 1.0  # seconds a read blocks at most, whatever the pane interval: SIGTERM is heeded that soon
# seconds the loop lets a busy stream's events gather after a read that found only a few of them: caught up,
# it read and acknowledged an event or two at a time, a round trip each, in every worker. Only while the
# stream is busy (inbox.Pace): a command that comes meanwhile waits that long at most, and on a quiet bus
# never
EVENT_LINGER = 0.05
# seconds between two repairs of this worker's agent index (one HGET per agent of the bus, in Redis: ~10 ms
# at 10,000 agents). Every write keeps the index in step with the record in one script, so only a writer
# of an older version or a hand edit makes them disagree: a look every 5 minutes is plenty, and the watcher
# never acts on an id of its index whose record names another worker meanwhile.
REPAIR_EVERY = 300.0


def _project_wide(envelope: Envelope) -> bool:
    """Whether the merge queue or the /auto loops read events of this type whoever's agent they are about."""
    kind = envelope.get("type")
    return kind in WATCHED or kind in MERGE_TYPES


@dataclass
class WorkerService:
    rt: Runtime
    reader: redis.Redis  # a client without socket timeout, for the blocking reads
    stopping: threading.Event = field(default_factory=threading.Event)
    repaired_at: float = 0.0  # monotonic time of the last repair of this worker's agent index
    mine: list[Agent] | None = None  # this worker's agents as read once for the tick under way
    cut_short: bool = False  # an outage cut a merge or /auto step short: _go_on runs it on the next turn

    def __post_init__(self) -> None:
        self.watcher = PaneWatcher(self.rt)
        self.owners = Owners(self.rt.agents, self.rt.worker_id)
        self.pace = Pace()
        self.budgets = BudgetKeeper(self.rt)
        self.tailer = TranscriptTailer(self.rt, on_answers=self.budgets.charge)
        self.status_node = StatusNodeStarter(self.rt)  # CLAUDE.md's status block
        # the token is `host:pid`: `ib ps` checks that the heartbeat names the worker it started
        self.heartbeat = Heartbeat(
            self.rt.client,
            self.rt.keys.worker(self.rt.worker_id),
            self.ttl,
            f"{socket.gethostname()}:{os.getpid()}",
        )
        # the heartbeat renewed on its own thread: a loop slowed by a busy machine is not taken for dead
        self.pulse = Pulse(self.heartbeat, self.rt.keys, self.rt.worker_id, self.stopping)
        self.inbox = Inbox(self.reader, self.rt.keys, self.rt.worker_id, consumer_name())
        self.reconnect = Reconnect(
            self.rt.client,
            f"worker {self.me}",
            log.warning,
            first_s=0.5,
            pause=self.stopping.wait,
            missed=self._missed_bus,
        )
        self.merges = MergeQueue(self.rt)
        self.autos = AutoLoops(self.rt, self.merges)
        self.conflicts = ConflictWatch(self.rt, self.reader, self.stopping)  # its own thread: git takes time
        self.watchdog = Watchdog(self.rt, self.reader, self.stopping)  # its own thread: a loop seen at once
        # its own thread: what the person must act on goes into their sessions' inboxes at once
        self.pusher = SessionPusher(self.rt, self.reader, self.stopping, LISTEN_TYPES)
        # the embedded bus's address as this worker found it (None with IB_REDIS_URL, which cannot move)
        self.embedded_url = None if self.rt.settings.redis_url else self._embedded().recorded_url()

    @property
    def ttl(self) -> int:
        return max(5, int(self.rt.settings.heartbeat_ttl))

    def run(self, once: bool = False, ready: Callable[[], object] = lambda: None) -> None:
        """Serve until stopped (`once`: handle what is pending, look once, return). `ready` is called once
        the start's work is done and the first look at every pane was taken."""
        self._claim_heartbeat()
        relay: Relay | None = None
        try:
            if not once:
                self.pulse.start()  # before the start's work: re-adopting thousands of agents takes a while
                relay = self._open_relay()
            if relay is not None:
                self._replay_queued(relay, time.monotonic() + FIRST_REPLAY)  # before the panes are read
                replay = threading.Thread(
                    target=self._replay_loop, args=(relay,), name="relay-queue", daemon=True
                )
                replay.start()
            self.inbox.ensure()
            self.adopt()
            backlog = self.inbox.take_over()
            self._go_on()
            self._handle(backlog)
            if once:
                self._drain()
                self.tick()
                self.conflicts.drain()
                self.watchdog.drain()
                return
            self.conflicts.start()
            self.watchdog.start()
            if self.rt.settings.push_to_session:
                self.pusher.start()
            self._loop(ready)
        finally:
            if relay is not None:
                relay.close()
            with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):  # the bus may be gone
                self.pulse.end()
                self.rt.client.srem(self.rt.keys.workers, self.rt.worker_id)

    def _open_relay(self) -> Relay | None:
        """The relay for agents' sandboxed `ib` (worker.boundary.relay); without it they fail loudly."""
        port = relay_port(ensure_state_dir(str(self.rt.root)))
        try:
            relay = Relay(self.rt.ib_command, port, self.rt.settings.redis_url)
        except OSError as e:
            log.warning(
                "worker %s: cannot listen on 127.0.0.1:%s for agents' sandboxed ib (%s); "
                "their ib in a compound line fails until it can",
                self.me,
                port,
                e.strerror or e,
            )
            return None
        relay.start()
        return relay

    def _replay_loop(self, relay: Relay) -> None:
        """Every few seconds, boxed agents' hooks that found no relay: what the first replay left, and any
        a hook wrote while the relay was starting."""
        while not self.stopping.wait(REPLAY_EVERY):
            self._replay_queued(relay)

    def _replay_queued(self, relay: Relay, until: float = float("inf")) -> None:
        """worker.service.relay_replay, up to time `until`."""
        try:
            replay_queued(self.rt, relay, until)
        except (redis.ConnectionError, redis.TimeoutError, BusError, WorkerError, OSError) as e:
            log.warning("worker %s: queued hooks wait: %s", self.me, e)

    def _loop(self, ready: Callable[[], object]) -> None:
        interval = self.rt.settings.pane_interval
        next_tick = next_close = 0.0
        back, told = False, False
        while not self.stopping.is_set():
            self.pulse.progress()
            try:
                if back:  # a read whose reply was lost with Redis (commands still run once: seen marks)
                    self._handle(self.inbox.mine())
                    back = False
                    self.cut_short = True  # a tick's step too, maybe
                if self.cut_short:
                    self._go_on()
                if time.monotonic() >= next_tick:  # first a look at every pane, then the commands
                    self.tick()
                    next_tick = time.monotonic() + interval
                    if not told:
                        ready()
                        told = True
                if self.watcher.close and time.monotonic() >= next_close:
                    self._look_closely()
                    next_close = time.monotonic() + min(CLOSE_INTERVAL, interval)
                wake = min(next_tick, next_close) if self.watcher.close else next_tick
                wait = min(max(0.0, wake - time.monotonic()), STOP_CHECK)
                batch = self.inbox.read(block_ms=max(1, int(wait * 1000)))
                self._handle(batch)
                busy = self.pace.busy(len(batch.events), time.monotonic())
                if busy and batch.events and not batch.commands and len(batch.events) < READ_COUNT:
                    self.stopping.wait(EVENT_LINGER)
            except (redis.ConnectionError, redis.TimeoutError) as e:
                self._wait_for_bus(e)
                back = True

    def _look_closely(self) -> None:
        try:
            self.watcher.look_closely()
        except (BusError, WorkerError, OSError) as e:
            log.warning("worker %s: a close look at the panes failed: %s", self.rt.worker_id, e)

    def _wait_for_bus(self, error: Exception) -> None:
        """Redis is out of reach (for this machine, maybe only): the agents keep running; try again, more
        slowly each time, until it answers. Meanwhile the others mark our agents unreachable; the next
        tick sees that and puts them back (`_back`)."""
        self.reconnect.wait(error, lambda: not self.stopping.is_set())

    def _missed_bus(self) -> None:
        """Redis did not answer a ping: waiting for it is not being stuck (`pulse`); it may have moved."""
        self.pulse.progress()
        self._check_not_moved()

    def _check_not_moved(self) -> None:
        """An embedded bus restarted on another port (its old one was taken) is not coming back where
        this worker's clients look: stop, so that `ib up` starts the worker again at the new address."""
        now = self._embedded().recorded_url() if self.embedded_url else None
        if now and now != self.embedded_url:
            raise BusMoved(
                f"the embedded bus now listens at {masked_url(now)}: this worker stops to be started "
                "again there (`ib up` does that; by hand, run `ib worker` again)"
            )

    def _embedded(self) -> Embedded:
        return Embedded(str(self.rt.root), self.rt.settings.embedded_port)

    def _drain(self) -> None:
        while batch := self.inbox.read(block_ms=1):
            self._handle(batch)

    def tick(self) -> None:
        self.heartbeat.renew()
        if workers.record_seen(self.rt.client, self.rt.keys, self.rt.worker_id):
            self._back()  # others marked us down (Redis was out of reach, or we were stopped)
        self.mine = None
        steps = (
            self._sweep,
            self.repair_index,
            self._read_mine,
            self._watch_panes,
            self._tail_transcripts,
            self._keep_budgets,
            self.status_node.tick,
            self.fire_schedules,
            self.flush_spool,
            self.expire_plans,
            self.resume_limits,
        )
        for step in steps:
            try:
                step()
            except (BusError, WorkerError, OSError) as e:
                log.warning("worker %s: %s failed: %s", self.rt.worker_id, step.__qualname__, e)

    def _read_mine(self) -> None:
        """This worker's agents, read once for the steps of a tick (three read them before)."""
        self.mine = self.rt.agents.of_worker(self.me)
        self.owners.refresh(agent.id for agent in self.mine)

    def _watch_panes(self) -> None:
        self.watcher.tick(self.mine)

    def _tail_transcripts(self) -> None:
        self.tailer.tick(self.mine)

    def _keep_budgets(self) -> None:
        self.budgets.tick(self.mine)

    def flush_spool(self) -> None:
        """Events hooks and `ib notify` spooled on this machine while Redis was away, and manager notes
        kept meanwhile: sent now."""
        conf = hotconf(self.rt.settings, str(self.rt.root))
        sent = flush_spool(conf)
        if sent:
            log.info("worker %s: sent %d spooled event(s)", self.rt.worker_id, sent)
        notes = flush_waiting(conf)
        if notes:
            log.info("worker %s: sent %d kept manager note(s)", self.rt.worker_id, notes)

    def fire_schedules(self) -> None:
        """Scheduled tasks that are due: every worker tries, one lock per firing lets one add it."""
        self.rt.schedules.fire_due(self.rt.worker_id)

    def resume_limits(self) -> None:
        """Agents parked by a usage limit whose reset has come: resumed (worker.service.limit_resume)."""
        _resumed, lifted = resume_due(self.rt)
        if lifted:
            self.autos.resume_all()  # the /auto claims the limit held back

    def expire_plans(self) -> None:
        """Planners of this worker that gave no answer in time: their plans fail."""
        planning.expire(self.rt)

    def _sweep(self) -> None:
        """Other workers whose heartbeat expired: their agents are marked unreachable (once, by anyone)."""
        for gone in workers.sweep(self.rt.client, self.rt.keys, self.rt.settings.events_maxlen):
            log.warning("worker %s: worker %s stopped answering; its agents are unreachable", self.me, gone)

    def _back(self) -> None:
        back = workers.come_back(self.rt.client, self.rt.keys, self.me, self.rt.settings.events_maxlen)
        if back:
            log.info("worker %s: back; %d agent(s) reachable again", self.me, len(back))

    @property
    def me(self) -> str:
        return self.rt.worker_id

    def repair_index(self, now: float | None = None) -> None:
        """This worker's agent index made to agree with the records, at start and every REPAIR_EVERY;
        one line in the log when it did not."""
        now = time.monotonic() if now is None else now
        if self.repaired_at and now - self.repaired_at < REPAIR_EVERY:
            return
        self.repaired_at = now
        self.owners.forget_others()
        added, dropped = agent_index.repair(self.rt.client, self.rt.keys, self.me)
        if added or dropped:
            log.warning(
                "worker %s: its agent index disagreed with the records, repaired: added %s; dropped %s",
                self.me,
                ", ".join(added) or "none",
                ", ".join(dropped) or "none",
            )

    def adopt(self) -> None:
        """Agents of this worker (its index, repaired first) still in tmux are watched again; the others are
        marked stopped."""
        workers.record_seen(self.rt.client, self.rt.keys, self.me)
        self.repair_index()
        self._back()
        sessions = set(self.rt.tmux.sessions())
        for agent in self.rt.agents.of_worker(self.me):
            if agent.session in sessions:
                log.info("worker %s: re-adopted agent %s", self.rt.worker_id, agent.id)
            elif agent.state != "stopped":
                self.watcher.record(agent, "stopped")

    def _handle(self, batch: Batch) -> None:
        for entry_id, fields in batch.commands:
            command = decode_command(fields)
            if isinstance(command, NotACommand):
                raw = dead_letters.raw_bytes(fields.get(COMMAND_FIELD))
                reason = f"not a command: {command.reason}"
                self._dead(Poison(self.inbox.commands.stream, entry_id, reason, raw))
            elif first_time(self.rt.client, self.rt.keys, "cmd", command.id, ttl=24 * 3600):
                self._answer(command)
            self.inbox.commands.ack([entry_id])
        # events acknowledged together at the end: those that asked nothing of this worker, and state
        # changes, whose handling (the pane watcher's memory, closing attention items) is the same done twice
        quiet: list[str] = []
        stream = self.rt.keys.events
        read = [(entry_id, dead_letters.read_entry(stream, entry_id, f)) for entry_id, f in batch.events]
        self.owners.learn(str(e["agent"]) for _, e in read if not isinstance(e, Poison) and e.get("agent"))
        for entry_id, found in read:
            if isinstance(found, Poison):
                self._dead(found)
            elif (theirs := self._elsewhere(found)) and not _project_wide(found):
                quiet.append(entry_id)  # another worker's agent's: nothing here reads it
                continue
            else:
                self._on_event(Event.from_envelope(found), mine=not theirs)
                if found.get("type") == "state":
                    quiet.append(entry_id)
                    continue
            self.inbox.events.ack([entry_id])
        if quiet:
            self.inbox.events.ack(quiet)

    def _dead(self, poison: Poison) -> None:
        """An entry that is not an event or command: to the dead letters, said once in the worker's log."""
        dead_letters.dead_letter(self.rt.client, self.rt.keys, poison)
        log.warning(
            "worker %s: entry %s of %s is unreadable (%s); copied to %s, skipped",
            self.rt.worker_id,
            poison.entry_id,
            poison.stream,
            poison.reason,
            self.rt.keys.dead_letters,
        )

    def _elsewhere(self, envelope: Envelope) -> bool:
        """Whether the event is about another worker's agent, read from the envelope before it is made an
        Event (every worker reads every event; most are about the other workers' agents)."""
        agent = envelope.get("agent")
        if not isinstance(agent, str) or not agent:
            return False
        return self.owners.elsewhere(agent, str(envelope.get("type") or ""))

    def _on_event(self, event: Event, mine: bool) -> None:
        """The merge queue moves on at every merge event of a project; the /auto loops see every event.
        An event about this worker's agent (or one no worker owns): a turn's end has its agent's transcript
        read at once (the bot shows the words above the end) and ends the close watch of its pane; a
        state change may start one (worker.service.pane_watch); a "needs you" opens an attention item, and
        the agent moving on closes its earlier ones (bus.inbox.attention); a planner's end settles its plan.
        Another worker's agent (not `mine`) is that worker's to handle (worker.service.owners)."""
        try:
            if mine:
                self._on_agent_event(event)
            if event.type in MERGE_TYPES and event.project:
                self.merges.process(event.project)
            self.autos.on_event(event)
            if mine:
                planning.on_event(self.rt, event)
        except (redis.ConnectionError, redis.TimeoutError) as e:  # an outage, not a bug: no traceback
            # handling it again once Redis answers (leaving it unacknowledged) stalled an /auto run through
            # a Sentinel failover (tests/faults/test_sentinel_failover.py): the event stays handled as far
            # as it got, and the merge or /auto step it cut short runs on the loop's next turn (_go_on)
            log.warning("worker %s: handling event %s %s cut short: %s", self.me, event.id, event.type, e)
            self.cut_short = True
        except Exception:  # one event must not take the worker down; the loop pauses itself on errors
            log.exception("worker %s: handling event %s %s failed", self.rt.worker_id, event.id, event.type)

    def _on_agent_event(self, event: Event) -> None:
        """What an event about one of this worker's agents (or an agent no worker owns) asks of it."""
        if park_spooled(self.rt, event):
            log.info("worker %s: agent %s parked on its spooled limit", self.me, event.agent)
        if event.type in TURN_END_TYPES and event.agent:
            self.tailer.turn_ended(event.agent, event.id)
            self.watcher.unwatch(event.agent)
        if event.type == "state" and event.agent:
            self.watcher.moved(event.agent, str(event.data.get("to_state", "")))
        self.rt.attention.on_event(event)

    def _go_on(self) -> None:
        """After a restart or an outage: merges and /auto steps a killed worker or a lost connection left
        half done (each is saved before it runs, and runs again safely)."""
        self.cut_short = False
        try:
            self.merges.process_all()
            self.autos.resume_all()
        except (redis.ConnectionError, redis.TimeoutError) as e:
            log.warning("worker %s: resuming merges and auto loops waits for Redis: %s", self.me, e)
            self.cut_short = True
        except Exception:
            log.exception("worker %s: resuming merges and auto loops failed", self.rt.worker_id)

    def _answer(self, found: Received | Refused) -> None:
        """Run a command and reply with its result or its one-line error; a bad one is only refused."""
        if isinstance(found, Refused):
            log.info("worker %s: command %s %s refused: %s", self.me, found.id, found.op, found.error)
            self._reply(found.id, False, error=found.error)
            return
        command_id, op = found.id, found.command.op
        try:
            sender = self.rt.agents.find(found.sender) if AGENT_ID.fullmatch(found.sender) else None
            role = sender.role if sender is not None else None
            guard.check_command(found.command, found.sender, role, self._manager_of)
            result = run_operation(self.rt, found.command, sender=found.sender)
        except (BusError, WorkerError) as e:
            log.info(
                "worker %s: command %s %s from %s failed: %s", self.me, command_id, op, found.sender or "?", e
            )
            self._reply(command_id, False, error=str(e), reason=e.reason if isinstance(e, BusError) else "")
            return
        except Exception as e:  # a bug in one command must not take the worker down
            log.exception("worker %s: command %s %s crashed", self.me, command_id, op)
            self._reply(command_id, False, error=f"internal error: {e}")
            return
        log.info("worker %s: command %s %s from %s done", self.me, command_id, op, found.sender or "?")
        self._reply(command_id, True, result)

    def _reply(
        self, command_id: str, ok: bool, result: Any = None, error: str = "", reason: str = ""
    ) -> None:
        wait = self.rt.settings.write_wait
        reply(self.rt.client, self.rt.keys, command_id, ok, result, error, wait, reason)

    def _manager_of(self, agent_id: str) -> str | None:
        agent = self.rt.agents.find(agent_id)
        return agent.manager if agent is not None else None

    def _claim_heartbeat(self) -> None:
        holder = self.heartbeat.acquire()
        if holder is not None:
            raise WorkerBusy(
                f"a worker named {self.rt.worker_id!r} is already running ({holder}); "
                "set IB_WORKER_ID to run another"
            )
        self.rt.client.sadd(self.rt.keys.workers, self.rt.worker_id)

    def stop_on_signals(self) -> None:
        stop_on_signals(self.stopping)
