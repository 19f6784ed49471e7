"""`ib web` over HTTP, without a browser: the token on every request, the checks of a click, untrusted text
escaped, and the event stream: its ids are the stream's, it resumes after a restart with nothing lost or
shown twice, and it says when the bus stops and goes on when it is back."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from bus.connection.embedded import free_port
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.prompts import PromptStore
from bus.stores.agent_store import Agent, AgentStore
from bus.tasks.merges import MergeStore
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.conflict_pairs import agent_repo_of, base_repo, commit, edit, runtime
from tests.redis_server import RedisServer
from tests.streams import stream_entries
from tests.waiting import retry_until
from tests.web_process import Frame, WebProcess, frames
from worker.conflicts.check import ConflictCheck

WAIT = 30.0


@pytest.fixture
def web(ib: IbRunner, tmp_path: Path) -> Iterator[WebProcess]:
    process = WebProcess(ib, tmp_path / "web.log")
    process.start()
    yield process
    process.stop()
    print((tmp_path / "web.log").read_text())


def _csrf(web: WebProcess) -> str:
    page = httpx.get(web.base + "/", headers=web.cookie)
    return page.text.split('data-csrf="')[1].split('"')[0]


def test_the_printed_address_sets_the_cookie_and_the_page_follows(web: WebProcess) -> None:
    assert web.address.startswith("http://127.0.0.1:") and "/?t=" in web.address
    first = httpx.get(web.address)
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"ib_web_{web.port}={web.token};") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    with httpx.Client(base_url=web.base) as client:
        client.cookies.set(f"ib_web_{web.port}", web.token)
        page = client.get("/")
        assert page.status_code == 200 and "Waits on you" in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert client.get("/static/htmx.min.js").status_code == 200
        assert "Zero-Clause BSD" in client.get("/static/htmx.LICENSE.txt").text


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"cookie": "ib_web_1=nope"},
        {"cookie": "garbage;;=\x7f"},
    ],
    ids=["no-token", "wrong-cookie", "bad-cookie-header"],
)
@pytest.mark.parametrize("path", ["/", "/stream", "/static/page.js", "/?t=wrong", "/nothing"])
def test_a_wrong_or_missing_token_gets_401_and_nothing_else(
    web: WebProcess, headers: dict[str, str], path: str
) -> None:
    answer = httpx.get(web.base + path, headers={**headers})
    assert answer.status_code == 401
    assert answer.text == "401 unauthorized: open the address ib web printed\n"
    assert "set-cookie" not in answer.headers
    assert httpx.post(web.base + "/act", headers=headers, data={"agent": "a"}).status_code == 401


@pytest.mark.parametrize(
    "headers",
    [{"origin": "http://evil.example"}, {"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"}],
    ids=["other-origin", "cross-site", "same-site"],
)
def test_the_token_in_a_query_string_replayed_from_another_site_is_refused(
    web: WebProcess, headers: dict[str, str]
) -> None:
    answer = httpx.get(web.address, headers=headers)
    assert answer.status_code == 401 and "set-cookie" not in answer.headers


def test_a_click_without_its_csrf_field_or_from_another_origin_is_refused(
    web: WebProcess, rds: redis.Redis, keys: Keys
) -> None:
    csrf = _csrf(web)
    own = {**web.cookie, "origin": web.base}
    form = {"agent": "a1", "prompt": "p-1", "choice": "approve"}
    cases = [
        (own, form, "CSRF field is missing"),
        (own, {**form, "csrf": "0" * 64}, "CSRF field is missing or wrong"),
        (web.cookie, {**form, "csrf": csrf}, "carries no Origin"),
        ({**web.cookie, "origin": "http://evil.example"}, {**form, "csrf": csrf}, "evil.example may not act"),
    ]
    for headers, data, said in cases:
        answer = httpx.post(web.base + "/act", headers=headers, data=data)
        assert answer.status_code == 403 and said in answer.text, answer.text
    assert not [k for k in rds.scan_iter(keys.namespace + "cmd:*")]  # nothing was sent
    refused = httpx.post(web.base + "/act", headers=own, data={**form, "csrf": csrf, "agent": "../x"})
    assert refused.status_code == 200 and "no such agent; nothing was sent" in refused.text


HOSTILE = '<img src=x onerror="alert(1)">../../etc/passwd'


def test_untrusted_text_is_escaped_everywhere(web: WebProcess, rds: redis.Redis, keys: Keys) -> None:
    agents = AgentStore(rds, keys)
    bad_id = "a<b>../c"  # not a name ib would make, but the bus is anyone's to write
    agents.save(Agent(id=bad_id, goal=HOSTILE, worker=HOSTILE, state="<i>running</i>", detail=HOSTILE))
    PromptStore(rds, keys).record(
        bad_id, "permission", HOSTILE, (HOSTILE, "No"), tool="Bash", question=HOSTILE
    )
    with httpx.stream("GET", web.base + "/stream", headers={**web.cookie, "last-event-id": "0-0"}) as stream:
        publish(rds, keys, make_event("complete", HOSTILE, agent=bad_id, project=HOSTILE), 1000)
        seen: list[Frame] = []
        for frame in frames(stream):
            seen.append(frame)
            if frame.event == "log":
                break
        board = next(f.data for f in seen if f.event == "board")
        log = seen[-1].data
    page = httpx.get(web.base + "/", headers=web.cookie).text
    for html in (page, board, log):
        assert "<img" not in html and "<i>" not in html and "<b>" not in html
        assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;../../etc/passwd" in html
    assert "a&lt;b&gt;../c" in page and "a&lt;b&gt;../c" in board


def _log_ids(web: WebProcess, after: str, count: int, header: bool = True) -> list[str]:
    """The ids of the next `count` events the stream sends after `after` (as Last-Event-ID or ?after=)."""
    ids: list[str] = []
    headers = {**web.cookie, **({"last-event-id": after} if header else {})}
    url = web.base + "/stream" + ("" if header else f"?after={after}")
    with httpx.stream("GET", url, headers=headers, timeout=WAIT) as stream:
        for frame in frames(stream):
            if frame.event == "log":
                ids.append(frame.id)
                if len(ids) == count:
                    break
    return ids


def _publish(rds: redis.Redis, keys: Keys, count: int, tag: str) -> list[str]:
    return [publish(rds, keys, make_event("message", f"{tag} {n}", agent="a1"), 1000) for n in range(count)]


def test_the_stream_resumes_after_a_restart_with_nothing_lost_or_twice(
    web: WebProcess, rds: redis.Redis, keys: Keys
) -> None:
    start = publish(rds, keys, make_event("message", "before the page"), 1000)
    first = _publish(rds, keys, 5, "first")
    read = _log_ids(web, start, 3)
    assert read == first[:3]
    port = web.port
    web.stop()
    while_down = _publish(rds, keys, 4, "while down")  # nobody reads them now
    web.start(port)
    resumed = _log_ids(web, read[-1], 6)  # what the browser sends: Last-Event-ID, the last id it saw
    assert resumed == first[3:] + while_down[:4]
    assert len(set(read + resumed)) == len(read + resumed)
    stream_ids = [i for i, _ in stream_entries(rds, keys.events)]
    stream_ids = stream_ids[stream_ids.index(start) + 1 :]
    assert read + resumed == stream_ids
    assert _log_ids(web, read[-1], 2, header=False) == first[3:5]  # a new EventSource: ?after= the same


def test_a_bad_last_event_id_is_one_line(web: WebProcess) -> None:
    answer = httpx.get(web.base + "/stream", headers={**web.cookie, "last-event-id": "x; DROP"})
    assert (
        answer.status_code == 400 and answer.text == "bad Last-Event-ID: a stream id (ms-seq) is expected\n"
    )


def test_the_page_says_when_the_bus_stops_and_goes_on_when_it_is_back(
    ib: IbRunner, tmp_path: Path, namespace: str
) -> None:
    server = RedisServer(tmp_path / "redis", ["--appendonly", "yes"]).start()
    ib.env["IB_REDIS_URL"] = server.url
    web = WebProcess(ib, tmp_path / "web.log")
    web.start()
    client = server.client()
    keys = Keys(namespace)
    try:
        publish(client, keys, make_event("message", "one"), 1000)
        seen: list[str] = []
        done = threading.Event()

        def read() -> None:
            with httpx.stream(
                "GET", web.base + "/stream", headers={**web.cookie, "last-event-id": "0-0"}, timeout=WAIT
            ) as stream:
                for frame in frames(stream):
                    seen.append(f"{frame.event}:{frame.data if frame.event != 'board' else ''}")
                    if seen.count("bus:up") and frame.event == "log":
                        break
            done.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        retry_until(lambda: "log:" in " ".join(seen), WAIT, 0.05, "the first event")
        server.stop()
        retry_until(lambda: "bus:down" in seen, WAIT, 0.05, "the page told the bus is down")
        down = httpx.get(web.base + "/", headers=web.cookie)
        assert down.status_code == 200 and "the bus cannot be reached; waiting for it" in down.text
        server.start()
        client = server.client()
        retry_until(lambda: "bus:up" in seen, WAIT, 0.05, "the page told the bus is back")
        publish(client, keys, make_event("message", "after the restart"), 1000)
        assert done.wait(WAIT)
        logs = [s for s in seen if s.startswith("log:")]
        assert len(logs) == 2 and "after the restart" in logs[1]
        assert seen.index("bus:down") < seen.index("bus:up")
    finally:
        web.stop()
        server.stop()
        print((tmp_path / "web.log").read_text())


def test_another_host_is_refused_without_tls_or_the_flag_that_says_so(ib: IbRunner) -> None:
    refused = ib.run("web", "--host", "0.0.0.0")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "ib web: error: --host 0.0.0.0 would show every agent, its dialogs and their buttons to the "
        "network over plain HTTP: serve it with --tls-cert and --tls-key, or say "
        "--expose-agents-without-tls to do it anyway"
    ]
    half = ib.run("web", "--tls-cert", "c.pem")
    assert half.returncode == 1 and "--tls-cert and --tls-key go together" in half.stderr


def test_the_token_is_never_logged(web: WebProcess, tmp_path: Path) -> None:
    httpx.get(web.address)
    httpx.get(web.base + "/?t=wrong-" + web.token)
    httpx.get(web.base + "/", headers=web.cookie)
    web.stop()
    logged = (tmp_path / "web.log").read_text()
    assert "serving the page" in logged and web.token not in logged


def test_a_stop_with_a_page_open_says_no_error(web: WebProcess, tmp_path: Path) -> None:
    """The open event stream is cut at the stop (the page reconnects and resumes): not an error to show."""
    opened = threading.Event()

    def read() -> None:
        try:
            with httpx.stream("GET", web.base + "/stream", headers=web.cookie, timeout=None) as stream:
                opened.set()
                for _line in stream.iter_lines():
                    pass  # read on until the stop cuts the stream
        except httpx.HTTPError:
            pass  # cut by the stop

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert opened.wait(WAIT)
    web.stop()
    reader.join(WAIT)
    logged = (tmp_path / "web.log").read_text()
    assert "serving the page" in logged and "ERROR" not in logged, logged


def test_an_answer_to_a_dialog_that_closed_sends_nothing(
    agents_ib: IbRunner, running_worker: Worker, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    spawned = agents_ib.run("new-agent", "idle", "--name", "idler")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: AgentStore(rds, keys).find("idler"), WAIT, 0.1, "the agent")
    prompt = PromptStore(rds, keys).record("idler", "permission", "ls", (), tool="Bash", question="Proceed?")
    assert prompt is not None
    web = WebProcess(agents_ib, tmp_path / "web.log")
    web.start()
    try:
        csrf = _csrf(web)
        form = {"csrf": csrf, "agent": "idler", "prompt": prompt.id, "choice": "approve"}
        headers = {**web.cookie, "origin": web.base}
        answer = httpx.post(web.base + "/act", headers=headers, data=form, timeout=WAIT)
        assert answer.status_code == 200
        assert "idler: the dialog closed; nothing was sent" in answer.text
        again = httpx.post(web.base + "/act", headers=headers, data=form, timeout=WAIT)
        assert "idler: the dialog closed; nothing was sent" in again.text
        assert json.dumps("Proceed?") not in again.text
    finally:
        web.stop()


def test_the_tasks_page_shows_the_graph_the_merge_queue_and_follows_them(
    web: WebProcess, rds: redis.Redis, keys: Keys
) -> None:
    tasks = TaskStore(rds, keys, 1000)
    tasks.add("lay the <b>floor</b>", project="house", task_id="floor")
    tasks.add("paint the walls", project="house", task_id="walls", after=["floor"])
    tasks.add("hang pictures", project="house", task_id="pictures", after=["walls"], priority=9)
    MergeStore(rds, keys, 1000).enqueue(
        project="house", agent="painter", branch="agent/painter", target="main", worker="w1", size=12
    )
    page = httpx.get(web.base + "/tasks", headers=web.cookie)
    assert page.status_code == 200
    order = [page.text.index(f'data-task="{t}"') for t in ("floor", "walls", "pictures")]
    assert order == sorted(order)  # each after what it waits for
    assert 'data-task="walls" data-status="pending"' in page.text
    assert 'data-task="floor" data-status="ready"' in page.text
    assert "lay the &lt;b&gt;floor&lt;/b&gt;" in page.text and "<b>floor" not in page.text
    assert 'class="merge" data-agent="painter" data-status="queued"' in page.text
    assert 'data-follow="task_ merge_ auto_ conflict_"' in page.text  # the page refreshes on these events
    graph = page.text.split('<figure class="task-graph" data-project="house">')[1].split("</figure>")[0]
    assert re.findall(r'data-node="(\w+)" data-state="(\w+)"', graph) == [
        ("floor", "ready"),
        ("walls", "pending"),
        ("pictures", "pending"),
    ]  # a column each, in the order they can run
    assert re.findall(r'data-from="(\w+)" data-to="(\w+)" data-kind="(\w+)"', graph) == [
        ("floor", "walls", "open"),
        ("walls", "pictures", "open"),
    ]
    assert "<title>floor: lay the &lt;b&gt;floor&lt;/b&gt;</title>" in graph
    tasks.claim_task("floor", "a1")
    live = httpx.get(web.base + "/tasks/live", headers=web.cookie)
    assert 'data-task="floor" data-status="claimed"' in live.text and "<html" not in live.text
    assert 'data-node="floor" data-state="claimed"' in live.text


def test_the_tasks_page_shows_the_agents_whose_work_collides_with_the_files(
    web: WebProcess, rds: redis.Redis, keys: Keys, redis_url: str, namespace: str, tmp_path: Path
) -> None:
    repo = base_repo(tmp_path / "base")
    rt = runtime(repo, redis_url, namespace)
    ann, bob = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    edit(repo / "calc.py", "return a * b", "return a * b * 1")  # main moved on since the agents started
    commit(repo)
    for worktree, text in ((ann, "A = 1\n"), (bob, "A = 2\n")):
        (worktree / "<i>x.py").write_text(text)
        edit(worktree / "calc.py", "return a + b", f"return {text.strip()}")
    edit(bob / "calc.py", "return a * b", "return b * a")
    told = ConflictCheck(rt).run(["bob"])  # the worker's own check, with real git
    assert sorted((c.other, sorted(f.shown for f in c.files)) for c in told) == [
        ("ann", ["<i>x.py", "calc.py"]),
        ("main", ["calc.py"]),
    ]
    page = httpx.get(web.base + "/tasks/live", headers=web.cookie).text
    risk = page.split('<section id="at-risk"')[1].split("</section>")[0]
    assert re.findall(r'data-agent="(\w+)" data-other="(\w+)" data-against="(\w+)"', risk) == [
        ("ann", "bob", "agent"),
        ("bob", "main", "branch"),
    ]
    assert re.findall(r'<code class="file">([^<]*)</code>', risk) == ["&lt;i&gt;x.py", "calc.py", "calc.py"]
    AgentStore(rds, keys).update("ann", state="stopped")
    page = httpx.get(web.base + "/tasks/live", headers=web.cookie).text
    assert re.findall(r'data-agent="(\w+)" data-other="(\w+)"', page) == [("bob", "main")]


def test_the_event_stream_is_filtered_by_project_agent_and_type(
    web: WebProcess, rds: redis.Redis, keys: Keys
) -> None:
    start = publish(rds, keys, make_event("message", "before"), 1000)
    sent = [
        publish(rds, keys, make_event(kind, f"{kind} of {agent}", agent=agent, project=project), 1000)
        for kind, agent, project in [
            ("complete", "a1", "house"),
            ("waiting", "a1", "house"),
            ("complete", "a2", "house"),
            ("complete", "a1", "shed"),
            ("permission", "a1", "house"),
        ]
    ]
    page = httpx.get(web.base + "/?project=house&agent=a1&type=complete+permission", headers=web.cookie).text
    shown = re.findall(r'<li data-id="([0-9-]+)"', page)
    assert shown == [sent[4], sent[0]]  # newest first
    assert 'name="type" value="complete permission"' in page
    ids = []
    query = "?project=house&agent=a1&type=complete,permission"
    with httpx.stream(
        "GET", web.base + "/stream" + query, headers={**web.cookie, "last-event-id": start}
    ) as stream:
        for frame in frames(stream):
            if frame.event == "log":
                ids.append(frame.id)
                if len(ids) == 2:
                    break
    assert ids == [sent[0], sent[4]]


def test_the_page_installs_as_an_app(web: WebProcess) -> None:
    page = httpx.get(web.base + "/", headers=web.cookie).text
    assert '<link rel="manifest" href="/static/manifest.webmanifest" crossorigin="use-credentials">' in page
    manifest = httpx.get(web.base + "/static/manifest.webmanifest", headers=web.cookie)
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    icons = {icon["sizes"]: icon["src"] for icon in manifest.json()["icons"]}
    assert set(icons) == {"192x192", "512x512"} and manifest.json()["display"] == "standalone"
    for size, src in icons.items():
        icon = httpx.get(web.base + src, headers=web.cookie)
        assert icon.headers["content-type"] == "image/png"
        width = int.from_bytes(icon.content[16:20], "big")  # the PNG's IHDR
        assert f"{width}x{width}" == size


def test_the_port_comes_from_the_setting_and_a_service_prints_no_token(ib: IbRunner, tmp_path: Path) -> None:
    port = free_port()
    web = WebProcess(ib, tmp_path / "web.log", args=("--hide-token",), env={"IB_WEB_PORT": str(port)})
    printed = web.start()
    try:
        token = (ib.cwd / ".ib" / "web-token").read_text().strip()
        assert printed == f"http://127.0.0.1:{port}/?t=<the token in .ib/web-token>"
        assert token not in printed
        assert httpx.get(f"http://127.0.0.1:{port}/?t={token}").status_code == 303
    finally:
        web.stop()
