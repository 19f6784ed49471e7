"""The real Codex CLI 0.169.0 in a tmux pane against the scripted Responses API: a turn that runs a command
and writes a file through apply_patch, told once by its own signals (Stop and notify of one turn, the
hidden title thread's notify ignored); the approval dialog of an escalated command answered with the keys
the dialog reader gives; and Codex's workspace-write sandbox keeping a command and a patch inside the
working folder."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import groupby
from pathlib import Path

import pytest

from tests.cli import init_repo
from tests.fake_openai import FakeOpenAI, add_file, exec_command, reply
from tests.fake_openai.capture import DIALOG, INPUT_BOX, TURN_END, WORKING, Stage
from worker.markers import COMPLETION_MARKER
from worker.programs.codex.screen import codex_option_keys, codex_pane_state, read_codex_dialog
from worker.programs.codex.signals import read_hook, read_notify
from worker.programs.hook_outcome import Outcome, TurnEnd
from worker.tmux.dialogs import pick
from worker.tmux.pane_state import PaneState

pytestmark = [pytest.mark.codex, pytest.mark.timeout(300)]  # several turns of a cold CLI, each up to TURN
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    with FakeOpenAI() as fake:
        init_repo(tmp_path / "repo")
        (tmp_path / "outside").mkdir()
        run = Stage(fake, 100, tmp_path, tmp_path / "saved")
        try:
            yield run
        finally:
            run.close()


def _ended(turns: int) -> Callable[[str], bool]:
    def check(screen: str) -> bool:
        idle = WORKING not in screen and INPUT_BOX in screen and DIALOG not in screen
        return idle and screen.count(TURN_END) >= turns

    return check


def _signals(log: Path) -> list[Outcome]:
    """The readings of every signal Codex sent, in the order they came."""
    readings = []
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        payload, via = entry["payload"], entry["via"]
        found = read_notify(payload, "a1") if via == "notify" else read_hook(payload, "a1")
        if found is not None:
            readings.append(found)
    return readings


def test_a_turn_with_a_command_and_a_patch_ends_once(stage: Stage) -> None:
    stage.fake.script(
        reply("Greeting first.", exec_command("echo hello > greeting.txt && cat greeting.txt")),
        reply(add_file("notes.txt", "one\ntwo\n")),
        reply(f"Greeted and noted.\n\n{COMPLETION_MARKER}"),
    )
    log = stage.work / "signals.jsonl"
    stage.start("greet and write notes", signals=log)
    screen = stage.wait(_ended(1), timeout=TURN)
    assert codex_pane_state(screen) == PaneState.COMPLETE
    assert (stage.repo / "greeting.txt").read_text() == "hello\n"
    assert (stage.repo / "notes.txt").read_text() == "one\ntwo\n"
    assert stage.fake.user_texts() == ["greet and write notes"]
    outputs = [o for r in stage.fake.turns_taken() for o in r.tool_outputs()]
    assert any("hello" in json.dumps(o) for o in outputs)
    readings = stage.wait_for_signals(log, lambda rs: sum(isinstance(r, TurnEnd) for r in rs) >= 2, _signals)
    # one turn, told by Stop and by notify under one turn id: the Stop hook publishes it once, as complete
    ends = [r for r in readings if isinstance(r, TurnEnd)]
    told = [{r.event_type for r in group} for _turn, group in groupby(ends, key=lambda r: r.turn)]
    assert told == [{"complete"}]
    assert next(r.state for r in readings if r.state) == "running"  # UserPromptSubmit, before any end


def test_an_escalated_command_is_approved_with_the_readers_keys(stage: Stage) -> None:
    outside = stage.work / "outside" / "approved.txt"
    call = exec_command(f"touch {outside} && echo made", escalate="It writes outside the worktree")
    stage.fake.script(reply(call), reply(f"Made it.\n\n{COMPLETION_MARKER}"))
    stage.start("make the file")
    screen = stage.wait(DIALOG, timeout=TURN)
    assert codex_pane_state(screen) == PaneState.PERMISSION
    dialog = read_codex_dialog(screen)
    assert dialog is not None
    (key,) = codex_option_keys(dialog, pick(dialog, "approve"))
    stage.answer(key)
    ended = stage.wait(_ended(1), timeout=TURN)
    assert codex_pane_state(ended) == PaneState.COMPLETE
    outputs = [o for r in stage.fake.turns_taken() for o in r.tool_outputs()]
    assert outside.exists(), f"pressed {key!r} in {dialog}; Codex sent back {outputs}; the pane:\n{ended}"


def test_the_sandbox_keeps_commands_and_patches_in_the_worktree(stage: Stage) -> None:
    escaped, patched = stage.work / "outside" / "escaped.txt", stage.work / "outside" / "patched.txt"
    stage.fake.script(
        reply(exec_command(f'echo x > {escaped}; echo "rc=$?"')),
        reply(add_file(str(patched), "no\n")),
        reply("Could not write there."),
    )
    stage.start("write outside")
    screen = stage.wait(DIALOG, timeout=TURN)  # the patch outside asks; the command simply failed
    dialog = read_codex_dialog(screen)
    assert dialog is not None and "edits" in dialog.title
    (key,) = codex_option_keys(dialog, pick(dialog, "deny"))
    stage.answer(key)
    stage.wait(_ended(0), timeout=TURN)
    assert not escaped.exists() and not patched.exists()
    outputs = json.dumps([o for r in stage.fake.turns_taken() for o in r.tool_outputs()])
    assert "rc=1" in outputs or "Read-only file system" in outputs
