"""The light RESP client's pure parts: encoding commands and parsing replies, partial input included."""

from __future__ import annotations

import pytest

from bus.errors import ConfigError
from bus.wire.address import Address
from bus.wire.resp import Reply, ServerError, encode_command, parse_reply, refusal


def test_encode_command() -> None:
    assert (
        encode_command("SET", "k", "é", 5) == b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n\xc3\xa9\r\n$1\r\n5\r\n"
    )


@pytest.mark.parametrize(
    ("wire", "reply"),
    [
        (b"+OK\r\n", b"OK"),
        (b":42\r\n", 42),
        (b"$5\r\nhe\r\nl\r\n", b"he\r\nl"),
        (b"$-1\r\n", None),
        (b"*2\r\n$1\r\na\r\n:1\r\n", [b"a", 1]),
        (b"*-1\r\n", None),
        (b"*1\r\n*1\r\n+x\r\n", [[b"x"]]),
    ],
    ids=["simple", "int", "bulk-with-crlf", "nil", "array", "nil-array", "nested"],
)
def test_parse_reply(wire: bytes, reply: object) -> None:
    assert parse_reply(wire) == (reply, len(wire))


def test_error_reply_is_returned_as_value() -> None:
    parsed = parse_reply(b"-ERR wrong\r\n")
    assert parsed is not None and isinstance(parsed[0], ServerError) and str(parsed[0]) == "ERR wrong"


@pytest.mark.parametrize("cut", [1, 3, 6, 9, 12], ids=lambda n: f"cut-{n}")
def test_partial_input_waits_for_more(cut: int) -> None:
    wire = b"*2\r\n$3\r\nabc\r\n:7\r\n"
    assert parse_reply(wire[:cut]) is None


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("redis://127.0.0.1:6380/2", Address("127.0.0.1", 6380, db=2)),
        ("redis://:p%40ss@host", Address("host", 6379, password="p@ss")),
        ("redis://user:pw@host:1/0", Address("host", 1, username="user", password="pw")),
        ("unix:///tmp/r.sock?db=3", Address(path="/tmp/r.sock", db=3)),
        ("unix://:pw@/tmp/r.sock", Address(path="/tmp/r.sock", password="pw")),
        ("rediss://h:6380", Address("h", 6380, tls={})),
        (
            "rediss://u:p@h/1?ssl_cert_reqs=none&ssl_ca_certs=/ca.pem",
            Address(
                "h",
                6379,
                username="u",
                password="p",
                db=1,
                tls={"ssl_cert_reqs": "none", "ssl_ca_certs": "/ca.pem"},
            ),
        ),
        ("redis://[::1]:7000", Address("::1", 7000)),
    ],
    ids=["host-port-db", "password", "acl-user", "unix", "unix-password", "tls", "tls-options", "ipv6"],
)
def test_address_from_url(url: str, address: Address) -> None:
    assert Address.from_url(url) == address


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://x", "scheme 'http' is not supported"),
        ("garbage", "'garbage' is not a URL"),
        ("redis://h:notaport", "port must be a number"),
        ("redis://h:70000", "port must be 1 to 65535"),
        ("redis://h:-1", "port must be a number"),
        ("redis://h/db", "database must be a number"),
        ("unix://relative.sock", "absolute socket path"),
        ("redis://h?ssl_cert_reqs=none", "need a rediss:// URL"),
        ("rediss://h?ssl_cert_reqs=maybe", "ssl_cert_reqs must be one of"),
        ("redis://h?timeout=3", "unknown option 'timeout'"),
        ("redis://hé:1", "bad host name"),
        ("redis://u:hunter2@h:x", "'redis://u:****@h:x'"),
        ("redis://[::1", "an IPv6 host needs [address]:port"),
        ("redis://[::1]x", "an IPv6 host needs [address]:port"),
        ("redis://a]b:1", "bad host name"),
    ],
    ids=[
        "scheme",
        "not-a-url",
        "port",
        "port-range",
        "negative-port",
        "db",
        "unix-relative",
        "tls-option",
        "cert-reqs",
        "unknown-option",
        "host",
        "password-masked",
        "ipv6-unclosed",
        "ipv6-junk-after",
        "bracket-in-host",
    ],
)
def test_bad_url_names_the_setting(url: str, says: str) -> None:
    with pytest.raises(ConfigError, match="IB_REDIS_URL") as caught:
        Address.from_url(url)
    assert says in str(caught.value)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        (ServerError("WRONGPASS invalid username-password pair or user is disabled."), True),
        (ServerError("NOAUTH Authentication required."), True),
        (ServerError("ERR DB index is out of range"), True),
        (ServerError("NOPERM this user has no permissions to run the 'xadd' command"), True),
        (ServerError("LOADING Redis is loading the dataset in memory"), False),
        (ServerError("ERR unknown command"), False),
        (b"OK", False),
    ],
    ids=["wrongpass", "noauth", "db-range", "noperm", "loading", "other-error", "not-an-error"],
)
def test_refusals_are_told_from_outages(reply: Reply, refused: bool) -> None:
    assert refusal(reply) is refused
