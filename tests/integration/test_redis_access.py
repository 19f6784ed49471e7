"""Passwords, ACL users, unix sockets and TLS work for every process: the hot path (`ib notify`, the
Stop hook, on the light client) and redis-py (`ib listen`) alike, against a redis-server of the test's own."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import free_port
from tests.cli import IbRunner
from tests.redis_server import RedisServer, system_binary

PASSWORD = "s3cret/p@ss"  # characters that must be percent-encoded in a URL
QUOTED = "s3cret%2Fp%40ss"


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    request = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
    names = ["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
    subprocess.run(
        ["openssl", *request, *names, "-keyout", str(key), "-out", str(cert)],
        capture_output=True,
        check=True,
    )
    return cert, key


class Secured:
    def __init__(self, server: RedisServer, socket: Path, tls_port: int, cert: Path) -> None:
        self.server, self.socket, self.tls_port, self.cert = server, socket, tls_port, cert


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    """One server: a password for the default user, an ACL user, a unix socket and a TLS port."""
    folder = tmp_path_factory.mktemp("secured")
    cert, key = _certificate(folder)
    socket, tls_port = folder / "redis.sock", free_port()
    args = ["--user", "default", "on", f">{PASSWORD}", "~*", "&*", "+@all"]
    args += ["--user", "alice", "on", ">alice-pw", "~*", "&*", "+@all"]
    args += ["--unixsocket", str(socket), "--unixsocketperm", "700"]
    args += ["--tls-port", str(tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key)]
    args += ["--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"]
    server = RedisServer(folder, args, binary=system_binary(), password=QUOTED).start()
    yield Secured(server, socket, tls_port, cert)
    server.stop()


def _urls(s: Secured) -> dict[str, str]:
    port = s.server.port
    return {
        "password": f"redis://:{QUOTED}@127.0.0.1:{port}/0",
        "acl-user": f"redis://alice:alice-pw@127.0.0.1:{port}/0",
        "unix": f"unix://:{QUOTED}@{s.socket}",
        "tls": f"rediss://:{QUOTED}@127.0.0.1:{s.tls_port}/0?ssl_ca_certs={s.cert}",
        "tls-no-verify": f"rediss://alice:alice-pw@localhost:{s.tls_port}/0?ssl_cert_reqs=none",
    }


@pytest.mark.parametrize("kind", ["password", "acl-user", "unix", "tls", "tls-no-verify"])
def test_notify_hook_and_listen_on_a_secured_redis(
    secured: Secured, repo: Path, tmp_path: Path, namespace: str, kind: str
) -> None:
    url = _urls(secured)[kind]
    ib = IbRunner(repo, {"IB_REDIS_URL": url, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path)})
    done = ib.run("notify", "--type", "question", f"over {kind}")
    assert (done.returncode, done.stderr) == (0, "")
    stop = json.dumps({"session_id": "s", "cwd": str(repo), "last_assistant_message": "ok\nWAITING"})
    hooked = ib.run("hook", "stop", stdin=stop, env={"IB_AGENT_ID": "a1"})
    assert (hooked.returncode, hooked.stderr) == (0, "")
    heard = ib.run("listen", "--timeout", "5", "--types", "question,waiting")
    assert heard.returncode == 0, heard.stderr
    assert [json.loads(line)["msg"] for line in heard.stdout.splitlines()] == [
        f"over {kind}",
        "Agent a1 is waiting",
    ]
    assert not list(tmp_path.glob("*.jsonl"))  # nothing was spooled


@pytest.mark.parametrize(
    ("url", "says"),
    [("rediss://:{password}@127.0.0.1:{tls_port}/0", "CERTIFICATE_VERIFY_FAILED")],
    ids=["untrusted-certificate"],
)
def test_refused_connections_spool_with_the_reason(
    secured: Secured, repo: Path, tmp_path: Path, namespace: str, url: str, says: str
) -> None:
    target = url.format(port=secured.server.port, tls_port=secured.tls_port, password=QUOTED)
    ib = IbRunner(repo, {"IB_REDIS_URL": target, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path)})
    done = ib.run("notify", "kept")
    assert done.returncode == 0
    assert says in done.stderr and "kept in" in done.stderr and len(done.stderr.splitlines()) == 1
    assert PASSWORD not in done.stderr and QUOTED not in done.stderr
    (spooled,) = tmp_path.glob("*.jsonl")
    assert json.loads(json.loads(spooled.read_text())["event"])["msg"] == "kept"


REFUSED = {
    "wrong-password": ("redis://:wrong@127.0.0.1:{port}/0", "WRONGPASS"),
    "no-password": ("redis://127.0.0.1:{port}/0", "NOAUTH"),
    "unknown-user": ("redis://mallory:{password}@127.0.0.1:{port}/0", "WRONGPASS"),
    "no-such-database": ("redis://:{password}@127.0.0.1:{port}/99999", "DB index is out of range"),
}


@pytest.mark.parametrize("kind", REFUSED.keys())
def test_wrong_credentials_or_database_are_a_setting_to_fix_not_an_outage(
    secured: Secured, repo: Path, tmp_path: Path, namespace: str, kind: str
) -> None:
    url, says = REFUSED[kind]
    target = url.format(port=secured.server.port, password=QUOTED)
    ib = IbRunner(repo, {"IB_REDIS_URL": target, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path)})
    stop = json.dumps({"session_id": "s", "cwd": str(repo), "last_assistant_message": "ok\nWAITING"})
    for done in (
        ib.run("notify", "never sent"),
        ib.run("list"),
        ib.run("listen", "--timeout", "1"),
        ib.run("hook", "stop", stdin=stop, env={"IB_AGENT_ID": "a1"}),
    ):
        assert says in done.stderr and "IB_REDIS_URL" in done.stderr, done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert PASSWORD not in done.stderr and QUOTED not in done.stderr
        assert "kept in" not in done.stderr
    assert [c.returncode for c in (ib.run("notify", "x"), ib.run("list"))] == [1, 1]
    assert not list(tmp_path.glob("*.jsonl"))  # nothing was spooled: it could never be sent
