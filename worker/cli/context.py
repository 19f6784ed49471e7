"""What every command needs, built once and lazily: the settings, the key names, the Redis clients."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bus.errors import FailoverUnderWay, NotReplicated
from bus.wire.keys import Keys
from worker.runtime import repository_root

if TYPE_CHECKING:  # the settings, redis-py and the stores load when a command first asks for them
    import redis

    from bus.commands.worker_commands import Command
    from bus.settings.hotconf import HotConf
    from bus.settings.settings import Settings
    from worker.runtime import Runtime

FAILOVER_WAIT = 60.0  # seconds a command waits for the sentinels to name a primary that answers (default
# Sentinel settings notice a dead primary after 30 s and promote a replica a few seconds later)
FAILOVER_POLL = 0.5


@dataclass
class Context:
    cwd: str = field(default_factory=os.getcwd)

    @cached_property
    def settings(self) -> Settings:
        from bus.settings.settings import load_settings

        return load_settings(self.cwd)

    @cached_property
    def root(self) -> Path:
        """The repository this command runs in, found without the bus (NotARepository outside one)."""
        return repository_root(self.settings, self.cwd)

    @cached_property
    def keys(self) -> Keys:
        return Keys(self.settings.namespace)

    @cached_property
    def url(self) -> str:
        """The bus (an embedded one is started again only where `ib up` made it); the spool is flushed on
        first contact. A flush that Redis took but no replica confirmed is a warning: what this command
        reads or writes next needs no earlier event, and the spool keeps them for the next flush."""
        from bus.connection.clients import hotconf, resolve_url

        conf = hotconf(self.settings, self.cwd)
        try:
            _first_contact(conf)
        except NotReplicated as e:
            print(f"ib: warning: sending the spool: {e}; the spool keeps it for later", file=sys.stderr)
        return resolve_url(self.settings, self.cwd)

    @cached_property
    def client(self) -> redis.Redis:
        from bus.connection.clients import client_for

        return client_for(self.url)

    @cached_property
    def runtime(self) -> Runtime:
        from worker.runtime import Runtime

        return Runtime(self.settings, self.client, Path(self.cwd))

    def blocking_redis(self) -> redis.Redis:
        """A client for BLOCK reads: no socket timeout."""
        from bus.connection.clients import client_for

        return client_for(self.url, blocking=True)

    def on_owner(self, command: Command, on: str | None = None) -> Any:
        """Run a worker command on the agent's own machine: here, or through its worker over the bus."""
        from bus.settings.repo_paths import agent_from_path
        from worker.service.route import (
            run_on_owner,  # loads every operation: only for the commands that need it
        )

        caller = agent_from_path(self.cwd) or self.settings.agent_id or ""
        done = run_on_owner(self.runtime, command, on=on, reader=self.blocking_redis(), sender=caller)
        if not caller:
            self._seen(command)
        return done

    def _seen(self, command: Command) -> None:
        """The person acted on an agent (approved, answered, looked, diffed, merged…): what was pushed
        into their session about it is acknowledged."""
        from bus.commands.worker_commands import OnAgent
        from bus.inbox import push_store

        if isinstance(command, OnAgent):
            push_store.acknowledge_agent(self.client, self.keys, command.agent)


def _first_contact(conf: HotConf) -> None:
    """Reach the bus once and send what the spool holds for it. Behind Sentinel, a failover under way (the
    sentinels name a primary that is gone or not promoted yet) is waited out for up to FAILOVER_WAIT: an
    agent's `ib task done` that failed there left its task open, and /auto paused."""
    from bus.events.publish import open_bus

    deadline = time.monotonic() + FAILOVER_WAIT
    told = False
    while True:
        try:
            open_bus(conf).close()
            return
        except FailoverUnderWay as e:
            if time.monotonic() >= deadline:
                raise
            if not told:
                print(f"ib: {e}; waiting up to {FAILOVER_WAIT:g} s for a new primary", file=sys.stderr)
                told = True
            time.sleep(FAILOVER_POLL)  # nothing to block on: the sentinels answer only when asked
