"""`bench.scale_bench --restart-redis`: after the measured window the bench's Redis is restarted as a
person's would be (an append-only file, `appendfsync everysec`; SIGTERM, then started again on the same
port and dir), and what came back is measured: the events' rate, the agents and indexes, the alarms, the
two lines of each client, the workers' CPU and anything logged as an error.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import redis

from bus.events.streams import Entry
from bus.wire.keys import Keys

AFTER = float(os.environ.get("IB_BENCH_AFTER", "60"))  # seconds watched after Redis answers again
BEFORE = 10.0  # seconds of the stream before the restart that give the rate to come back to
SLIDE = 3.0  # seconds of the sliding window the rate after the restart is taken over
WITHIN = 0.10  # "back" when the sliding rate is within this share of the rate before
STOPPED = re.compile(r"worker (\S+) stopped answering")
# after the time and the logger's name: "who: lost the connection to Redis (why); …", "who: connected …"
LINES = re.compile(
    r"\S+ \S+ (?:[A-Z]+ )?\S+ (.+?): "
    r"(lost the connection to Redis(?: \(.*\); reconnecting)?|connected to Redis again)"
)
ERRORS = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|Exception")


def server_command(port: int, folder: str, persistent: bool) -> list[str]:
    """The bench's redis-server: no persistence, or (to be restarted) an append-only file in `folder`."""
    aof = ["--appendonly", "yes", "--appendfsync", "everysec"] if persistent else ["--appendonly", "no"]
    return ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", *aof, "--dir", folder]


@dataclass
class Bus:
    """What the restart must not lose: the agents' set, their records, each worker's agent index."""

    agents: int
    records: int
    indexes: dict[str, int]


@dataclass
class Restart:
    designed: float  # state events/s the schedule asks for
    rate_before: float  # state events/s in the BEFORE seconds before the SIGTERM
    down_s: float = 0.0  # SIGTERM → the old server gone (its last fsync)
    outage_s: float = 0.0  # SIGTERM → the new server answers PING
    first_event_s: float | None = None  # SIGTERM → the first event the new server took
    back_s: float | None = None  # SIGTERM → the sliding rate within WITHIN of rate_before
    peak: float = 0.0  # the most events in one second after the restart
    after_rate: float = 0.0  # state events/s over the AFTER seconds
    kinds: Counter[str] = field(default_factory=Counter)  # events after the restart, by type
    first_by_worker: dict[str, float | None] = field(default_factory=dict)  # SIGTERM → each worker's first
    before: Bus | None = None
    after: Bus | None = None
    alarms: int = 0  # "worker X stopped answering" from the restart on (none stopped)
    worker_lines: Counter[str] = field(default_factory=Counter)  # "who: lost …" / "who: connected …"
    bot_lines: Counter[str] = field(default_factory=Counter)
    worker_cpu: list[float] = field(default_factory=list)  # % of a core over the AFTER seconds
    errors: list[str] = field(default_factory=list)  # error lines and tracebacks, workers' and bot's


def restart(
    server: subprocess.Popen[bytes],
    command: Sequence[str],
    url: str,
    workers: Sequence[str],
    pids: Sequence[int],
    logs: Path,
    cpu_seconds: Callable[[int], float],
    designed: float,
) -> tuple[subprocess.Popen[bytes], Restart]:
    """SIGTERM to `server`, the same `command` again, AFTER seconds watched; returns the new server.
    `logs` holds `<worker>.log` of each worker and the bot's `bot.log`."""
    keys = Keys("ib:")
    client = redis.Redis.from_url(url, decode_responses=True)
    state_before = _states(_since(client, keys, int((time.time() - BEFORE) * 1000)))
    result = Restart(designed, len(state_before) / BEFORE, before=_bus(client, keys, workers))
    offsets = {path: _size(path) for path in _log_files(logs, workers)}
    cpu_at = [cpu_seconds(p) for p in pids]
    client.close()
    kill = time.time()
    server.send_signal(signal.SIGTERM)
    server.wait(120)
    result.down_s = time.time() - kill
    down_ms = int(time.time() * 1000)
    server = subprocess.Popen(list(command), stdout=subprocess.DEVNULL)
    client = redis.Redis.from_url(url, decode_responses=True)
    while not _answers(client):
        if server.poll() is not None:
            raise SystemExit(f"the restarted redis-server exited ({server.returncode})")
        time.sleep(0.01)
    result.outage_s = time.time() - kill
    up = time.monotonic()
    time.sleep(max(0.0, AFTER - (time.monotonic() - up)))
    wall = time.monotonic() - up + result.outage_s
    result.worker_cpu = [(cpu_seconds(p) - a) / wall * 100 for p, a in zip(pids, cpu_at, strict=True)]
    result.after = _bus(client, keys, workers)
    _rates(result, _since(client, keys, down_ms), kill, workers)
    client.close()
    _read_logs(result, offsets)
    return server, result


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.BusyLoadingError):
        return False


def _bus(client: redis.Redis, keys: Keys, workers: Sequence[str]) -> Bus:
    ids = sorted(cast(set[str], client.smembers(keys.agents)))
    pipe = client.pipeline(transaction=False)
    for agent in ids:
        pipe.exists(keys.agent(agent))
    records = sum(int(n) for n in pipe.execute())
    indexes = {w: int(client.scard(keys.worker_agents(w))) for w in workers}
    return Bus(len(ids), records, indexes)


def _since(client: redis.Redis, keys: Keys, ms: int) -> list[Entry]:
    return cast(list[Entry], client.xrange(keys.events, f"{ms}-0", "+") or [])


def _states(entries: list[Entry]) -> list[tuple[float, dict[str, object]]]:
    """The `state` events of `entries`: (seconds of the entry's id, the envelope)."""
    found = []
    for entry_id, fields in entries:
        event = json.loads(fields["e"])
        if event.get("type") == "state":
            found.append((int(entry_id.split("-")[0]) / 1000, event))
    return found


def _rates(result: Restart, entries: list[Entry], kill: float, workers: Sequence[str]) -> None:
    """The figures of the events after the restart, each time in seconds from the SIGTERM."""
    seconds = [int(entry_id.split("-")[0]) / 1000 - kill for entry_id, _f in entries]
    result.first_event_s = min(seconds, default=None)
    for _entry_id, fields in entries:
        event = json.loads(fields["e"])
        data = event.get("data") or {}
        kind = str(event.get("type"))
        result.kinds[f"state → {data.get('to_state')}" if kind == "state" and data.get("to_state") in (
            "unreachable", "stopped") else kind] += 1  # fmt: skip
    states = [(t - kill, e) for t, e in _states(entries)]
    result.after_rate = len(states) / AFTER
    result.back_s = back_at([t for t, _e in states], result.rate_before)
    result.peak = float(max(Counter(int(t) for t in seconds).values(), default=0))
    for w in workers:
        mine = [t for t, e in states if str(e.get("agent", "")).startswith(f"{w}-")]
        result.first_by_worker[w] = min(mine, default=None)


def back_at(times: Sequence[float], rate: float, step: float = 0.5) -> float | None:
    """The end t of the first window (t - SLIDE, t] after the first of `times` in which they come at
    `rate` within WITHIN (neither the gap before the first nor a burst after it counts as back), trying
    every `step` seconds; None if none. Pure."""
    if not times or rate <= 0:
        return None
    ordered = sorted(times)
    t = ordered[0] + SLIDE
    while t <= ordered[-1]:
        count = sum(1 for x in ordered if t - SLIDE < x <= t)
        if abs(count / SLIDE - rate) <= WITHIN * rate:
            return t
        t += step
    return None


def _log_files(logs: Path, workers: Sequence[str]) -> list[Path]:
    return [logs / f"{w}.log" for w in workers] + [logs / "bot.log"]


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _read_logs(result: Restart, offsets: dict[Path, int]) -> None:
    for path, offset in offsets.items():
        with path.open("rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
        bot = path.name == "bot.log"
        for line in text.splitlines():
            result.alarms += bool(STOPPED.search(line))
            said = LINES.search(line)
            if said:
                what = said.group(2).removesuffix("; reconnecting")
                (result.bot_lines if bot else result.worker_lines)[f"{said.group(1)}: {what}"] += 1
            elif ERRORS.search(line):
                result.errors.append(f"{path.stem}: {line.strip()}")


def report(r: Restart) -> None:
    print(f"  -- Redis restarted (SIGTERM, appendonly yes, appendfsync everysec; watched {AFTER:g} s after)")
    print(
        f"  outage: the old server gone {r.down_s:.2f} s after SIGTERM,"
        f" the new one answering at {r.outage_s:.2f} s"
    )
    first = "none" if r.first_event_s is None else f"{r.first_event_s:.2f} s"
    back = "never" if r.back_s is None else f"{r.back_s:.1f} s"
    print(
        f"  state events/s: {r.rate_before:,.0f} in the {BEFORE:g} s before (designed {r.designed:,.0f});"
        f" {r.after_rate:,.0f} over the {AFTER:g} s after; peak {r.peak:,.0f} events in one second"
    )
    print(
        f"  SIGTERM → first event: {first}; → state events within {WITHIN:.0%} of the rate before"
        f" ({SLIDE:g} s sliding): {back}"
    )
    firsts = [t for t in r.first_by_worker.values() if t is not None]
    silent = [w for w, t in r.first_by_worker.items() if t is None]
    span = f"{min(firsts):.2f}–{max(firsts):.2f} s" if firsts else "none"
    print(
        f"  workers whose agents changed state again: {len(firsts)} of {len(r.first_by_worker)}"
        f" (first state event of each: {span}){'; silent: ' + ', '.join(silent) if silent else ''}"
    )
    print(f"  events after the restart by type: {', '.join(f'{k} {n:,}' for k, n in r.kinds.most_common())}")
    if r.before and r.after:
        print(
            f"  agents on the bus (set / records): {r.before.agents:,} / {r.before.records:,} before,"
            f" {r.after.agents:,} / {r.after.records:,} after"
        )
        sizes = ", ".join(
            f"{w} {n}→{r.after.indexes.get(w, 0)}" if r.after.indexes.get(w) != n else f"{w} {n}"
            for w, n in r.before.indexes.items()
        )
        same = "all unchanged" if r.before.indexes == r.after.indexes else "CHANGED"
        print(f"  workers' agent indexes before → after: {same} ({sizes})")
    print(f"  false liveness alarms from the restart on (worker … stopped answering): {r.alarms}")
    print(f"  workers' lines: {_lines(r.worker_lines)}")
    print(f"  bot's lines: {_lines(r.bot_lines)}")
    cpu = ", ".join(f"{c:.1f}" for c in r.worker_cpu)
    print(f"  workers' CPU % of a core over the {AFTER:g} s after: {cpu}   (sum {sum(r.worker_cpu):.1f} %)")
    print(f"  errors and tracebacks logged from the restart on: {len(r.errors)}")
    for line in Counter(r.errors).most_common(10):
        print(f"    {line[1]}× {line[0][:300]}")


def _lines(said: Counter[str]) -> str:
    return ", ".join(f"{n}× {line}" for line, n in sorted(said.items())) or "none"
