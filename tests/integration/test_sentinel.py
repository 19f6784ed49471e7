"""`IB_REDIS_URL=redis+sentinel://...` with real sentinels on loopback: the hooks' light client and the
heavy one find the primary (skipping a sentinel that is down), publishes wait for the replica, no sentinel
answering is an outage (spooled), and a service the sentinels do not know is a setting to fix."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.connection.clients import async_client_for, client_for
from bus.connection.embedded import free_port
from bus.errors import NotReplicated
from bus.events import streams
from bus.events.envelope import make_event
from bus.events.publish import publish
from bus.settings.hotconf import read_hotconf
from bus.wire.address import Address
from bus.wire.keys import Keys
from bus.wire.resp import Connection
from tests.cli import IbRunner
from tests.mid_failover_sentinel import MidFailoverSentinel
from tests.sentinel_servers import SentinelSet
from tests.streams import stream_entries


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelSet]:
    found = SentinelSet(tmp_path_factory.mktemp("sentinel"), replicas=1).start()
    yield found
    found.stop()


def _down_first(deployment: SentinelSet, service: str = "ibsvc") -> str:
    """The deployment's URL with a sentinel that is down listed first."""
    return deployment.url(service).replace("://", f"://127.0.0.1:{free_port()},", 1)


def _messages(deployment: SentinelSet, namespace: str) -> list[str]:
    entries = stream_entries(deployment.primary.client(), namespace + "events")
    return [json.loads(fields["e"])["msg"] for _id, fields in entries]


def test_notify_and_list_reach_the_primary_past_a_sentinel_that_is_down(
    ib: IbRunner, deployment: SentinelSet
) -> None:
    env = {"IB_REDIS_URL": _down_first(deployment)}
    done = ib.run("notify", "through the sentinels", env=env)
    assert done.returncode == 0, done.stderr
    assert "kept in" not in done.stderr
    assert _messages(deployment, ib.env["IB_NAMESPACE"]) == ["through the sentinels"]
    replica = deployment.copies[0].client()  # WAIT 1: the replica held it before `ib notify` returned
    assert replica.xlen(ib.env["IB_NAMESPACE"] + "events") == 1
    listed = ib.run("list", env=env)
    assert listed.returncode == 0, listed.stderr


def test_the_heavy_client_finds_the_primary_through_the_sentinels(deployment: SentinelSet) -> None:
    client = client_for(_down_first(deployment))
    assert client.info("replication")["role"] == "master"
    assert client.connection_pool.get_master_address() == ("127.0.0.1", deployment.primary.port)  # type: ignore[attr-defined]


def test_the_workers_publish_waits_for_the_replica(deployment: SentinelSet, namespace: str) -> None:
    client = client_for(deployment.url())
    streams.publish(client, Keys(namespace), make_event("notify", "from the worker"), 1000, (1, 1000))
    assert deployment.copies[0].client().xlen(namespace + "events") == 1
    alone = client_for(deployment.primary.url)  # one replica only: waiting for two cannot succeed
    with pytest.raises(NotReplicated, match="1 of 2 replica"):
        streams.publish(alone, Keys(namespace), make_event("notify", "unconfirmed"), 1000, (2, 50))


def test_a_write_refused_by_a_demoted_primary_is_sent_again_to_the_one_the_sentinels_name(
    deployment: SentinelSet, namespace: str, tmp_path: Path
) -> None:
    """A hook's connection made before a failover now points at a replica (READONLY): asked once more,
    the sentinels name the primary, and the event lands there, once."""
    environ = {"IB_REDIS_URL": deployment.url(), "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path)}
    conf = read_hotconf(environ, cwd="/")
    stale = Connection(Address(port=deployment.copies[0].port), 0.5)
    try:
        done = publish(conf, make_event("notify", "after the failover"), stale)
    finally:
        stale.close()
    assert done.spooled_to is None and done.event_id
    assert _messages(deployment, namespace) == ["after the failover"]


def test_no_sentinel_answering_is_an_outage_and_the_event_is_spooled(ib: IbRunner, tmp_path: Path) -> None:
    url = f"redis+sentinel://127.0.0.1:{free_port()},[::1]:{free_port()}/ibsvc"
    done = ib.run("notify", "kept for later", env={"IB_REDIS_URL": url})
    assert done.returncode == 0, done.stderr
    assert "no sentinel of IB_REDIS_URL answers" in done.stderr and "kept in" in done.stderr
    assert len(list((tmp_path / "spool").glob("*.jsonl"))) == 1


def test_a_service_the_sentinels_do_not_know_is_refused_in_one_line(
    ib: IbRunner, deployment: SentinelSet, tmp_path: Path
) -> None:
    env = {"IB_REDIS_URL": deployment.url("nosuchservice")}
    for args in (("notify", "lost"), ("list",)):
        done = ib.run(*args, env=env)
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1 and "know no service 'nosuchservice'" in done.stderr, done.stderr
    assert not list((tmp_path / "spool").glob("*.jsonl"))


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+sentinel://127.0.0.1:26379", "names no service"),
        ("redis+sentinel://127.0.0.1:26379,127.0.0.1:port/svc", "port must be a number"),
    ],
    ids=["no-service", "bad-host-port"],
)
def test_a_sentinel_url_that_cannot_be_read_is_refused_by_every_command(
    ib: IbRunner, url: str, says: str
) -> None:
    for args in (("notify", "x"), ("list",)):
        done = ib.run(*args, env={"IB_REDIS_URL": url})
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


def test_an_event_no_replica_confirmed_is_kept_and_sent_once_later(ib: IbRunner, tmp_path: Path) -> None:
    """The shared test Redis has no replica: `WAIT 1` times out, so the event counts as not sent yet."""
    waiting = {"IB_REDIS_WAIT_REPLICAS": "1", "IB_REDIS_WAIT_MS": "50"}
    done = ib.run("notify", "unconfirmed", env=waiting)
    assert done.returncode == 0, done.stderr
    assert "0 of 1 replica(s) confirmed it in 50 ms" in done.stderr and "kept in" in done.stderr
    assert len(list((tmp_path / "spool").glob("*.jsonl"))) == 1
    flushed = ib.run("spool", "--flush", env={"IB_REDIS_WAIT_REPLICAS": "0"})
    assert flushed.returncode == 0, flushed.stderr
    client = client_for(ib.env["IB_REDIS_URL"])
    entries = stream_entries(client, ib.env["IB_NAMESPACE"] + "events")
    assert [json.loads(fields["e"])["msg"] for _id, fields in entries] == ["unconfirmed"]
    assert all(not p.read_text() for p in (tmp_path / "spool").glob("*.jsonl"))


def test_a_reader_whose_spool_flush_is_not_confirmed_warns_and_reads(ib: IbRunner, tmp_path: Path) -> None:
    """As behind Sentinel with the new primary left without replicas (issue 34): the flush before reading
    is not confirmed; the reader says so in one line and reads, and the spool keeps the event."""
    waiting = {"IB_REDIS_WAIT_REPLICAS": "1", "IB_REDIS_WAIT_MS": "50"}
    assert ib.run("notify", "unconfirmed", env=waiting).returncode == 0
    listed = ib.run("list", env=waiting)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "no agents"
    assert listed.stderr.count("\n") == 1 and "0 of 1 replica(s) confirmed it" in listed.stderr
    assert "warning" in listed.stderr and "spool keeps it" in listed.stderr
    reader = ib.popen("events", "--since", "0", env=waiting)
    try:
        assert reader.stdout is not None
        first = json.loads(reader.stdout.readline())
    finally:
        reader.terminate()
        reader.wait(timeout=30)
    assert first["msg"] == "unconfirmed"
    assert [p for p in (tmp_path / "spool").glob("*.jsonl") if p.read_text()]


def test_the_heavy_clients_take_the_primary_the_sentinels_name_while_they_flag_the_old_one_down(
    redis_url: str,
) -> None:
    """Mid-failover the sentinels name the promoted replica but still flag the old primary down; the light
    client took the named one, and redis-py's own discovery refused them all ("No master found")."""
    real = Address.from_url(redis_url)
    gone = ("127.0.0.1", free_port())
    with MidFailoverSentinel("ibsvc", (real.host or "127.0.0.1", real.port or 6379), gone) as sentinel:
        url = f"redis+sentinel://127.0.0.1:{sentinel.port}/ibsvc/{real.db}"
        assert client_for(url).ping()

        async def ping_async() -> bool:
            client = async_client_for(url)
            try:
                return bool(await client.ping())
            finally:
                await client.aclose()

        assert asyncio.run(ping_async())
        with pytest.raises(redis.ConnectionError, match="No master found for 'other'"):
            client_for(url.replace("/ibsvc/", "/other/")).ping()
