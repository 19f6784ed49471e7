"""The real Gemini CLI (pinned), offline against the scripted Gemini API, started by `ib new-agent --cli
gemini` under bubblewrap, its worker running: its hooks' events reach the bus (running, permission,
complete) through the worker's relay, `ib approve` and `ib deny` answer its approval dialog, it cannot
write outside its worktree nor read the bus's secrets, its address included, and `ib resume` restarts a
stopped one with its conversation."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.fake_gemini.script import reply, shell
from tests.fake_gemini.server import FakeGemini
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER, WAITING_MARKER

pytestmark = [pytest.mark.gemini, pytest.mark.timeout(300)]
TURN = 90.0  # deadline for one turn of a cold CLI (about 5 s to start, hooks of ~0.3 s each) on 2 busy cores
SHELL_DIALOG = "Allow execution of [Shell]?"
ENV_URL = "^IB_REDIS_URL="
ANY_URL = "redis[:]//"  # a bus URL anywhere (the bracket keeps the command's own text from matching)
HOST_SECRET = "host-secret-321"
ENVIRONS = 'cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"'


@pytest.fixture
def gemini_worker(gemini_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker`: its relay runs the hooks of the agents, whose box holds no bus address."""
    with worker_running(gemini_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


def _events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, object]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def _wait_event(rds: redis.Redis, keys: Keys, kind: str, count: int = 1) -> dict[str, object]:
    found = retry_until(lambda: len(got := _events(rds, keys, kind)) >= count and got, TURN, what=kind)
    return found[count - 1]


def _spawn(ib: IbRunner, name: str, goal: str) -> None:
    done = ib.run("new-agent", goal, "--name", name, "--cli", "gemini")
    assert done.returncode == 0, done.stderr


def _dialog_shown(ib: IbRunner, name: str) -> None:
    retry_until(lambda: SHELL_DIALOG in pane_text(ib, name), TURN, what="the shell dialog")


def test_approved_command_runs_and_the_turn_completes(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, repo: Path, gemini_worker: Worker
) -> None:
    """The hooks' events come through the worker's relay: the pane has no bus address to send them."""
    gemini.script(
        reply("Making it.", shell("touch approved.txt && echo made")),
        reply(f"Made the file.\n{COMPLETION_MARKER}"),
    )
    _spawn(gemini_ib, "gem", "make a file")
    asked = _wait_event(rds, keys, "permission")
    data = asked["data"]
    assert isinstance(data, dict)
    assert (data["tool"], data["detail"]) == ("exec", "touch approved.txt && echo made")
    _dialog_shown(gemini_ib, "gem")
    typed = gemini_ib.run("send", "gem", "yes")
    assert typed.returncode == 1
    assert "shows a permission dialog (Allow execution of [Shell]?); nothing was typed" in typed.stderr
    approved = gemini_ib.run("approve", "gem")
    assert approved.returncode == 0, approved.stderr
    worktree = repo / ".ib" / "agents" / "gem" / "repo"
    retry_until((worktree / "approved.txt").exists, TURN, what="the approved command ran")
    done = _wait_event(rds, keys, "complete")
    assert "Made the file." in str(done["data"])
    assert gemini.user_texts()[0].endswith("make a file") or "make a file" in gemini.user_texts()[0]
    # waited for: the worker's pane watcher may read the turn still at work while the AfterAgent hook that
    # stored `complete` finishes (Gemini CLI shows its spinner until its hooks are done), and moves it back
    retry_until(lambda: rds.hget(keys.agent("gem"), "state") == "complete", TURN, what="the state complete")
    assert "relay: agent gem runs ib hook gemini" in gemini_worker.log.read_text()
    start = (repo / ".ib" / "agents" / "gem" / "start.sh").read_text()
    assert "IB_REDIS_URL" not in start and "IB_VIA_RELAY=1" in start


def test_denied_command_does_not_run_and_the_model_is_told(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, repo: Path, gemini_worker: Worker
) -> None:
    """Gemini CLI cancels the turn ("Request cancelled.") and drops the call from the conversation: the
    model would get its prompt again with the person's next message and never hear of the refusal.
    `ib deny` sends a message that names the refused call, and the model's answer ends the turn."""
    gemini.script(reply("Making it.", shell("touch denied.txt")), reply(f"Understood.\n{WAITING_MARKER}"))
    _spawn(gemini_ib, "nay", "make a file")
    _wait_event(rds, keys, "permission")
    _dialog_shown(gemini_ib, "nay")
    denied = gemini_ib.run("deny", "nay")
    assert denied.returncode == 0, denied.stderr
    waited = _wait_event(rds, keys, "waiting")
    assert waited["data"] == {"last_message": f"Understood.\n{WAITING_MARKER}"}
    told = gemini.turns_taken()[1]
    assert (told.user_text() or "").endswith("\nI refused `touch denied.txt`: it did not run.")
    assert "Request cancelled." in gemini_ib.run("look", "nay").stdout
    assert not (repo / ".ib" / "agents" / "nay" / "repo" / "denied.txt").exists()
    assert len(_events(rds, keys, "waiting")) == 1


def test_agent_cannot_write_outside_its_worktree_nor_read_the_bus_secrets(
    gemini_ib: IbRunner,
    gemini: FakeGemini,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
    tmp_path: Path,
    gemini_worker: Worker,
) -> None:
    """One approved shell command of escape attempts, under the bubblewrap ittybus starts Gemini CLI in:
    a file beside the repository, the person's checkout and its git hooks, the agent's own git config,
    the repository's `.env` and `.ib/`, the person's ~/.ssh, the bus URL and the API key in the
    environment, a secret in the environment of a process outside the box, the bus URL in any process's
    environment or any file it can read in its HOME, its worktree or /tmp (its hooks go through the
    worker's relay); then a file in its worktree, which must work."""
    outside = tmp_path / "outside.txt"
    (repo / ".env").write_text("IB_TELEGRAM_TOKEN=secret-token-123\n")
    secret = repo / ".ib" / "secret-probe"
    secret.parent.mkdir(exist_ok=True)  # the worker made it
    secret.write_text("bus-password-456\n")
    ssh = tmp_path / "person" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("ssh-key-789\n")
    own_git = repo / ".ib" / "agents" / "esc" / "git"
    escape = (
        f"touch {outside}; echo hi > {repo}/README.md; echo x > {repo}/.git/hooks/post-commit; "
        f"git config core.hooksPath /tmp/hooks; cat {repo}/.env {secret} {ssh}/id_ed25519; "
        'echo "url=$IB_REDIS_URL key=$GEMINI_API_KEY"; '
        f"{ENVIRONS} | grep -c {ENV_URL} | sed s/^/environ-url-hits=/; "  # Gemini CLI refuses $(...)
        f"{ENVIRONS} | grep -c {HOST_SECRET} | sed s/^/environ-host-hits=/; "
        f"{ENVIRONS} | grep -c '{ANY_URL}' | sed s/^/environ-any-url-hits=/; "
        f"grep -rlsE '{ANY_URL}' ~ . /tmp | grep -c . | sed s/^/file-url-hits=/; "
        "touch inside.txt"
    )
    gemini.script(reply("Trying.", shell(escape)), reply(f"Tried.\n{COMPLETION_MARKER}"))
    # a process of the person's outside the box, as `ib bot` with its token would be
    holder = subprocess.Popen(["sleep", "600"], env={"IB_TELEGRAM_TOKEN": HOST_SECRET})
    try:
        _spawn(gemini_ib, "esc", "escape")
        _wait_event(rds, keys, "permission")
        _dialog_shown(gemini_ib, "esc")
        assert gemini_ib.run("approve", "esc").returncode == 0
        gemini.wait_for(lambda log: sum(r.is_turn for r in log) >= 2, TURN, what="the command's result")
    finally:
        holder.kill()
        holder.wait()
    told = json.dumps(gemini.turns_taken()[1].function_responses())
    assert (repo / ".ib" / "agents" / "esc" / "repo" / "inside.txt").exists(), told[-600:]
    assert not outside.exists()
    assert (repo / "README.md").read_text() == "test repo\n"
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    assert "hooksPath" not in (own_git / "config").read_text()
    for leaked in ("secret-token-123", "bus-password-456", "ssh-key-789"):
        assert leaked not in told
    assert "url= key=" in told
    assert "environ-host-hits=0" in told, told[-300:]  # the box has a PID namespace of its own
    # the hooks go through the worker's relay: no process in the box holds the bus URL, no file shows it
    for probe in ("environ-url-hits", "environ-any-url-hits", "file-url-hits"):
        hits = re.search(rf"{probe}=(\d+)", told)
        assert hits is not None and int(hits.group(1)) == 0, told[-400:]
    assert _events(rds, keys, "permission"), "the hooks' events reached the bus"


def test_without_a_worker_the_turn_ends_and_the_worker_replays_its_hooks_later(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """No relay to take the hooks: each waits in the agent's queue and exits 0 at once, so Gemini CLI goes on
    and ends its turn; no hook event reaches the bus yet. A worker started afterwards replays them before it
    reads the panes: the turn's events arrive late, in order, told by the hooks."""
    gemini.script(reply(f"All done.\n{COMPLETION_MARKER}"))
    _spawn(gemini_ib, "lone", "say done")
    retry_until(lambda: "All done." in pane_text(gemini_ib, "lone"), TURN, what="the turn's reply")
    retry_until(lambda: "Type your message" in pane_text(gemini_ib, "lone"), TURN, what="the idle input box")
    assert [e["type"] for e in _events_all(rds, keys)] == ["spawned"]  # no hook reached the bus
    assert rds.hget(keys.agent("lone"), "state") == "creating"
    with worker_running(gemini_ib, tmp_path / "worker.log", rds, keys):
        retry_until(lambda: rds.hget(keys.agent("lone"), "state") == "complete", TURN, what="the pane read")
    told = [(e["type"], e["msg"]) for e in _events_all(rds, keys)][1:]  # after `spawned`
    assert told == [("state", "lone: creating → running"), ("complete", "Manager lone completed its goal")]
    assert rds.hget(keys.agent("lone"), "state_by") == "hook"
    assert not list((gemini_ib.cwd / ".ib" / "agents" / "lone" / "relay-queue").iterdir())


def _events_all(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]


def _texts(contents: object) -> str:
    """Every text part of a request's contents, the earlier turns included."""
    given = contents if isinstance(contents, list) else []
    return "\n".join(
        str(part.get("text", ""))
        for content in given
        if isinstance(content, dict)
        for part in content.get("parts") or []
        if isinstance(part, dict)
    )


def test_ib_resume_restarts_a_stopped_gemini_agent_with_its_conversation(
    gemini_ib: IbRunner,
    gemini: FakeGemini,
    rds: redis.Redis,
    keys: Keys,
    tmux_socket: str,
    gemini_worker: Worker,
) -> None:
    gemini.script(reply(f"Noted: the codeword is PERIWINKLE.\n{WAITING_MARKER}"))
    _spawn(gemini_ib, "keeper", "remember the codeword PERIWINKLE")
    _wait_event(rds, keys, "waiting")
    session = rds.hget(keys.agent("keeper"), "session")
    assert session and Path(str(rds.hget(keys.agent("keeper"), "transcript_path"))).is_file()
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", session], check=True)  # Gemini is gone

    resumed = gemini_ib.run("resume", "keeper")
    assert resumed.returncode == 0, resumed.stderr
    assert "with its conversation" in resumed.stdout
    gemini.script(reply(f"It was PERIWINKLE.\n{COMPLETION_MARKER}"))
    retry_until(lambda: "Type your message" in pane_text(gemini_ib, "keeper"), TURN, what="input")
    asked = gemini_ib.run("send", "keeper", "what was the codeword? say it")  # a `?` arrives too
    assert asked.returncode == 0, asked.stderr
    try:
        _wait_event(rds, keys, "complete")
    except AssertionError as e:  # what the screen shows says where the message went
        screen = pane_text(gemini_ib, "keeper", 80)
        raise AssertionError(f"{e}\nib send said: {asked.stdout}{asked.stderr}\nthe pane:\n{screen}") from e
    last = gemini.turns_taken()[-1]
    assert last.user_text() == "what was the codeword? say it"
    # the resumed request carries the earlier turn: what the agent was told and what it answered
    earlier = _texts(last.body.get("contents"))
    assert "remember the codeword PERIWINKLE" in earlier
    assert "Noted: the codeword is PERIWINKLE." in earlier
