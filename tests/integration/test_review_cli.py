"""`ib review AGENT` against a fake agent's real commit: the file list, one file's diff with its line numbers,
comments gathered and sent with --request-changes as one prompt, and one clear line for each bad input."""

from __future__ import annotations

from pathlib import Path

from tests.cli import IbRunner
from tests.integration.test_bot import received, spawn
from tests.waiting import retry_until


def test_review_lists_shows_and_comments(agents_ib: IbRunner, tmp_path: Path) -> None:
    ib = agents_ib
    spawn(
        ib,
        "critic",
        "fake: write calc.py def add(a, b):\\n    return a + b",
        "fake: write notes.txt one",
        "fake: commit add",
        "fake: wait",
    )
    listed = retry_until(
        lambda: "calc.py" in ib.run("review", "critic").stdout and ib.run("review", "critic"), 40
    )
    assert listed.stdout.splitlines() == [
        "  1        +2 -0  calc.py (added)",
        "  2        +1 -0  notes.txt (added)",
    ]

    shown = ib.run("review", "critic", "calc.py")
    assert shown.returncode == 0, shown.stderr
    assert "1 + def add(a, b):" in shown.stdout and "2 +     return a + b" in shown.stdout
    assert ib.run("review", "critic", "2").stdout == ib.run("review", "critic", "notes.txt").stdout

    nothing = ib.run("review", "critic", "--request-changes")
    assert nothing.returncode != 0 and nothing.stderr.count("\n") == 1, nothing.stderr
    assert "no comments waiting for critic" in nothing.stderr and "nothing was sent" in nothing.stderr

    kept = ib.run("review", "critic", "1", "--lines", "2", "--comment", "use sum()")
    assert kept.returncode == 0, kept.stderr
    assert "kept for critic (1 waiting): about `calc.py` (lines 2–2 as shown): use sum()" in kept.stdout
    assert "use sum()" not in received(tmp_path)  # gathered, not sent
    sent = ib.run("review", "critic", "calc.py", "-c", "and a docstring", "--request-changes")
    assert sent.returncode == 0, sent.stderr
    prompt = (
        "Changes requested on your work (2 comments from the review of your diff):\n"
        "1. about `calc.py` (lines 2–2 as shown): use sum()\n"
        "2. about `calc.py` (lines 1–2 as shown): and a docstring\n"
    )
    retry_until(lambda: prompt in received(tmp_path), 30, 0.1, "the comments as one prompt")
    again = ib.run("review", "critic", "--request-changes")
    assert again.returncode != 0 and "no comments waiting for critic" in again.stderr

    for args, said in (
        (("nope.py",), "no file 'nope.py' in this change: give a path or a number from 1 to 2"),
        (("3",), "no file '3' in this change"),
        (("1", "--lines", "9-2", "-c", "x"), "ends before it starts"),
        (("1", "--lines", "a-b", "-c", "x"), "is not a range"),
        (("1", "-c", "  "), "the comment is empty"),
        (("-c", "x"), "name the file the comment is about"),
    ):
        bad = ib.run("review", "critic", *args)
        assert bad.returncode != 0 and said in bad.stderr and bad.stderr.count("\n") == 1, (args, bad.stderr)
        assert "Traceback" not in bad.stderr
