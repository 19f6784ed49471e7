"""Everything an operation on agents needs on this machine: settings, the bus, the stores, tmux.

Built once by the CLI or the worker service and passed to every operation, so both run the same code.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bus.wire.keys import Keys
from worker.errors import WorkerError

if TYPE_CHECKING:  # each store loads when first used: a command pays only for the stores it reads
    import redis

    from bus.inbox.attention import AttentionStore
    from bus.inbox.prompts import PromptStore
    from bus.inbox.questions import QuestionStore
    from bus.settings.settings import Settings
    from bus.stores.agent_store import AgentStore
    from bus.tasks.schedules import ScheduleStore
    from bus.tasks.task_holds import OverlapClaims
    from bus.tasks.task_store import TaskStore
    from worker.tmux.client import Tmux


def repository_root(settings: Settings, cwd: str | Path) -> Path:
    """The git repository `cwd` is in (the main one, from an agent's worktree too); found without the bus."""
    found = settings.repository(str(cwd))
    if found is None:
        raise NotARepository(f"{cwd} is not inside a git repository; run ib from your project")
    return found


class NotARepository(WorkerError):
    """The command needs a git repository and there is none here."""


# The `ib` executable of this installation, for hooks and agents' PATH.
IB_COMMAND = str(Path(sys.executable).with_name("ib"))


@dataclass
class Runtime:
    settings: Settings
    client: redis.Redis
    cwd: Path = field(default_factory=Path.cwd)

    @cached_property
    def keys(self) -> Keys:
        return Keys(self.settings.namespace)

    @cached_property
    def agents(self) -> AgentStore:
        from bus.stores.agent_store import AgentStore

        return AgentStore(self.client, self.keys)

    @cached_property
    def questions(self) -> QuestionStore:
        from bus.inbox.questions import QuestionStore

        return QuestionStore(self.client, self.keys)

    @cached_property
    def attention(self) -> AttentionStore:
        """What waits on a person, from the event to its answer."""
        from bus.inbox.attention import AttentionStore

        return AttentionStore(self.client, self.keys)

    @cached_property
    def prompts(self) -> PromptStore:
        from bus.inbox.prompts import PromptStore

        return PromptStore(self.client, self.keys)

    @cached_property
    def tasks(self) -> TaskStore:
        from bus.tasks.task_store import TaskStore

        return TaskStore(self.client, self.keys, self.settings.events_maxlen, wait=self.settings.write_wait)

    @cached_property
    def claims(self) -> OverlapClaims:
        """Claims that hold a task whose files overlap one in flight (IB_OVERLAP)."""
        from bus.tasks.merges import MergeStore
        from bus.tasks.task_holds import OverlapClaims

        merges = MergeStore(self.client, self.keys, self.settings.events_maxlen, self.settings.write_wait)
        return OverlapClaims(self.tasks, merges, self.settings.overlap)

    @cached_property
    def schedules(self) -> ScheduleStore:
        from bus.tasks.schedules import ScheduleStore

        return ScheduleStore(self.client, self.keys, self.tasks, self.settings.schedule_min_interval)

    @cached_property
    def tmux(self) -> Tmux:
        from worker.tmux.client import Tmux  # libtmux loads only for the commands that drive tmux

        return Tmux(self.settings.tmux_socket)

    @cached_property
    def root(self) -> Path:
        return repository_root(self.settings, self.cwd)

    @property
    def worker_id(self) -> str:
        return self.settings.worker_id

    @property
    def ib_command(self) -> str:
        """The `ib` executable of this installation, for hooks and agents' PATH."""
        return IB_COMMAND

    def publish(self, type_: str, msg: str = "", **fields: Any) -> str:
        from bus.events.envelope import make_event
        from bus.events.streams import publish

        event = make_event(type_, msg, **fields)
        return publish(self.client, self.keys, event, self.settings.events_maxlen, self.settings.write_wait)

    def publish_move(self, agent_id: str, before: str, state: str, msg: str, **fields: Any) -> str | None:
        """Move the agent's state from `before` to `state` and publish the `state` event of it, in one step
        (bus.events.streams.move_state): the event's stream id, None when its state is no longer `before`."""
        from bus.events.envelope import make_event
        from bus.events.streams import move_state
        from bus.stores.agent_store import Agent

        event = make_event("state", msg, **fields)
        written = Agent.hash_fields(state=state, state_at=time.time(), state_by="")
        move = (Agent.hash_key("state"), before, written)
        key = self.keys.agent(agent_id)
        wait = self.settings.write_wait
        return move_state(self.client, self.keys, key, move, event, self.settings.events_maxlen, wait)
