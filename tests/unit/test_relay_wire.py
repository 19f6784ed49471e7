"""The relay's wire and what it reads about a connection (worker.boundary.relay_wire): pure."""

from __future__ import annotations

import pytest

from bus.settings.relay_port import relay_port
from worker.boundary.relay_client import RelayDown, _direct, reads_stdin
from worker.boundary.relay_wire import (
    BadLine,
    Chunk,
    Reply,
    Request,
    connect_line,
    connect_status,
    decode_piece,
    decode_reply,
    decode_request,
    encode_chunk,
    encode_reply,
    encode_request,
    proc_address,
    proxy_authority,
    socket_inode,
)
from worker.programs.claude.sandbox import network_settings

# /proc/net/tcp as Linux writes it: the relay listening on 127.0.0.1:41000 (0xA028), one connection
# from the proxy's 127.0.0.1:52000 (0xCB20), both ends, and a TIME_WAIT leftover of another one
TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A028 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 70001 1 0
   1: 0100007F:CB20 0100007F:A028 01 00000000:00000000 00:00000000 00000000     0        0 70002 1 0
   2: 0100007F:A028 0100007F:CB20 01 00000000:00000000 00:00000000 00000000     0        0 70003 1 0
   3: 0100007F:CB21 0100007F:A028 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0
"""


def test_a_request_and_a_reply_go_through_the_wire_unchanged() -> None:
    request = Request(("notify", "-", "ünï"), "/w/repo", b"line\n\x00\xff")
    assert decode_request(encode_request(request)) == request
    assert decode_request(encode_request(Request(("list",), "/w"))).stdin is None
    reply = Reply(3, b"out\n", b"ib kill: error: no\n")
    assert decode_reply(encode_reply(reply)) == reply
    assert encode_request(request).count(b"\n") == 1  # one line, whatever the bytes


@pytest.mark.parametrize(
    "line",
    [
        b"not json\n",
        b"[1]\n",
        b'{"argv": [], "cwd": "/w"}\n',
        b'{"argv": ["notify", 1], "cwd": "/w"}\n',
        b'{"argv": ["notify"], "cwd": "relative"}\n',
        b'{"argv": ["notify"], "cwd": "/w", "stdin": "***"}\n',
        b"\xff\n",
    ],
)
def test_what_is_not_a_request_is_refused_in_words(line: bytes) -> None:
    with pytest.raises(BadLine):
        decode_request(line)


@pytest.mark.parametrize(
    "line", [b'{"code": true, "stdout": "", "stderr": ""}', b'{"code": 0, "stdout": 1}', b"{}"]
)
def test_what_is_not_a_reply_is_refused(line: bytes) -> None:
    with pytest.raises(BadLine):
        decode_reply(line)


def test_output_on_the_way_then_the_exit_code() -> None:
    chunk = Chunk("stderr", b"partial \xff line")
    assert decode_piece(encode_chunk(chunk)) == chunk
    assert decode_piece(encode_reply(Reply(2, b"", b"no\n"))) == Reply(2, b"", b"no\n")
    assert encode_chunk(Chunk("stdout", b"a\nb\n")).count(b"\n") == 1


@pytest.mark.parametrize(
    "line",
    [b"{}", b'{"stdin": ""}', b'{"stdout": 1}', b'{"stdout": "", "stderr": ""}', b'{"stdout": "***"}', b"[]"],
)
def test_what_is_neither_output_nor_a_reply_is_refused(line: bytes) -> None:
    with pytest.raises(BadLine):
        decode_piece(line)


def test_proc_addresses_are_written_as_linux_writes_them() -> None:
    assert proc_address("127.0.0.1", 41000) == "0100007F:A028"
    assert proc_address("10.1.2.3", 80) == "0302010A:0050"


def test_the_peer_socket_is_found_by_both_its_ends() -> None:
    assert socket_inode(TABLE, ("127.0.0.1", 52000), ("127.0.0.1", 41000)) == 70002
    assert socket_inode(TABLE, ("127.0.0.1", 41000), ("127.0.0.1", 52000)) == 70003  # the relay's own end
    assert socket_inode(TABLE, ("127.0.0.1", 52001), ("127.0.0.1", 41000)) is None  # TIME_WAIT: no owner
    assert socket_inode(TABLE, ("127.0.0.1", 52002), ("127.0.0.1", 41000)) is None


def test_the_sandbox_proxy_url_gives_its_address_and_credentials() -> None:
    url = "http://srt.Nzc0:37100a1b@127.0.0.1:3128"
    assert proxy_authority(url) == ("127.0.0.1", 3128, "Basic c3J0Lk56YzA6MzcxMDBhMWI=")
    assert proxy_authority("http://127.0.0.1:3128") == ("127.0.0.1", 3128, "")
    for wrong in ("", "socks5h://localhost:1080", "http://127.0.0.1", "http://h:notaport"):
        assert proxy_authority(wrong) is None
    assert connect_line("127.0.0.1:9", "") == b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n"


def test_the_proxys_answer_is_read() -> None:
    assert connect_status(b"HTTP/1.1 200 Connection Established\r\n\r\n") == (200, "Connection Established")
    assert connect_status(b"HTTP/1.1 403 host is not on the allow list\r\nX: y\r\n\r\n")[0] == 403
    with pytest.raises(BadLine):
        connect_status(b"SSH-2.0-OpenSSH\r\n\r\n")


def test_stdin_is_sent_only_to_a_command_that_reads_it() -> None:
    assert reads_stdin(["notify", "-"]) and reads_stdin(["task", "add", "t", "--body-file=-"])
    assert not reads_stdin(["notify", "a", "-x"]) and not reads_stdin(["-"])
    assert reads_stdin(["hook", "gemini"])  # a hook's payload comes on stdin, with no `-` to say so
    assert reads_stdin(["hook", "codex"])
    assert not reads_stdin(["hook", "codex-notify", '{"type": "agent-turn-complete"}'])  # its last argument


def test_a_hook_s_payload_goes_through_the_wire_as_it_was_read() -> None:
    payload = b'{"hook_event_name": "AfterAgent", "prompt_response": "d\xc3\xa9j\xc3\xa0\\n"}\n'
    line = encode_request(Request(("hook", "gemini"), "/w/repo", payload))
    assert decode_request(line) == Request(("hook", "gemini"), "/w/repo", payload)
    assert decode_request(encode_request(Request(("hook", "gemini"), "/w/repo", b""))).stdin == b""


@pytest.mark.parametrize(
    "relay",
    ["", "41000", "127.0.0.1:", "127.0.0.1:port", ":41000"],
    ids=["unset", "no-host", "no-port", "not-a-port", "empty-host"],
)
def test_a_relay_address_that_is_not_host_port_is_one_line(relay: str) -> None:
    with pytest.raises(RelayDown, match=r"^IB_RELAY is not host:port \("):
        _direct(relay)


def test_the_sandbox_lets_through_the_relay_and_the_registries_only() -> None:
    network = network_settings("127.0.0.1:41000")
    assert network["strictAllowlist"] is True  # never ask, never let an unlisted host through
    allowed = network["allowedDomains"]
    assert isinstance(allowed, list) and "127.0.0.1:41000" in allowed and "pypi.org" in allowed
    assert not [host for host in allowed if "127.0.0.1" in host and host != "127.0.0.1:41000"]
    assert "127.0.0.1:41000" not in str(network_settings("")["allowedDomains"])


def test_the_relay_port_is_chosen_once_per_repository(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    first = relay_port(str(folder))
    assert 0 < first < 65536 and relay_port(str(folder)) == first
    (folder / "relay-port").write_text("not a port\n")
    assert relay_port(str(folder)) != 0 and (folder / "relay-port").read_text().strip().isdigit()
