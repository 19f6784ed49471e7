"""One message typed into an agent's pane at a time, across processes: the person's `ib send`, a manager's
note from one of its workers (typed by the worker), a reply from Telegram and a resume at a limit's reset
can come at once, and two typists interleave their keys in one input box (seen in a full run: a manager's
note typed while `ib send` typed, so the box held neither text whole and four Enters later the send gave
up). A lock file in the agent's folder, taken with flock, is the turn; the kernel lets it go with its
process, so a killed sender holds nobody up.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from worker.errors import WorkerError

LOCK_NAME = "typing.lock"
TURN_WAIT = 90.0  # seconds a message waits for the one being typed (a send takes up to a minute, slow start)


class StillTyping(WorkerError):
    """Another message is being typed into the agent's pane, and was for longer than a send can take."""


@contextmanager
def typing_turn(folder: Path, agent_id: str, wait: float = TURN_WAIT) -> Iterator[None]:
    """Hold the agent's typing turn for the block, waiting `wait` seconds at most for it. An agent whose
    folder is gone (torn down meanwhile) has no pane to type into either: the block runs and says so."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        yield
        return
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StillTyping(
                        f"another message has been typed into {agent_id} for over {wait:.0f} s, so this one "
                        f"was not; see it with ib look {agent_id}, then send again"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)
