"""`redis+sentinel://` URLs: the sentinel list (IPv6 hosts, default ports), the service, the database, the
credentials of the primary (percent-encoded), TLS; and the one-line refusals of what cannot be read."""

from __future__ import annotations

import pytest

from bus.errors import ConfigError
from bus.settings import defaults
from bus.wire.address import Address


@pytest.mark.parametrize(
    ("url", "address"),
    [
        (
            "redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/mymaster",
            Address(sentinels=(("10.0.0.1", 26379), ("10.0.0.2", 26380)), service="mymaster"),
        ),
        (
            "redis+sentinel://s1,s2/mymaster/3",
            Address(sentinels=(("s1", 26379), ("s2", 26379)), service="mymaster", db=3),
        ),
        (
            "redis+sentinel://[::1]:26379,[fe80::2]/svc",
            Address(sentinels=(("::1", 26379), ("fe80::2", 26379)), service="svc"),
        ),
        (
            "redis+sentinel://bob:p%40ss%3Aw%2Frd@h:1/svc",
            Address(sentinels=(("h", 1),), service="svc", username="bob", password="p@ss:w/rd"),
        ),
        (
            "redis+sentinel://:secret@h:1/svc?db=2",
            Address(sentinels=(("h", 1),), service="svc", password="secret", db=2),
        ),
        (
            "rediss+sentinel://h:1/svc?ssl_cert_reqs=none",
            Address(sentinels=(("h", 1),), service="svc", tls={"ssl_cert_reqs": "none"}),
        ),
    ],
    ids=["two-sentinels", "default-ports-and-db", "ipv6", "percent-encoded-password", "db-option", "tls"],
)
def test_sentinel_url(url: str, address: Address) -> None:
    assert Address.from_url(url) == address


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+sentinel://h:26379", "names no service"),
        ("redis+sentinel://h:26379/", "names no service"),
        ("redis+sentinel://h:26379,h:x/svc", "port must be a number (got 'x')"),
        ("redis+sentinel://h:26379,h:70000/svc", "port must be 1 to 65535"),
        ("redis+sentinel://h:26379,,h2/svc", "an empty entry in the sentinel list"),
        ("redis+sentinel://[::1:26379/svc", "an IPv6 host needs [address]:port"),
        ("redis+sentinel://h/svc/x", "database must be a number"),
        ("redis+sentinel://h/svc?ssl_cert_reqs=none", "ssl_* options need a rediss:// URL"),
        ("redis+sentinel://u:hunter2@h/svc?timeout=1", "unknown option 'timeout'"),
    ],
    ids=[
        "no-service",
        "empty-service",
        "bad-port",
        "port-range",
        "empty-entry",
        "ipv6",
        "db",
        "tls",
        "option",
    ],
)
def test_bad_sentinel_url_is_refused_in_one_line(url: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Address.from_url(url)
    said = str(caught.value)
    assert said.startswith("IB_REDIS_URL: ") and says in said and "\n" not in said
    assert "hunter2" not in said


@pytest.mark.parametrize(
    ("setting", "url", "replicas"),
    [
        (None, "redis+sentinel://h/svc", 1),
        (None, "rediss+sentinel://h/svc", 1),
        (None, "redis://h:6379", 0),
        (None, None, 0),
        (0, "redis+sentinel://h/svc", 0),
        (2, "redis://h:6379", 2),
    ],
)
def test_publishes_wait_for_a_replica_behind_sentinel_unless_told(
    setting: int | None, url: str | None, replicas: int
) -> None:
    assert defaults.replicas_to_wait(setting, url) == replicas
