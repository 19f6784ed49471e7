"""What `ib list`, `ib look` and `ib questions --json` show, read in the test's own process: the same
stores on the same Redis and the same tmux server, with the same code those commands call.

A poll that only waits for a state reads it here instead of starting an `ib` on every try (each costs
half a second of CPU, and the suite's polls started hundreds). A test about one of those commands runs
the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import redis

from bus.inbox.questions import QuestionStore
from bus.stores.agent_store import AgentStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from worker.agents.layout import AgentPaths
from worker.errors import TmuxError
from worker.tmux.client import Tmux


def _stores(runner: IbRunner) -> tuple[redis.Redis, Keys]:
    return redis.Redis.from_url(runner.env["IB_REDIS_URL"], decode_responses=True), Keys(
        runner.env["IB_NAMESPACE"]
    )


def agent_ids(runner: IbRunner) -> set[str]:
    """The ids `ib list` shows: every agent on record."""
    client, keys = _stores(runner)
    with client:
        return {agent.id for agent in AgentStore(client, keys).all()}


def pane_text(runner: IbRunner, agent_id: str, lines: int | None = None) -> str:
    """What `ib look AGENT [--lines N]` prints: the agent's screen (with `lines`, the last N lines, the
    scrollback included); empty while it has no record or no session."""
    client, keys = _stores(runner)
    with client:
        agent = AgentStore(client, keys).find(agent_id)
    if agent is None:
        return ""
    try:
        return Tmux(runner.env.get("IB_TMUX_SOCKET")).capture(agent.session, lines=lines)
    except TmuxError:
        return ""


def pending_questions(runner: IbRunner) -> list[dict[str, Any]]:
    """What `ib questions --json` prints: the questions nobody acknowledged yet."""
    client, keys = _stores(runner)
    with client:
        return [json.loads(q.to_json()) for q in QuestionStore(client, keys).pending()]


def reached(root: Path, agent: str, mark: str) -> bool:
    """Whether a fake agent's script got to its `fake: run ib log --quiet MARK` step: a test sees where an
    agent is by its log, since the agent's commands may write only in its own worktree (the path hook and
    the sandbox refuse the test's folders). The mark must be a line of its own, as `ib log` writes it: the
    agent's prompt, logged when the agent is made, names it too (a failover test killed Redis before the
    agent's `ib log` ran, and its script went past the gate it was to wait at)."""
    log = AgentPaths(root, agent).log
    if not log.is_file():
        return False
    return any(
        line.endswith(f"] {mark}") for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
    )
