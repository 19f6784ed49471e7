"""Run a command where it belongs: here when this machine's worker owns the agent it names, else on
the owner's worker over its command stream (`cmd:<worker>`, the answer on `reply:<id>`).

Generic over bus.commands.worker_commands: a command's `routed_by` names the field (an agent or a question)
that decides its worker, so commands added there are covered without a change here.
"""

from __future__ import annotations

from typing import Any

import redis

from bus.commands.worker_commands import Command
from bus.commands.worker_rpc import request
from bus.commands.workers import validate_worker_id
from worker.agents.ownership import owner, subject_of
from worker.runtime import Runtime
from worker.service.operations import run_operation


def run_on_owner(
    rt: Runtime,
    command: Command,
    *,
    on: str | None = None,
    reader: redis.Redis | None = None,
    sender: str = "",
) -> Any:
    """The command's result, from this machine or from the worker `on` (default: the agent's owner),
    waiting for a remote answer as long as the command's `timeout`.

    `reader` is a client without a socket timeout for waiting on a remote answer (the CLI's)."""
    sender = sender or f"ib@{rt.worker_id}"
    if on:
        worker = validate_worker_id(on)
        if worker == rt.worker_id:
            return run_operation(rt, command, sender=sender)
    else:
        subject = subject_of(rt, command)  # read once: the operation takes it as it is
        worker = owner(subject) if subject is not None else rt.worker_id
        if worker == rt.worker_id:
            return run_operation(rt, command, subject, sender=sender)
    return request(reader or rt.client, rt.keys, worker, command, sender=sender, wait=rt.settings.write_wait)
