"""Liveness that tells slow from dead: the worker's heartbeat is renewed on its own thread, so a loop slowed
past the heartbeat's TTL keeps it; a loop stuck for `stall` seconds, or a process stopped (SIGSTOP) for
longer than the TTL, loses it and the sweep marks the worker down; stopped for less, nobody notices."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import redis

from bus.commands import workers
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.heartbeat import Heartbeat
from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.waiting import retry_until
from worker.service.pulse import Pulse

TTL = 5  # seconds: the worker's smallest heartbeat TTL


def test_a_slow_loop_keeps_its_heartbeat_and_a_stuck_one_loses_it(rds: redis.Redis, keys: Keys) -> None:
    heartbeat = Heartbeat(rds, keys.worker("w-slow"), ttl=2)
    assert heartbeat.acquire() is None
    rds.sadd(keys.workers, "w-slow")
    stopping = threading.Event()
    pulse = Pulse(heartbeat, keys, "w-slow", stopping, stall=30.0)
    pulse.start()
    try:
        time.sleep(5)  # the loop takes longer than the TTL twice over
        assert rds.exists(keys.worker("w-slow"))
        assert workers.sweep(rds, keys, 1000) == []
        pulse.stall = 1.0  # now it is stuck
        retry_until(
            lambda: workers.sweep(rds, keys, 1000) == ["w-slow"], 10, 0.2, "the stuck worker marked down"
        )

        def going_round_again() -> int:
            """A turn of the loop at each look, as the worker makes one each tick: a single turn left the
            next beat, a second later, to find the loop stuck again (seen once in a full run)."""
            pulse.progress()
            return int(rds.exists(keys.worker("w-slow")))

        retry_until(going_round_again, 5, 0.1, "the heartbeat back")
    finally:
        stopping.set()
        pulse.end()
    assert not rds.exists(keys.worker("w-slow"))


def _sweeps_until(rds: redis.Redis, keys: Keys, seconds: float) -> list[str]:
    """Every worker the sweep marks down while `seconds` pass (a sweep each 0.2 s, as other workers do)."""
    down: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        down += workers.sweep(rds, keys, 1000)
        time.sleep(0.2)
    return down


def test_a_worker_stopped_for_less_than_its_ttl_is_not_declared_dead_for_more_it_is(
    ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    ib.env.update(
        {
            "IB_WORKER_ID": "w-stopped",
            "IB_HEARTBEAT_TTL": str(TTL),
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_STATUS_NODE_AUTO": "false",
        }
    )
    store = AgentStore(rds, keys)
    store.save(Agent(id="a1", worker="w-stopped", session="ib-none", state="stopped"))
    fresh = (TTL - 1) * 1000  # ms a heartbeat renewed a moment ago still has to live

    def renewed() -> bool:
        return int(rds.pttl(keys.worker("w-stopped"))) > fresh

    with worker_running(ib, tmp_path / "worker.log", rds, keys) as worker:
        retry_until(lambda: workers.seen_ago_ms(rds, keys, "w-stopped") is not None, 10, 0.1, "seen")
        # stopped right after a renewal (a loaded machine may have delayed the last one): the stop, shorter
        # than what is left of the heartbeat's life, must go unnoticed
        retry_until(renewed, 30, 0.02, "a fresh heartbeat")
        worker.proc.send_signal(signal.SIGSTOP)
        try:
            assert _sweeps_until(rds, keys, TTL - 3) == []  # stopped for less than its TTL
        finally:
            worker.proc.send_signal(signal.SIGCONT)
        retry_until(renewed, 30, 0.02, "a renewal after the stop")
        assert _sweeps_until(rds, keys, 1) == []

        stopped_at = time.monotonic()
        worker.proc.send_signal(signal.SIGSTOP)
        try:
            retry_until(
                lambda: workers.sweep(rds, keys, 1000) == ["w-stopped"],
                TTL + 10,
                0.2,
                "the stopped worker down",
            )
            assert time.monotonic() - stopped_at >= TTL - 2  # not before the heartbeat had time to expire
            assert store.get("a1").state == "unreachable"
        finally:
            worker.proc.send_signal(signal.SIGCONT)
        retry_until(lambda: store.get("a1").state == "stopped", 15, 0.1, "its agent reachable again")
        assert rds.exists(keys.worker("w-stopped"))
