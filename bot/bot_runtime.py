"""What the bot's handlers share: the configuration, the bus (async and, in threads, sync), the topic
registry, and the sender; plus the lookups every handler needs (this topic's agent, project, worker).

Blocking bus calls (bus.commands.worker_rpc, the task and agent stores) run in threads via
`asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import redis
import redis.asyncio as aredis
from telegram.ext import ContextTypes

from bot.config import BotConfig
from bot.delivery.forum import Forum
from bot.delivery.outbound import Document, Outgoing
from bot.delivery.sender import Sender
from bot.delivery.teardown_note import TeardownNotes
from bot.errors import BotError
from bot.render.render import Button
from bot.render.split import split_message
from bot.topics.topics import TopicRegistry
from bus.commands.worker_commands import Command
from bus.commands.worker_rpc import request, submit
from bus.costs.budgets import Amount
from bus.inbox.questions import Question
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.auto_state import AutoState
from bus.tasks.schedules import ScheduleStore
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys

T = TypeVar("T")
log = logging.getLogger(__name__)
COMMAND_TIMEOUT = 30.0
RUNTIME_KEY = "ittybus"


class NoWorker(BotError):
    """No worker to run a command on (none running, or several and none configured)."""


class NoAgent(BotError):
    """The command needs an agent and the topic has none (or the agent is gone)."""


class NoProject(BotError):
    """The command needs a project and the topic is bound to none."""


@dataclass
class BotRuntime:
    config: BotConfig
    keys: Keys
    client: aredis.Redis  # for the event loop
    # for bus.commands.worker_rpc and the stores, in threads (no socket timeout: BLPOP waits)
    sync: redis.Redis
    registry: TopicRegistry
    sender: Sender
    forum: Forum
    events_maxlen: int
    schedule_min_interval: float = 60.0
    write_wait: tuple[int, int] = (0, 0)  # (replicas, ms) a write that must outlive a failover waits for
    # IB_PRICES over bus.costs.prices' table
    prices: dict[str, tuple[float, ...]] = field(default_factory=dict)
    day_budget: Amount | None = None  # IB_DAY_BUDGET, the day budget when none is set on the bus

    background: set[asyncio.Task[None]] = field(default_factory=set)  # held until done: the loop holds weakly

    def in_background(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run `work` beside the handlers (they run one at a time); a failure is logged."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self.background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("the bot's %s task failed", task.get_name(), exc_info=task.exception())

    @cached_property
    def notes(self) -> TeardownNotes:
        return TeardownNotes(self.sender, self.say)

    @cached_property
    def schedules(self) -> ScheduleStore:
        return ScheduleStore(self.sync, self.keys, self.tasks, self.schedule_min_interval)

    @cached_property
    def agents(self) -> AgentStore:
        return AgentStore(self.sync, self.keys)

    @cached_property
    def tasks(self) -> TaskStore:
        return TaskStore(self.sync, self.keys, self.events_maxlen, wait=self.write_wait)

    # --- saying things -----------------------------------------------------------------------------------

    def say(
        self,
        thread: int | None,
        html: str,
        reply_to: int | None = None,
        buttons: tuple[tuple[Button, ...], ...] = (),
    ) -> None:
        """Answer a person in a topic (ahead of the backlog of events); long text goes in several parts."""
        parts = split_message(html) or ["(nothing)"]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            self.sender.put(
                Outgoing(
                    self.config.chat_id,
                    thread,
                    part,
                    buttons=buttons if last else (),
                    reply_to=reply_to if i == 0 else None,
                    urgent=True,
                    mergeable=False,
                )
            )

    def send_file(
        self,
        thread: int | None,
        filename: str,
        content: bytes,
        caption: str,
        photo: bool = False,
        reply_to: int | None = None,
        anchor: str | None = None,
    ) -> None:
        """A file in a topic (`photo`: shown as a picture; `anchor`: what replies to it are about)."""
        self.sender.put(
            Outgoing(
                self.config.chat_id,
                thread,
                caption,
                anchor=anchor,
                reply_to=reply_to,
                document=Document(filename, content, photo),
                urgent=True,
                mergeable=False,
            )
        )

    # --- the bus -----------------------------------------------------------------------------------------

    async def blocking(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(call, *args, **kwargs)

    async def command(
        self, worker: str, command: Command, sender: str, timeout: float = COMMAND_TIMEOUT
    ) -> Any:
        """Run `command` on `worker` and wait for its answer (BusError when it fails or the worker is
        down). The bot waits less than the CLI does: a person is looking at the chat."""
        return await self.blocking(
            request, self.sync, self.keys, worker, command, timeout, sender, self.write_wait
        )

    async def queue_command(self, worker: str, command: Command, sender: str) -> str:
        """Leave `command` in the worker's command stream for when it runs again."""
        return await self.blocking(submit, self.sync, self.keys, worker, command, sender, self.write_wait)

    async def worker_alive(self, worker: str) -> bool:
        return bool(await self.client.exists(self.keys.worker(worker)))

    async def default_worker(self) -> str:
        """IB_WORKER_ID when set, else the only live worker."""
        if self.config.worker_id:
            return self.config.worker_id
        members = cast(set[str], await self.client.smembers(self.keys.workers))
        live = [w for w in sorted(members) if await self.worker_alive(w)]
        if len(live) == 1:
            return live[0]
        if not live:
            raise NoWorker(
                "no worker is running: start one with `ib worker` on the machine with the repository"
            )
        raise NoWorker(
            f"{len(live)} workers are running ({', '.join(live)}): name one with --on WORKER "
            "(or set IB_WORKER_ID for the bot)"
        )

    async def find_agent(self, agent_id: str) -> Agent | None:
        data = cast(dict[str, str], await self.client.hgetall(self.keys.agent(agent_id)))
        return Agent.from_hash(data) if data else None

    async def auto_state(self, project: str) -> AutoState | None:
        data = cast(dict[str, str], await self.client.hgetall(self.keys.auto(project)))
        return AutoState.from_hash(data) if data else None

    async def find_question(self, question_id: str) -> Question | None:
        data = cast(dict[str, str], await self.client.hgetall(self.keys.question(question_id)))
        return Question.from_hash(data) if data.get("id") else None

    # --- what a topic is about ---------------------------------------------------------------------------

    async def agent_of_topic(self, thread: int | None) -> Agent | None:
        """The agent a task, agent or merge topic belongs to (the newest, when several worked there)."""
        if thread is None:
            return None
        found: list[Agent] = []
        for kind, key in self.registry.bound_to(thread):
            if kind in ("agent", "merge") and (agent := await self.find_agent(key)) is not None:
                found.append(agent)
            elif kind == "task":
                found.extend(a for a in await self.blocking(self.agents.all) if a.task == key)
        return max(found, key=lambda a: a.created_at) if found else None

    async def agent_for(self, thread: int | None, named: str | None) -> Agent:
        """The agent a command names, else the topic's; NoAgent says which is missing."""
        if named is not None:
            agent = await self.find_agent(named)
            if agent is None:
                raise NoAgent(f"no agent {named!r} (see /agents)")
            return agent
        agent = await self.agent_of_topic(thread)
        if agent is None:
            raise NoAgent(
                "this topic has no agent: use it in an agent's topic, or name one, e.g. /look agent-1"
            )
        return agent

    async def project_of_topic(self, thread: int | None) -> str | None:
        if thread is None:
            return None
        for kind, key in self.registry.bound_to(thread):
            if kind == "project":
                return key
        agent = await self.agent_of_topic(thread)
        if agent is None or not agent.project:
            return None
        return agent.project

    async def project_for(self, thread: int | None) -> str:
        project = await self.project_of_topic(thread)
        if project is None:
            raise NoProject("this topic belongs to no project: bind one first with /project NAME")
        return project


def runtime(context: ContextTypes.DEFAULT_TYPE) -> BotRuntime:
    rt = context.bot_data.get(RUNTIME_KEY)
    if not isinstance(rt, BotRuntime):
        raise BotError("the bot's runtime is missing from the application (bot_data)")
    return rt
