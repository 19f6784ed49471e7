"""A message the agent's program forgets after its Enter (Gemini CLI, sent to as it starts resuming a
session, empties its input box and shows nothing sent: `ib send` said "sent" and the agent never got it)
is typed again, once per loss, until the program shows it sent. A program that keeps forgetting gets
NotSubmitted, not a "sent". A paste drawn seconds late gets its Enter once it shows (CI: Gemini CLI left a
10,000-character paste in its box, and `ib send` said sent), and one never drawn gets NotSubmitted, with no
Enter. Real tmux and Redis; the program is tests/forgetful_box.py, drawn as Gemini CLI 0.61 draws its
screen, read through Gemini CLI's own screen reader."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bus.stores.agent_store import Agent, AgentStore
from tests.cli import IbRunner
from tests.pane_agent import worker_runtime
from tests.waiting import retry_until
from worker.agents import pane_typing
from worker.agents.pane_typing import TYPE_TRIES, TYPED_WAIT, NotSubmitted, type_message
from worker.programs.gemini.program import GeminiCli
from worker.runtime import Runtime

ROOT = Path(__file__).resolve().parents[2]


def _forgetful(rt: Runtime, record: Path, forget: int, late: float = 0.0) -> Agent:
    agent = Agent(id="forgets", goal="g", state="waiting", state_at=time.time(), worker=rt.worker_id)
    agent = agent.replace(session="ib-test-forgets", program="gemini")
    AgentStore(rt.client, rt.keys).save(agent)
    program = shlex.join([sys.executable, "-m", "tests.forgetful_box", str(record), str(forget), str(late)])
    opened = ["new-session", "-d", "-s", agent.session, "-x", "200", "-y", "50", "-c", str(ROOT), program]
    subprocess.run(["tmux", "-L", str(rt.settings.tmux_socket), *opened], check=True)
    retry_until(lambda: "Type your message" in rt.tmux.capture(agent.session), what="its input box")
    return agent


def test_a_message_the_program_forgot_is_typed_again_until_it_shows_sent(
    ib: IbRunner, redis_url: str, namespace: str, tmux_socket: str, tmp_path: Path
) -> None:
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    record = tmp_path / "submits.txt"
    agent = _forgetful(rt, record, forget=1)

    type_message(rt, agent, GeminiCli(), "what was the codeword? say it")

    assert record.read_text().splitlines() == [
        "forgotten: what was the codeword? say it",
        "what was the codeword? say it",
    ]
    assert rt.tmux.capture(agent.session).count(" > what was the codeword? say it") == 1
    type_message(rt, agent, GeminiCli(), "what was the codeword? say it")  # the same again: sent once
    assert record.read_text().splitlines()[2:] == ["what was the codeword? say it"]


@pytest.mark.timeout(120)
def test_a_program_that_forgets_every_message_is_not_said_to_have_it(
    ib: IbRunner, redis_url: str, namespace: str, tmux_socket: str, tmp_path: Path
) -> None:
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    record = tmp_path / "submits.txt"
    agent = _forgetful(rt, record, forget=TYPE_TRIES)

    with pytest.raises(NotSubmitted, match=f"lost the text each of the {TYPE_TRIES} times"):
        type_message(rt, agent, GeminiCli(), "run the tests")
    assert record.read_text().splitlines() == ["forgotten: run the tests"] * TYPE_TRIES


LONG = "0123456789" * 30  # a paste, as Gemini CLI takes every message ittybus types


def test_a_paste_drawn_late_gets_its_enter_once_it_shows(
    ib: IbRunner, redis_url: str, namespace: str, tmux_socket: str, tmp_path: Path
) -> None:
    """Drawn later than typed text is waited for: an Enter before it would be lost in it, and the message,
    typed again, would be sent twice over in one."""
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    record = tmp_path / "submits.txt"
    agent = _forgetful(rt, record, forget=0, late=TYPED_WAIT + 1.5)

    type_message(rt, agent, GeminiCli(), LONG)

    assert record.read_text().splitlines() == [LONG]


@pytest.mark.timeout(60)
def test_a_paste_never_drawn_is_not_said_sent_nor_entered(
    ib: IbRunner,
    redis_url: str,
    namespace: str,
    tmux_socket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pane_typing, "UNDRAWN_WAIT", TYPED_WAIT + 1.0)  # the product's 30 s, shortened
    rt = worker_runtime(redis_url, namespace, tmux_socket, Path(ib.cwd))
    record = tmp_path / "submits.txt"
    agent = _forgetful(rt, record, forget=0, late=20.0)

    with pytest.raises(NotSubmitted, match="showed nothing of the message in its input box"):
        type_message(rt, agent, GeminiCli(), LONG)
    assert not record.exists()  # no Enter pressed
