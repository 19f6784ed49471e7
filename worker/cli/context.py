"""What every command needs, built once and lazily: the settings, the key names, the Redis clients."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import redis

from bus.clients import client_for, hotconf, resolve_url
from bus.keys import Keys
from bus.publish import open_bus
from bus.settings import Settings, load_settings
from worker.runtime import Runtime

if TYPE_CHECKING:
    from bus.worker_commands import Command


@dataclass
class Context:
    cwd: str = field(default_factory=os.getcwd)

    @cached_property
    def settings(self) -> Settings:
        return load_settings(self.cwd)

    @cached_property
    def keys(self) -> Keys:
        return Keys(self.settings.namespace)

    @cached_property
    def url(self) -> str:
        """The bus, started if it is the embedded one; the spool is flushed on first contact."""
        conf = hotconf(self.settings, self.cwd)
        open_bus(conf).close()
        return resolve_url(self.settings, self.cwd)

    @cached_property
    def client(self) -> redis.Redis:
        return client_for(self.url)

    @cached_property
    def runtime(self) -> Runtime:
        return Runtime(self.settings, self.client, Path(self.cwd))

    def blocking_redis(self) -> redis.Redis:
        """A client for BLOCK reads: no socket timeout."""
        return client_for(self.url, blocking=True)

    def on_owner(self, command: Command, on: str | None = None) -> Any:
        """Run a worker command on the agent's own machine: here, or through its worker over the bus."""
        from bus.repo_paths import agent_from_path
        from worker.service.route import (
            run_on_owner,  # loads every operation: only for the commands that need it
        )

        caller = agent_from_path(self.cwd) or self.settings.agent_id or ""
        return run_on_owner(self.runtime, command, on=on, reader=self.blocking_redis(), sender=caller)
