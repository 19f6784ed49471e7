"""`ib config`: effective values with their source, secrets masked; bad values name the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import IbRunner


def test_sources_default_env_and_dotenv(ib: IbRunner, repo: Path) -> None:
    (repo / ".env").write_text("IB_LISTEN_TIMEOUT=42\nIB_TELEGRAM_TOKEN='123456:ABCDEFsecretTAIL'\n")
    done = ib.run("config", "--json", env={"IB_EVENTS_MAXLEN": "5000"})
    assert done.returncode == 0, done.stderr
    rows = {r["setting"]: r for r in json.loads(done.stdout)}
    assert rows["IB_EVENTS_MAXLEN"] == {"setting": "IB_EVENTS_MAXLEN", "value": "5000", "source": "env"}
    assert rows["IB_LISTEN_TIMEOUT"]["value"] == "42.0"
    assert rows["IB_LISTEN_TIMEOUT"]["source"].startswith(".env")
    assert rows["IB_HEARTBEAT_TTL"]["source"] == "default"
    token = rows["IB_TELEGRAM_TOKEN"]["value"]
    assert "secret" not in token and token.endswith("TAIL")
    table = ib.run("config").stdout
    assert "IB_EVENTS_MAXLEN" in table and "secret" not in table


def test_dotenv_of_root_applies_in_worktrees(ib: IbRunner, repo: Path) -> None:
    (repo / ".env").write_text("IB_LISTENER_NAME=from-root\n")
    inside = repo / ".ib" / "agents" / "a1" / "repo"
    inside.mkdir(parents=True)
    rows = {r["setting"]: r for r in json.loads(ib.run("config", "--json", cwd=inside).stdout)}
    assert rows["IB_LISTENER_NAME"]["value"] == "from-root"


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("IB_EVENTS_MAXLEN", "abc", "must be a whole number"),
        ("IB_EVENTS_MAXLEN", "5", "must be at least 100"),
        ("IB_LISTEN_TIMEOUT", "-1", "must be more than 0"),
        ("IB_NAMESPACE", "two words", "whitespace"),
        ("IB_NAMESPACE", "glob*", "* ? [ ]"),
        ("IB_TELEGRAM_ALLOWED_USERS", "12,bob", "numeric user ids"),
    ],
    ids=["maxlen-text", "maxlen-small", "timeout-negative", "ns-space", "ns-glob", "users"],
)
def test_bad_values_fail_naming_the_setting(ib: IbRunner, name: str, value: str, says: str) -> None:
    done = ib.run("config", env={name: value})
    assert done.returncode == 1
    assert done.stderr.startswith("ib config: error: bad configuration: ")
    assert name in done.stderr and says in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "namespace", ["ïb{x}:", "a:b:c:", "🤖/ns|"], ids=["unicode-braces", "colons", "emoji-slash"]
)
def test_odd_but_legal_namespaces_work(ib: IbRunner, namespace: str, rds: object) -> None:
    import redis as redis_lib

    env = {"IB_NAMESPACE": namespace}
    assert ib.run("notify", "odd", env=env).returncode == 0
    out = ib.run("listen", "--timeout", "5", env=env).stdout
    assert json.loads(out)["msg"] == "odd"
    client = redis_lib.Redis.from_url(ib.env["IB_REDIS_URL"])
    for key in client.scan_iter(match=namespace.encode() + b"*"):
        client.delete(key)
    client.close()
