"""The supervisor behind `ib up`: the worker and the bot as child processes, restarted with backoff when
they crash, stopped in order; `.ib/stack.json` says what runs, `.ib/logs/` holds what they print.

One supervisor per repository (a lock file). Children get their own session so a Ctrl-C in the terminal
reaches only the supervisor, which then stops them one by one. The agents are never touched.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO

import redis

from bus.poll import wait_until
from bus.settings.repo_paths import ensure_state_dir, state_dir
from bus.wire.keys import Keys
from worker.errors import WorkerError
from worker.service.supervisor_state import BOT_HINT, Probe, ServiceRecord, StackRecord, describe_exit

log = logging.getLogger(__name__)
STOP_TIMEOUT = 15.0  # seconds a service gets to stop after SIGTERM before SIGKILL
MAX_LOG_BYTES = 5_000_000

ServiceChange = Callable[[ServiceRecord], ServiceRecord]


class StackError(WorkerError):
    """`ib up` / `ib down` could not do what was asked."""


class StackRunning(StackError):
    """Another `ib up` already supervises this repository."""


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    argv: tuple[str, ...]


def service_specs(ib: str, with_bot: bool, web_port: int | None = None) -> list[ServiceSpec]:
    """What `ib up` runs, in start order (stopped in reverse): the worker, then the bot if configured, then
    the page (`ib web`) when IB_WEB_PORT says on which port."""
    specs = [ServiceSpec("worker", (ib, "worker", "--verbose"))]
    if with_bot:
        specs.append(ServiceSpec("bot", (ib, "bot", "--verbose")))
    if web_port is not None:
        # its output goes to a log file: the address is printed without the token
        specs.append(ServiceSpec("web", (ib, "web", "--port", str(web_port), "--hide-token", "--verbose")))
    return specs


@dataclass(frozen=True)
class StackFiles:
    """Where a repository's stack keeps its state, lock and logs."""

    root: Path

    @property
    def folder(self) -> Path:
        return Path(state_dir(str(self.root)))

    @property
    def state(self) -> Path:
        return self.folder / "stack.json"

    @property
    def lock(self) -> Path:
        return self.folder / "stack.lock"

    @property
    def logs(self) -> Path:
        return self.folder / "logs"

    def log_of(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def read(self) -> StackRecord | None:
        try:
            return StackRecord.from_json(self.state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write(self, record: StackRecord) -> None:
        ensure_state_dir(str(self.root))
        tmp = self.state.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(record.to_json(), encoding="utf-8")
        os.replace(tmp, self.state)

    def take_lock(self) -> IO[str]:
        """The supervisor's lock, held as long as the returned file stays open."""
        ensure_state_dir(str(self.root))
        handle = open(self.lock, "a+", encoding="ascii")  # noqa: SIM115 - held for the process's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            handle.close()
            running = self.read()
            pid = f" (pid {running.supervisor})" if running else ""
            raise StackRunning(
                f"ib up is already running for {self.root}{pid}: `ib watch` shows it, `ib down` stops it"
            ) from e
        return handle


def process_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _not_zombie(pid)


def _not_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no /proc (macOS): kill(0) is all we know
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def runs(pid: int | None, argv: Sequence[str]) -> bool:
    """`pid` is alive and still runs `argv` (pids are reused); without /proc, alive is all we know."""
    if not process_alive(pid):
        return False
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    cmdline = [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    if not argv or len(cmdline) < len(argv):
        return False
    program = os.path.basename(argv[0])
    return cmdline[len(cmdline) - len(argv) + 1 :] == list(argv[1:]) and any(
        os.path.basename(part) == program for part in cmdline[: len(cmdline) - len(argv) + 1]
    )


def probe(stack: StackRecord, client: redis.Redis | None) -> dict[str, Probe]:
    """Is each service alive, does the bus answer (`client` None: it did not), and for the worker: is its
    heartbeat ours?"""
    probes: dict[str, Probe] = {}
    bus = client is not None
    for s in stack.services:
        alive = s.state == "running" and runs(s.pid, s.argv)
        beat: bool | None = None
        if s.name == "worker" and alive and client is not None and stack.worker_id:
            try:
                holder = client.get(Keys(stack.namespace).worker(stack.worker_id))
            except redis.RedisError:
                bus = False
            else:
                beat = holder == f"{socket.gethostname()}:{s.pid}"
        probes[s.name] = Probe(alive, beat, bus)
    return probes


@dataclass
class Supervisor:
    """Keeps each service running until `stop()`: one thread a service waits on its process."""

    files: StackFiles
    specs: list[ServiceSpec]
    record: StackRecord
    env: Mapping[str, str] | None = None
    bot_note: str = BOT_HINT
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._threads: list[threading.Thread] = []
        self._held: IO[str] | None = None

    def claim(self) -> None:
        """Become the repository's one supervisor, and stop what a dead one left running."""
        self._held = self.files.take_lock()
        stop_leftovers(self.files)  # we hold the lock: whoever wrote the stack file is gone

    def start(self) -> None:
        """Start every service (claiming the repository first unless `claim()` was called)."""
        if self._held is None:
            self.claim()
        self.files.logs.mkdir(parents=True, exist_ok=True)
        for spec in self.specs:
            log_path = str(self.files.log_of(spec.name))
            self.record = self.record.with_service(
                ServiceRecord(name=spec.name, argv=spec.argv, log=log_path)
            )
        if not any(s.name == "bot" for s in self.specs):
            self.record = self.record.with_service(ServiceRecord(name="bot", state="off", note=self.bot_note))
        self.files.write(self.record)
        for spec in self.specs:
            thread = threading.Thread(target=self._keep, args=(spec,), name=f"keep-{spec.name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _keep(self, spec: ServiceSpec) -> None:
        while True:
            with self._lock:
                if self.stopping.is_set():
                    return
                proc = self._launch(spec)
            code, ended = proc.wait(), time.time()
            with self._lock:
                if self.stopping.is_set():
                    return
                crashed = self._update(spec.name, partial(ServiceRecord.crashed, code=code, now=ended))
            log.warning(
                "%s (pid %s) ended: %s; restart %d in %.0fs",
                spec.name,
                proc.pid,
                describe_exit(code),
                crashed.restarts,
                crashed.next_start_at - time.time(),
            )
            if self.stopping.wait(max(0.0, crashed.next_start_at - time.time())):
                return

    def _launch(self, spec: ServiceSpec) -> subprocess.Popen[bytes]:
        path = self.files.log_of(spec.name)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_suffix(".log.1"))
        with open(path, "ab") as out:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            out.write(f"--- {stamp} ib up: starting {' '.join(spec.argv[1:])}\n".encode())
            out.flush()
            proc = subprocess.Popen(
                list(spec.argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.files.root,
                env=dict(self.env) if self.env is not None else None,
                start_new_session=True,  # a Ctrl-C in the terminal is for the supervisor, not for them
            )
        self._procs[spec.name] = proc
        self._update(spec.name, lambda r: r.started(proc.pid, time.time()))
        log.info("%s started (pid %s)", spec.name, proc.pid)
        return proc

    def _update(self, name: str, change: ServiceChange) -> ServiceRecord:
        current = self.record.service(name) or ServiceRecord(name=name)
        changed = change(current)
        self.record = self.record.with_service(changed)
        self.files.write(self.record)
        return changed

    def stop(self, timeout: float = STOP_TIMEOUT) -> list[str]:
        """Stop the services in reverse start order; returns their names. The agents keep running."""
        with self._lock:
            self.stopping.set()
        stopped = []
        for spec in reversed(self.specs):
            proc = self._procs.get(spec.name)
            if proc is not None and proc.poll() is None:
                _terminate(proc.pid, timeout, proc)
                stopped.append(spec.name)
            with self._lock:
                if self.record.service(spec.name) is not None:
                    self._update(spec.name, lambda r: r.stopped())
        for thread in self._threads:
            thread.join(timeout=2.0)
        if self._held is not None:
            self._held.close()
            self._held = None
        return stopped

    def current(self) -> StackRecord:
        with self._lock:
            return self.record


def _terminate(pid: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if proc is not None:
        try:
            proc.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            pass
    # not our child: nothing to wait on but its pid
    elif wait_until(lambda: not process_alive(pid), timeout):
        return
    log.warning("pid %s did not stop within %.0fs: killing it", pid, timeout)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    if proc is not None:
        proc.wait()


def new_record(bus: str, namespace: str, worker_id: str, detached: bool) -> StackRecord:
    return StackRecord(
        supervisor=os.getpid(),
        started_at=time.time(),
        bus=bus,
        namespace=namespace,
        worker_id=worker_id,
        detached=detached,
    )


def detach(files: StackFiles, argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """Start `argv` (an `ib up --background`) in a session of its own, its output in the stack's log."""
    files.logs.mkdir(parents=True, exist_ok=True)
    with open(files.log_of("stack"), "ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=files.root,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    return proc.pid


def wait_until_up(files: StackFiles, pid: int, timeout: float = 30.0) -> StackRecord:
    """Wait for the detached supervisor to start its services; StackError when it died instead."""

    def started() -> StackRecord | None:
        record = files.read()
        if (
            record is not None
            and record.supervisor == pid
            and record.services
            and all(s.state in ("running", "backoff", "off") for s in record.services)
        ):
            return record
        if not process_alive(pid):
            raise StackError(
                f"ib up stopped right away; see {files.log_of('stack')}:\n{tail(files.log_of('stack'))}"
            )
        return None

    record = wait_until(started, timeout)  # a process of our own starting up: nothing to block on
    if record is not None:
        return record
    raise StackError(f"ib up did not start its services within {timeout:g}s; see {files.log_of('stack')}")


def stop_leftovers(files: StackFiles) -> list[ServiceRecord]:
    """Stop the services a supervisor that died (killed -9) left running; returns them."""
    record = files.read()
    if record is None or process_alive(record.supervisor):
        return []
    left = [s for s in reversed(record.services) if s.pid and runs(s.pid, s.argv)]
    for s in left:
        log.warning("stopping %s (pid %s), left running by a supervisor that died", s.name, s.pid)
        _terminate(s.pid or 0, STOP_TIMEOUT)
    files.write(stale(record))
    return left


def stop_stack(files: StackFiles, timeout: float = 2 * STOP_TIMEOUT + 5) -> StackRecord | None:
    """`ib down`: ask the supervisor to stop and wait for it (or stop what a dead one left running).
    None when nothing runs."""
    record = files.read()
    if record is None:
        return None
    if not process_alive(record.supervisor):
        left = stop_leftovers(files)
        return record.model_copy(update={"services": tuple(left)}) if left else None
    os.kill(record.supervisor, signal.SIGTERM)
    if not wait_until(lambda: not process_alive(record.supervisor), timeout):
        raise StackError(f"the supervisor (pid {record.supervisor}) did not stop within {timeout:g}s")
    return record


def tail(path: Path, lines: int = 10) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def stale(record: StackRecord) -> StackRecord:
    """The record as it stands when its supervisor is gone: what still runs is left over, the rest stopped."""
    services = []
    for s in record.services:
        if s.state == "off" or (s.pid and runs(s.pid, s.argv)):
            services.append(s)
        else:
            services.append(s.stopped())
    return record.model_copy(update={"services": tuple(services)})
