"""A task's test command, run before `ib task done` marks the task done: in the agent's worktree, with a
time limit, its whole process group killed when the time runs out.

`failure_note` (pure) says what failed in the words the `test_failure` note keeps.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TAIL_LINES = 40
TAIL_BYTES = 16 * 1024


@dataclass(frozen=True)
class RunResult:
    """What the test command did: its exit code (None when it was killed at the time limit) and output."""

    command: str
    folder: str
    exit_code: int | None
    output: str
    timeout: float

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


def tail(output: str, lines: int = TAIL_LINES, limit: int = TAIL_BYTES) -> str:
    """The last `lines` lines of `output`, at most `limit` bytes of them. Pure."""
    kept = "\n".join(output.rstrip("\n").splitlines()[-lines:])
    data = kept.encode("utf-8")
    if len(data) > limit:
        kept = data[-limit:].decode("utf-8", "ignore")
    return kept


def outcome(run: RunResult) -> str:
    """One line: how the command ended. Pure."""
    if run.exit_code is None:
        return f"test command `{run.command}` was stopped after {run.timeout:g} s (time limit)"
    return f"test command `{run.command}` exited {run.exit_code}"


def failure_note(run: RunResult) -> str:
    """The `test_failure` note: how it ended, where, then the last lines of its output. Pure."""
    last = tail(run.output)
    head = f"{outcome(run)} in {run.folder}"
    return f"{head}; last lines:\n{last}" if last else f"{head} (no output)"


def run_test(command: str, folder: Path, timeout: float, box: Sequence[str] = ()) -> RunResult:
    """Run `command` with the shell in `folder`, output and errors together, for at most `timeout` s;
    `box`, when given, is the whole command line that runs it (worker.boundary.done_check_box)."""
    proc = subprocess.Popen(
        list(box) or command,
        shell=not box,
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so a timeout stops everything it started
    )
    try:
        raw, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        try:
            raw, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # something left the group and holds the pipe open
            raw = b""
        code = None
    return RunResult(command, str(folder), code, raw.decode("utf-8", "replace"), timeout)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.killpg(pid, signal.SIGKILL)
