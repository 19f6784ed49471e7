"""A stand-in for one sentinel caught in the middle of a failover, in the state real Sentinel reports
while it moves the other replicas over to the promoted one (seconds, and not on demand): asked which server
is the primary (`SENTINEL GET-MASTER-ADDR-BY-NAME`) it names the promoted one; asked for its view of the
service (`SENTINEL MASTERS`) it still shows the old primary, flagged down."""

from __future__ import annotations

import socket
import socketserver
import threading

from bus.wire.resp import parse_reply


def _bulk(text: str) -> bytes:
    data = text.encode()
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _array(items: list[bytes]) -> bytes:
    return b"*%d\r\n" % len(items) + b"".join(items)


def _map(fields: dict[str, str]) -> bytes:
    """A RESP3 map (what a sentinel answers a RESP3 client)."""
    return b"%%%d\r\n" % len(fields) + b"".join(_bulk(k) + _bulk(v) for k, v in fields.items())


PLAIN = {
    "HELLO": b"%1\r\n" + _bulk("proto") + b":3\r\n",  # redis-py 8 speaks RESP3 to sentinels
    "PING": b"+PONG\r\n",
    "CLIENT": b"+OK\r\n",  # redis-py names itself on connecting (CLIENT SETINFO)
}


class MidFailoverSentinel(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, service: str, promoted: tuple[str, int], old: tuple[str, int]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.service, self.promoted, self.old = service, promoted, old
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def answer(self, words: list[str]) -> bytes:
        asked = [w.upper() for w in words[:2]]
        if asked == ["SENTINEL", "GET-MASTER-ADDR-BY-NAME"]:
            return self._named(words[2])
        if asked == ["SENTINEL", "MASTERS"]:
            return self._masters()
        plain = PLAIN.get(asked[0] if asked else "")
        return plain or b"-ERR this stand-in does not answer " + " ".join(words[:2]).encode() + b"\r\n"

    def _named(self, service: str) -> bytes:
        if service != self.service:
            return b"*-1\r\n"
        return _array([_bulk(self.promoted[0]), _bulk(str(self.promoted[1]))])

    def _masters(self) -> bytes:
        fields = {
            "name": self.service,
            "ip": self.old[0],
            "port": str(self.old[1]),
            "flags": "master,s_down,o_down,failover_in_progress",
            "num-other-sentinels": "2",
            "quorum": "2",
        }
        return _array([_map(fields)])

    def __enter__(self) -> MidFailoverSentinel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(socketserver.BaseRequestHandler):
    server: MidFailoverSentinel
    request: socket.socket

    def handle(self) -> None:
        buf = b""
        while chunk := self.request.recv(65536):
            buf += chunk
            while (parsed := parse_reply(buf)) is not None:
                command, used = parsed
                buf = buf[used:]
                words = (
                    [w.decode() for w in command if isinstance(w, bytes)] if isinstance(command, list) else []
                )
                self.request.sendall(self.server.answer(words))
