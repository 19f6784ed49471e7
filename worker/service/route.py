"""Run an operation where it belongs: here when this machine's worker owns the agent it names, else on
the owner's worker over its command stream (`cmd:<worker>`, the answer on `reply:<id>`).

Generic over worker/operations.py: any operation whose arguments name an `agent` or a `question` is
routed by that, so operations added there are covered without a change here.
"""

from __future__ import annotations

from typing import Any

import redis

from bus.worker_rpc import request
from bus.workers import validate_worker_id
from worker.agents.ownership import owner_of_args
from worker.service.operations import run_operation
from worker.service.runtime import Runtime

DEFAULT_TIMEOUT = 60.0
TIMEOUTS = {"merge": 600.0, "new-agent": 120.0, "nuke": 300.0, "auto-start": 120.0}


def run_on_owner(
    rt: Runtime,
    op: str,
    args: dict[str, Any],
    *,
    on: str | None = None,
    reader: redis.Redis | None = None,
    sender: str = "",
) -> Any:
    """The operation's result, from this machine or from the worker `on` (default: the agent's owner).

    `reader` is a client without a socket timeout for waiting on a remote answer (the CLI's)."""
    worker = validate_worker_id(on) if on else (owner_of_args(rt, args) or rt.worker_id)
    if worker == rt.worker_id:
        return run_operation(rt, op, args)
    timeout = TIMEOUTS.get(op, DEFAULT_TIMEOUT)
    return request(reader or rt.client, rt.keys, worker, op, args, timeout, sender or f"ib@{rt.worker_id}")
