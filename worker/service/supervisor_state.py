"""What `ib up` keeps about its services, as plain data: the records in `.ib/stack.json` (pydantic models,
read and written as JSON by pydantic), the restart backoff, each service's health and the rows of `ib ps`.

Pure (pydantic, signal names and URL parsing only): `worker.service.supervisor` runs the processes and
probes them.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

BASE_DELAY = 1.0  # seconds before the first restart after a crash
MAX_DELAY = 60.0
STABLE_AFTER = 30.0  # a service that ran this long before it crashed starts a new crash streak
BOT_SETTINGS = ("IB_TELEGRAM_TOKEN", "IB_TELEGRAM_CHAT_ID", "IB_TELEGRAM_ALLOWED_USERS")  # `ib bot` needs all
BOT_HINT = "set IB_TELEGRAM_TOKEN, _CHAT_ID and _ALLOWED_USERS"  # short: it fits the dashboard's 80 columns


def restart_delay(streak: int, base: float = BASE_DELAY, cap: float = MAX_DELAY) -> float:
    """Seconds to wait before starting a service again after `streak` crashes in a row: base, doubled each
    time, capped."""
    if streak <= 0:
        return 0.0
    return min(cap, base * 2.0 ** min(streak - 1, 32))


def next_streak(streak: int, ran_for: float, stable_after: float = STABLE_AFTER) -> int:
    """The crash streak after a crash: a service that had been running for a while starts over at 1."""
    return 1 if ran_for >= stable_after else streak + 1


class ServiceRecord(BaseModel):
    """One service of the stack. `last_exit` is the exit code, negative for a signal (as subprocess says)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    argv: tuple[str, ...] = ()
    state: str = "starting"
    """starting; running: the process is up; backoff: it crashed and waits to be started again; stopped:
    `ib up` ended it; off: not configured (the bot without a token)."""
    pid: int | None = None
    started_at: float = 0.0
    restarts: int = 0
    streak: int = 0
    last_exit: int | None = None
    last_crash_at: float = 0.0
    next_start_at: float = 0.0
    log: str = ""
    note: str = ""

    def started(self, pid: int, now: float) -> ServiceRecord:
        return self.model_copy(
            update={"state": "running", "pid": pid, "started_at": now, "next_start_at": 0.0}
        )

    def crashed(self, code: int, now: float) -> ServiceRecord:
        """The process ended on its own: count it and schedule the restart."""
        streak = next_streak(self.streak, now - self.started_at)
        return self.model_copy(
            update={
                "state": "backoff",
                "pid": None,
                "restarts": self.restarts + 1,
                "streak": streak,
                "last_exit": code,
                "last_crash_at": now,
                "next_start_at": now + restart_delay(streak),
            }
        )

    def stopped(self) -> ServiceRecord:
        return self.model_copy(update={"state": "stopped", "pid": None, "next_start_at": 0.0})


class StackRecord(BaseModel):
    """The content of `.ib/stack.json`: who supervises, on which bus, and each service."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    supervisor: int
    started_at: float
    bus: str = ""
    namespace: str = ""
    worker_id: str = ""
    detached: bool = False
    services: tuple[ServiceRecord, ...] = ()

    def service(self, name: str) -> ServiceRecord | None:
        return next((s for s in self.services if s.name == name), None)

    def with_service(self, record: ServiceRecord) -> StackRecord:
        kept = tuple(record if s.name == record.name else s for s in self.services)
        if self.service(record.name) is None:
            kept += (record,)
        return self.model_copy(update={"services": kept})

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

    @classmethod
    def from_json(cls, raw: str) -> StackRecord:
        """Raises ValueError, one line, when `raw` is not a stack file."""
        try:
            return cls.model_validate_json(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the file"
            raise ValueError(f"not a stack file: {where}: {first['msg']}") from None


@dataclass(frozen=True)
class Probe:
    """What was seen of one service just now. `heartbeat` is None when it has none or the bus is down;
    `bus` is False when the bus did not answer (a running service then waits for it)."""

    alive: bool
    heartbeat: bool | None = None
    bus: bool = True


def health(record: ServiceRecord, probe: Probe, now: float) -> str:
    """One word or a short phrase: ok, down, no bus, no heartbeat, restarting in 4s, off, stopped."""
    if record.state == "backoff":
        return f"restarting in {max(0.0, record.next_start_at - now):.0f}s"
    if record.state in ("off", "stopped"):
        return record.state
    problems = (
        (not probe.alive, "down"),
        (not probe.bus, "no bus"),
        (probe.heartbeat is False, "no heartbeat"),
    )
    return next((word for found, word in problems if found), "ok")


def healthy(record: ServiceRecord, probe: Probe) -> bool | None:
    """True when all is well, False when not, None for a service that is not meant to run."""
    if record.state in ("off", "stopped"):
        return None
    return record.state == "running" and probe.alive and probe.bus and probe.heartbeat is not False


def describe_exit(code: int | None) -> str:
    if code is None:
        return "-"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def span(seconds: float) -> str:
    """A short duration: 42s, 5m, 3h, 2d."""
    s = int(max(0.0, seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


PS_HEADER = ("service", "pid", "state", "health", "restarts", "up", "last crash")


def ps_rows(stack: StackRecord, probes: dict[str, Probe], now: float) -> list[tuple[str, ...]]:
    """The table of `ib ps`, one row a service."""
    rows: list[tuple[str, ...]] = []
    for s in stack.services:
        probe = probes.get(s.name, Probe(alive=False))
        if s.state == "off":
            rows.append((s.name, "-", "off", "off", "-", "-", "-"))
            continue
        crash = (
            "-" if not s.last_crash_at else f"{describe_exit(s.last_exit)}, {span(now - s.last_crash_at)} ago"
        )
        up = span(now - s.started_at) if s.state == "running" and s.started_at else "-"
        pid = str(s.pid) if s.pid else "-"
        rows.append((s.name, pid, s.state, health(s, probe, now), str(s.restarts), up, crash))
    return rows


def service_line(record: ServiceRecord, probe: Probe, now: float) -> str:
    """One service in a few words, for the dashboard's header: `worker 4242 ok`, `bot off`."""
    if record.state == "off":
        return f"{record.name} off" + (f": {record.note}" if record.note else "")
    state = health(record, probe, now)
    pid = f" {record.pid}" if record.pid else ""
    crashes = f", {record.restarts} restart{'s' if record.restarts != 1 else ''}" if record.restarts else ""
    last = f" ({describe_exit(record.last_exit)}{crashes})" if record.restarts else ""
    return f"{record.name}{pid} {state}{last}"


def bus_label(url: str, embedded: bool) -> str:
    """Where the bus is, without any password: `embedded 127.0.0.1:41234` or `redis host:6379`."""
    parts = urlsplit(url)
    where = f"{parts.hostname or '?'}:{parts.port or 6379}"
    if parts.scheme == "unix":
        where = parts.path
    return f"{'embedded' if embedded else 'redis'} {where}"


def table_lines(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Rows under a header, columns padded to their widest cell, never wrapped."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]
    ]
