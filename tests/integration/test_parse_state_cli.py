"""`ib parse-state FILE --cli claude|codex|gemini` reads a capture with that program's own parser; without
`--cli` the program is told by the capture's shape, else IB_DEFAULT_CLI. Captures of the real CLIs
(tests/fixtures/codex-0.169.0, gemini-0.61.0, pane-states)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import IbRunner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURES = {
    "codex-dialog": ("codex-0.169.0/permission-exec-escalated-w100.txt", "codex", "permission"),
    "codex-idle": ("codex-0.169.0/waiting-idle-prompt-w80.txt", "codex", "waiting"),
    "codex-running": ("codex-0.169.0/running-working-w80.txt", "codex", "running"),
    "gemini-dialog": ("gemini-0.61.0/dialog-shell-w80.txt", "gemini", "permission"),
    "gemini-idle": ("gemini-0.61.0/idle-turn-end-w100.txt", "gemini", "waiting"),
    "gemini-running": ("gemini-0.61.0/working-held-stream-w200.txt", "gemini", "running"),
    "claude-older-spinner-queued": (
        "pane-states/running-older-spinner-queued-message.txt",
        "claude",
        "running",
    ),
    "claude-dialog": ("dialogs/permission-bash-80.claude-2.1.332.txt", "claude", "permission"),
}


@pytest.mark.parametrize(("name", "cli", "state"), CAPTURES.values(), ids=CAPTURES.keys())
def test_each_program_s_capture_reads_right_named_or_not(
    ib: IbRunner, name: str, cli: str, state: str
) -> None:
    capture = str(FIXTURES / name)
    for args in (["--cli", cli], []):
        read = ib.run("parse-state", capture, *args)
        assert (read.returncode, read.stdout, read.stderr) == (0, f"{state}\n", "")


def test_a_capture_of_no_known_shape_is_read_as_ib_default_cli_says(ib: IbRunner, tmp_path: Path) -> None:
    bare = tmp_path / "bare.txt"
    bare.write_text("✻ Thinking… (ctrl+c to interrupt)\n", encoding="utf-8")  # no banner, no input box
    assert ib.run("parse-state", str(bare), env={"IB_DEFAULT_CLI": "claude"}).stdout == "running\n"
    assert ib.run("parse-state", str(bare), env={"IB_DEFAULT_CLI": "codex"}).stdout == "unknown\n"


def test_an_unknown_program_is_one_line(ib: IbRunner) -> None:
    capture = str(FIXTURES / "codex-0.169.0/running-working-w80.txt")
    read = ib.run("parse-state", capture, "--cli", "nosuch")
    assert read.returncode != 0
    assert read.stdout == ""
    assert read.stderr.splitlines() == [
        "ib parse-state: error: --cli 'nosuch' is not an agent program ittybus knows; use one of: claude, "
        "codex, gemini"
    ]
