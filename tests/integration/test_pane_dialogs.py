"""The pane watcher (`ib worker --once`, real tmux) on screens no hook reports: the folder-trust dialog
(Claude Code runs no hook before it is answered), auto mode's dialogs and its nag, and any dialog known
only by its shape. A retried API call: tests/integration/test_turn_ends.py."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import redis

from bus.stores.hashes import write_hash
from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.streams import stream_entries
from tests.waiting import retry_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _show(ib: IbRunner, rds: redis.Redis, keys: Keys, socket: str, capture: Path) -> None:
    """An agent record whose tmux session shows `capture` and stays open."""
    session = "ib-test-screen"
    subprocess.run(
        ["tmux", "-L", socket, "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
         f"cat {capture}; sleep 600"],
        check=True,
    )  # fmt: skip
    last = [line.strip() for line in capture.read_text(encoding="utf-8").splitlines() if line.strip()][-1]

    def drawn() -> bool:  # the worker's look must find the screen: `cat` on a busy machine takes a moment
        shown = subprocess.run(
            ["tmux", "-L", socket, "capture-pane", "-p", "-t", session],
            capture_output=True,
            text=True,
            check=False,
        )
        return last in shown.stdout

    retry_until(drawn, 10, what="the capture on the pane")
    worker = ib.env["IB_WORKER_ID"]
    record = {"id": "screen", "session": session, "worker": worker, "state": "running", "root": str(ib.cwd)}
    write_hash(rds, keys.agent("screen"), record)
    rds.sadd(keys.agents, "screen")


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]


@pytest.fixture
def watcher_ib(ib: IbRunner, tmux_socket: str) -> IbRunner:
    ib.env.update(
        {"IB_TMUX_SOCKET": tmux_socket, "IB_WORKER_ID": "w-screens", "IB_STATUS_NODE_AUTO": "false"}
    )
    return ib


def _asked(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [e for e in _events(rds, keys) if e["type"] == "permission"]


def test_the_folder_trust_dialog_is_an_event_once(
    watcher_ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, tmp_path: Path
) -> None:
    """Told once it has been on screen TRUST_SETTLE (Claude Code drops the keys of an answer typed sooner),
    once: a worker running for it, as the trust is held over more than one look."""
    _show(watcher_ib, rds, keys, tmux_socket, FIXTURES / "dialogs" / "trust-200.claude-2.1.332.txt")
    with worker_running(watcher_ib, tmp_path / "worker.log", rds, keys):
        retry_until(lambda: _asked(rds, keys), 30, what="the trust dialog told")
        time.sleep(3)  # the worker looks at the pane again each second: no second event
    [asked] = _asked(rds, keys)
    data = asked["data"]
    assert isinstance(data, dict)
    assert (data["kind"], data["folder"], data["options"], data["default"]) == (
        "trust",
        "/tmp/cc-hooks-probe/repo",
        [{"number": None, "label": "No, exit"}, {"number": None, "label": "Yes, I trust this folder"}],
        0,
    )
    assert rds.hgetall(keys.prompt("screen"))["id"] == data["prompt_id"]
    assert rds.hget(keys.agent("screen"), "state") == "permission"


def _env_prefixed(width: int) -> tuple[str, str, str, str, list[dict[str, object]]]:
    """`FOO=1 ib notify hi` in an agent's sandbox (at 200 columns beside the diff panel): no hook tells it."""
    again = "FOO=1 ib notify *" if width >= 120 else "FOO=1 ib notify hi"  # as Claude Code drew it
    labels = ["Yes", f"Yes, and don’t ask again for: {again}"]
    labels += ["Yes, and switch to auto mode · auto mode handles these prompts for you", "No"]
    options: list[dict[str, object]] = [{"number": i, "label": x} for i, x in enumerate(labels, 1)]
    capture = f"permission-env-prefixed-command-{width}"
    return capture, "permission", "permission", "Do you want to proceed?", options


SEEN = {
    **{f"env-prefixed-command-{width}": _env_prefixed(width) for width in (80, 100, 200)},
    "auto-mode-approval": (
        "permission-auto-mode-approval-80",
        "permission",
        "permission",
        "Do you want to proceed?",
        [{"number": None, "label": "No"}, {"number": None, "label": "Yes"}],
    ),
    "auto-mode-nag": (
        "dialog-auto-mode-default-100",
        "permission",
        "dialog",
        "Make auto mode your default permission mode?",
        [
            {"number": None, "label": "Yes, set auto mode as my default permission mode"},
            {"number": None, "label": "No, keep manual mode"},
        ],
    ),
    "german": (
        "dialog-translated-de-bash-80",
        "permission",
        "dialog",
        "Möchten Sie fortfahren?",
        [
            {"number": 1, "label": "Ja"},
            {
                "number": 2,
                "label": "Ja, und Zugriff auf /tmp/cc-hooks-probe in diesem Projekt immer erlauben",
            },
            {"number": 3, "label": "Ja, und zum Automodus wechseln · der Automodus erledigt diese Fragen"},
            {"number": 4, "label": "Nein"},
        ],
    ),
    "question": (
        "ask-200",
        "question",
        "ask",
        "Which database should I use?",
        [
            {"number": 1, "label": "Postgres"},
            {"number": 2, "label": "SQLite"},
            {"number": 3, "label": "Type something."},
            {"number": 4, "label": "Chat about this"},
        ],
    ),
}


@pytest.mark.parametrize(("capture", "event", "kind", "title", "options"), SEEN.values(), ids=SEEN.keys())
def test_a_dialog_no_hook_told_is_one_event_with_its_options(
    watcher_ib: IbRunner,
    rds: redis.Redis,
    keys: Keys,
    tmux_socket: str,
    capture: str,
    event: str,
    kind: str,
    title: str,
    options: list[dict[str, object]],
) -> None:
    _show(watcher_ib, rds, keys, tmux_socket, FIXTURES / "dialogs" / f"{capture}.claude-2.1.332.txt")
    assert watcher_ib.run("worker", "--once").returncode == 0
    assert watcher_ib.run("worker", "--once").returncode == 0  # a second look: no second event
    [asked] = [e for e in _events(rds, keys) if e["type"] in ("permission", "question")]
    data = asked["data"]
    assert isinstance(data, dict)
    assert (asked["type"], data["kind"], data["title"], data["options"], data["default"]) == (
        event,
        kind,
        title,
        options,
        0,
    )
    prompt = rds.hgetall(keys.prompt("screen"))
    assert (prompt["id"], prompt["question_id"]) == (data["prompt_id"], data["question_id"])
    assert rds.hget(keys.question(str(data["question_id"])), "dialog") == data["prompt_id"]
    assert rds.hget(keys.agent("screen"), "state") == "permission"


def test_a_dialog_a_hook_told_is_not_told_again(
    watcher_ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    rds.hset(keys.prompt("screen"), mapping={"id": "p-hook", "kind": "permission", "tool": "Bash"})
    _show(watcher_ib, rds, keys, tmux_socket, FIXTURES / "dialogs" / "permission-bash-80.claude-2.1.332.txt")
    assert watcher_ib.run("worker", "--once").returncode == 0
    assert [e for e in _events(rds, keys) if e["type"] in ("permission", "question")] == []
    assert rds.hget(keys.prompt("screen"), "id") == "p-hook"


def test_each_appearance_of_a_dialog_is_one_event(
    watcher_ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    dialog = FIXTURES / "dialogs" / "permission-auto-mode-approval-100.claude-2.1.332.txt"
    idle = FIXTURES / "pane-states" / "complete-cc2.1.332-bullet-w100.txt"
    _show(watcher_ib, rds, keys, tmux_socket, dialog)
    for screen in (idle, dialog):
        assert watcher_ib.run("worker", "--once").returncode == 0
        subprocess.run(
            [
                "tmux",
                "-L",
                tmux_socket,
                "respawn-pane",
                "-k",
                "-t",
                "ib-test-screen",
                f"cat {screen}; sleep 600",
            ],
            check=True,
        )
    assert watcher_ib.run("worker", "--once").returncode == 0
    asked = [e for e in _events(rds, keys) if e["type"] == "permission"]
    assert len(asked) == 2
    assert asked[0]["data"]["prompt_id"] != asked[1]["data"]["prompt_id"]  # type: ignore[index]
