"""People let into `ib web` by name, over HTTP with a real `ib web` and a real worker: the owner's invitation
admits the person alone, the person's click reaches the bus as theirs (`web:NAME`), and a revocation
refuses their next request — cookie, address or open event stream — without a restart of `ib web`. Every
bad input to `--invite`, `--revoke` and the people file is one line and changes nothing."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import redis

from bus.commands.command_wire import COMMAND_FIELD
from bus.connection.embedded import free_port
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.prompts import PromptStore
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.streams import stream_entries
from tests.waiting import retry_until
from tests.web_process import WebProcess

WAIT = 30.0
UNAUTHORIZED = "401 unauthorized: open the address ib web printed\n"


def _token(address: str) -> str:
    return parse_qs(urlsplit(address).query)["t"][0]


def _page(web: WebProcess, token: str) -> httpx.Response:
    return httpx.get(web.base + "/", headers={"cookie": f"ib_web_{web.port}={token}"}, timeout=WAIT)


def _click(web: WebProcess, token: str, agent: str, prompt: str) -> httpx.Response:
    csrf = _page(web, token).text.split('data-csrf="')[1].split('"')[0]
    headers = {"cookie": f"ib_web_{web.port}={token}", "origin": web.base}
    form = {"csrf": csrf, "agent": agent, "prompt": prompt, "choice": "deny"}
    return httpx.post(web.base + "/act", headers=headers, data=form, timeout=WAIT)


def _senders(rds: redis.Redis, keys: Keys, worker: str) -> list[str]:
    entries = stream_entries(rds, keys.commands(worker))
    return [json.loads(fields[COMMAND_FIELD])["from"] for _id, fields in entries]


def test_a_person_let_in_clicks_as_themselves_until_revoked(
    agents_ib: IbRunner, running_worker: Worker, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    worker = agents_ib.env["IB_WORKER_ID"]
    AgentStore(rds, keys).save(Agent(id="idler", goal="wait", worker=worker, state="idle"))
    prompt = PromptStore(rds, keys).record("idler", "permission", "ls", (), tool="Bash", question="Proceed?")
    assert prompt is not None
    port = free_port()
    invited = agents_ib.run("web", "--invite", "alice", env={"IB_WEB_PORT": str(port)})
    assert invited.returncode == 0, invited.stderr
    address = invited.stdout.strip()
    assert address.startswith(f"http://127.0.0.1:{port}/?t=")
    alice = _token(address)
    kept = (agents_ib.cwd / ".ib" / "web-people").read_text()
    assert alice not in kept and "alice " in kept
    web = WebProcess(agents_ib, tmp_path / "web.log", env={"IB_WEB_PORT": str(port)})
    web.start()
    try:
        first = httpx.get(address)
        assert first.status_code == 303 and first.headers["location"] == "/"
        assert first.headers["set-cookie"].startswith(f"ib_web_{port}={alice};")
        assert "signed in as alice" in _page(web, alice).text
        assert "signed in as the owner" in _page(web, web.token).text
        assert _click(web, alice, "idler", prompt.id).status_code == 200
        assert _click(web, web.token, "idler", prompt.id).status_code == 200
        assert _senders(rds, keys, worker) == ["web:alice", "web"]
        retry_until(lambda: "deny from web:alice" in running_worker.log.read_text(), WAIT, 0.1, "the worker")

        opened, ended = threading.Event(), threading.Event()

        def follow() -> None:
            cookie = {"cookie": f"ib_web_{port}={alice}"}
            with httpx.stream("GET", web.base + "/stream", headers=cookie, timeout=WAIT) as stream:
                opened.set()
                for _line in stream.iter_lines():
                    pass  # read on until the revoke ends the stream
            ended.set()

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        assert opened.wait(WAIT)
        revoked = agents_ib.run("web", "--revoke", "alice")
        assert revoked.returncode == 0, revoked.stderr
        assert revoked.stdout.startswith("alice is let in no more")
        for refused in (_page(web, alice), httpx.get(address)):
            assert refused.status_code == 401 and refused.text == UNAUTHORIZED
        assert "set-cookie" not in httpx.get(address).headers
        assert _page(web, web.token).status_code == 200
        publish(rds, keys, make_event("message", "after the revocation"), 1000)
        assert ended.wait(WAIT), "her open event stream went on"
    finally:
        web.stop()
    logged = (tmp_path / "web.log").read_text()
    print(logged)
    assert "deny on idler by web:alice" in logged and "let alice in" in logged
    assert "ended alice's /stream: let in no more" in logged and "Traceback" not in logged
    assert alice not in logged and web.token not in logged


def _error(ib: IbRunner, *args: str) -> str:
    """The one line `ib web ARGS` says on failing; nothing on stdout."""
    done = ib.run("web", *args)
    assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ib web: error: "), done.stderr
    return lines[0].removeprefix("ib web: error: ")


def test_each_bad_invitation_revocation_or_file_is_one_line_and_loses_nothing(ib: IbRunner) -> None:
    shown = ib.run("web", "--help", env={"COLUMNS": "200"}).stdout
    assert all(option in shown for option in ("--invite", "--revoke", "--people", "--hide-token"))
    assert ib.run("web", "--invite", "bob").returncode == 0
    people = ib.cwd / ".ib" / "web-people"
    kept = people.read_text()
    assert os.stat(people).st_mode & 0o777 == 0o600
    assert _error(ib, "--invite", "bob") == "bob is let in already: --revoke bob first for a new address"
    assert _error(ib, "--invite", "../x").startswith("bad name '../x': use 1-64 characters")
    assert _error(ib, "--revoke", "carol") == "'carol' is not let in (who is: bob); nothing was changed"
    assert people.read_text() == kept
    listed = ib.run("web", "--people")
    assert listed.returncode == 0 and listed.stdout == "bob\n"

    people.write_text(kept + "carol not-a-hash\n")
    said = (
        f"{people} line 3: a name and a SHA-256 (64 hex digits) are expected; fix the line or delete the file"
    )
    assert _error(ib, "--invite", "dave") == said
    assert _error(ib) == said  # ib web itself does not start on it
    assert people.read_text() == kept + "carol not-a-hash\n"
    people.write_text(kept)
    people.chmod(0o644)
    assert _error(ib, "--people") == f"{people} may be read by others: chmod 600 {people}"
