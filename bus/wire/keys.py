"""Every Redis key and stream name ittybus uses, built from the namespace prefix.

No other module spells a key: they all ask a `Keys`, the hooks included. It is a slotted `Record`, not a
dataclass, so the hook path imports it for free (`dataclasses` costs a hook ~15 ms).
"""

from __future__ import annotations

from bus.wire.record import Record


class Keys(Record):
    """Key names under one namespace (default ``ib:``)."""

    __slots__ = ("namespace",)
    namespace: str

    def __init__(self, namespace: str = "ib:") -> None:
        object.__setattr__(self, "namespace", namespace)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Keys is immutable: make another Keys instead of setting {name}")

    def _k(self, *parts: str) -> str:
        return self.namespace + ":".join(parts)

    # streams
    @property
    def events(self) -> str:
        return self._k("events")

    def commands(self, worker: str) -> str:
        return self._k("cmd", worker)

    def reply(self, command_id: str) -> str:
        return self._k("reply", command_id)

    def output(self, agent: str) -> str:
        return self._k("out", agent)

    # agents
    def agent(self, agent_id: str) -> str:
        return self._k("agent", agent_id)

    @property
    def agents(self) -> str:
        return self._k("agents")

    def worker_agents(self, worker_id: str) -> str:
        """Set: the ids of the agents a worker owns, kept in the same transaction as each agent's record."""
        return self._k("worker-agents", worker_id)

    @property
    def agent_index(self) -> str:
        """Set once the per-worker agent sets were built (bus.stores.agent_index): bus data from before
        them gets them built once."""
        return self._k("agent-index")

    def usage(self, agent_id: str) -> str:
        """The tokens of each model answer of an agent (stream), kept after the agent is gone."""
        return self._k("usage", agent_id)

    @property
    def usage_agents(self) -> str:
        """The agents that have a `usage` stream."""
        return self._k("usage-agents")

    def stop_turn(self, agent_id: str) -> str:
        """The last Stop-hook turn already published for an agent (once per turn)."""
        return self._k("agent", agent_id, "turn")

    # budgets and the runaway watchdog (bus.stores.budget_store, worker.budgets)
    def budget(self, scope: str, target: str) -> str:
        """Hash: one budget's unit, limit and the events already sent (scope agent, task or day)."""
        return self._k("budget", scope, target)

    @property
    def budgets(self) -> str:
        """Set of `scope:target` of every budget set, so `ib budget list` finds them without a scan."""
        return self._k("budgets")

    def spent(self, scope: str, target: str) -> str:
        """Hash: dollars and tokens an agent, a task or a day (UTC date) has spent, kept by the worker."""
        return self._k("spent", scope, target)

    def hold(self, agent_id: str) -> str:
        """Hash: why an agent is paused (a budget, the watchdog); its PreToolUse hook refuses while it is."""
        return self._k("hold", agent_id)

    def tool_calls(self, worker: str) -> str:
        """Stream: each tool call of the worker's agents, as the PreToolUse hook saw it (the watchdog's)."""
        return self._k("tool-calls", worker)

    # tasks
    def task(self, task_id: str) -> str:
        return self._k("task", task_id)

    def task_deps(self, task_id: str) -> str:
        return self._k("task", task_id, "deps")

    def task_dependents(self, task_id: str) -> str:
        return self._k("task", task_id, "dependents")

    def task_notes(self, task_id: str) -> str:
        return self._k("task", task_id, "notes")

    @property
    def tasks(self) -> str:
        return self._k("tasks")

    def project_tasks(self, project: str) -> str:
        return self._k("project", project, "tasks")

    def ready(self, project: str) -> str:
        return self._k("ready", project)

    @property
    def task_seq(self) -> str:
        return self._k("task-seq")

    @property
    def task_claims(self) -> str:
        """Claimed task ids scored by claim time (ms), so stale claims are found without a scan."""
        return self._k("task-claims")

    # schedules
    def schedule(self, schedule_id: str) -> str:
        return self._k("schedule", schedule_id)

    @property
    def schedules(self) -> str:
        """Schedule ids scored by their next due time (Unix seconds), so a tick reads only the due ones."""
        return self._k("schedules")

    @property
    def schedule_seq(self) -> str:
        return self._k("schedule-seq")

    def schedule_fire(self, schedule_id: str, due: int) -> str:
        """The lock one worker takes to add the task of one firing (schedule id + due time)."""
        return self._k("schedule-fire", schedule_id, str(due))

    # plans (a planner agent's task graph, a draft until approved)
    def plan(self, plan_id: str) -> str:
        return self._k("plan", plan_id)

    @property
    def plans(self) -> str:
        """Plan ids scored by creation time (Unix seconds)."""
        return self._k("plans")

    @property
    def planning(self) -> str:
        """Plan ids whose planner is at work, scored by their deadline (Unix seconds)."""
        return self._k("planning")

    @property
    def plan_seq(self) -> str:
        return self._k("plan-seq")

    # merges
    def merge_queue(self, project: str) -> str:
        return self._k("merges", project)

    def merge(self, merge_id: str) -> str:
        return self._k("merge", merge_id)

    @property
    def merge_seq(self) -> str:
        return self._k("merge-seq")

    @property
    def merge_projects(self) -> str:
        """Projects whose merge queue has (or had) requests, so a restarted worker finds every queue."""
        return self._k("merge-projects")

    # conflict prediction (worker.conflicts)
    def conflict_checks(self, worker: str) -> str:
        """Stream: agents whose files just changed, for their worker to check (the PostToolUse hook adds)."""
        return self._k("conflict-checks", worker)

    def conflict_marks(self, side: str, other: str) -> str:
        """Hash: path -> fingerprint of each overlap between two sides already told (the pair in sorted
        order, so either side's check finds it); a side is an agent id or `branch:<name>`."""
        first, second = sorted((side, other))
        return self._k("conflict-marks", first, second)

    def conflict_notes(self, agent_id: str) -> str:
        """List: conflict notes the agent has not read; its next PostToolUse hook prints and clears them."""
        return self._k("conflict-notes", agent_id)

    # questions and messages for the person
    def question(self, question_id: str) -> str:
        return self._k("question", question_id)

    @property
    def questions(self) -> str:
        return self._k("questions")

    # what waits on a person (bus.inbox.attention)
    def attention(self, item_id: str) -> str:
        """Hash: one "needs you" item, from the event that raised it to its answer."""
        return self._k("attention", item_id)

    @property
    def attention_open(self) -> str:
        """Zset: the open items' ids, scored by the time they were raised (ms)."""
        return self._k("attention-open")

    @property
    def attention_slots(self) -> str:
        """Hash: `agent|kind` -> the open item of that agent and kind (a repeat joins it)."""
        return self._k("attention-slots")

    def attention_sent(self, item_id: str) -> str:
        """Hash: the targets (round, user or channel) an item's escalation was delivered to."""
        return self._k("attention", item_id, "sent")

    def attention_lease(self, item_id: str) -> str:
        """Hash: target -> until when (ms) a bot holds its delivery; an expired one is taken again."""
        return self._k("attention", item_id, "lease")

    def review_shown(self, message_id: int) -> str:
        """A /diff picture in Telegram → the agent, file and line range it shows (JSON, with a TTL)."""
        return self._k("review", str(message_id))

    def review_comments(self, agent: str) -> str:
        """The comments on an agent's change waiting for "Request changes" (a list of JSON, with a TTL)."""
        return self._k("review-comments", agent)

    def user_message(self, message_id: str) -> str:
        return self._k("message", message_id)

    @property
    def user_messages(self) -> str:
        return self._k("messages")

    def status_node(self, file_id: str) -> str:
        """Heartbeat of the one `ib status-node` keeping a given file.

        See `worker.frontends.status_node.file_id`.
        """
        return self._k("status-node", file_id)

    # liveness
    def worker(self, worker_id: str) -> str:
        return self._k("worker", worker_id)

    @property
    def workers(self) -> str:
        return self._k("workers")

    @property
    def worker_seen(self) -> str:
        """Hash: worker id -> Redis time (ms) of its last heartbeat, kept after the heartbeat expires."""
        return self._k("worker-seen")

    @property
    def workers_down(self) -> str:
        """Workers whose heartbeat expired and whose agents were marked unreachable."""
        return self._k("workers-down")

    def listener(self, name: str) -> str:
        return self._k("listener", name)

    def listener_starting(self, name: str) -> str:
        """Set briefly by the primary session's hook when that session has just started `ib listen`."""
        return self._k("listener-starting", name)

    # the person's own Claude Code sessions and what is pushed into their inboxes (bus.inbox.push_store)
    def session_inbox(self, session_id: str) -> str:
        """Hash: one person's session's inbox (socket, token, pid, cwd, root, host), as its hooks saw it."""
        return self._k("session-inbox", session_id)

    @property
    def session_inboxes(self) -> str:
        """Set of the session ids with a recorded inbox."""
        return self._k("session-inboxes")

    def session_pusher(self, host: str, root: str) -> str:
        """Heartbeat of the worker pushing into the sessions on `host` in repository `root` (the reminder
        hook reads it)."""
        return self._k("session-pusher", host, root)

    @property
    def push_pending(self) -> str:
        """Zset: events the person must act on, not yet acknowledged (score: the stream id's ms)."""
        return self._k("push", "pending")

    @property
    def push_lines(self) -> str:
        """Hash: event id → the one line that tells the person about it."""
        return self._k("push", "lines")

    def push_agent(self, agent_id: str) -> str:
        """Set: the pending events of one agent (acting on the agent acknowledges them)."""
        return self._k("push", "agent", agent_id)

    def pushed(self, session_id: str) -> str:
        """Set: the events already pushed into one session (never twice)."""
        return self._k("push", "sent", session_id)

    @property
    def push_dropped(self) -> str:
        """List: the latest sessions dropped as unreachable, one line each (newest first)."""
        return self._k("push", "dropped")

    def agent_inbox(self, agent_id: str) -> str:
        """Hash: an agent's own Claude Code inbox (the fields of `session_inbox`), as its SessionStart hook
        saw it; after it was found stale, only `dropped`, the line `ib info` shows."""
        return self._k("agent-inbox", agent_id)

    # usage limits (bus.stores.limit_store)
    def limit(self, account: str) -> str:
        """An account's usage limit: its reset time, the window that ran out, since when (hash)."""
        return self._k("limit", account)

    def limit_agents(self, account: str) -> str:
        """The agents parked by an account's limit, to be resumed at its reset (set)."""
        return self._k("limit", account, "agents")

    @property
    def limits(self) -> str:
        """The accounts that are limited now (set)."""
        return self._k("limits")

    def prompt(self, agent_id: str) -> str:
        """The dialog an agent shows that waits for a person (permission, plan, question, trust)."""
        return self._k("prompt", agent_id)

    def prompt_closed(self, agent_id: str) -> str:
        """A dialog the pane watcher told and saw close before any hook told it (hash, short TTL)."""
        return self._k("prompt-closed", agent_id)

    def prompt_answered(self, prompt_id: str) -> str:
        """Set by the first answer to a dialog, so a second one is told it was already answered."""
        return self._k("prompt-answered", prompt_id)

    def answered_lately(self, agent_id: str) -> str:
        """String (TTL): the agent's last answered dialog, for telling a late second answer why."""
        return self._k("answered-lately", agent_id)

    # delivery bookkeeping
    def seen(self, scope: str, event_id: str) -> str:
        """Marks an event as handled by one consumer group (idempotent handling by event id)."""
        return self._k("seen", scope, event_id)

    @property
    def dead_letters(self) -> str:
        """Stream of the entries no consumer could read, with the reason (`ib events --dead`)."""
        return self._k("dead")

    def dead_letter_mark(self, stream: str, entry_id: str) -> str:
        """Marks an entry as copied to the dead letters, so the consumers that meet it copy it once."""
        return self._k("dead-mark", stream.removeprefix(self.namespace), entry_id)

    def spooled(self, spool_id: str) -> str:
        """Marks an event of an older spool (no client-made id) as published by a flush."""
        return self._k("spooled", spool_id)

    def published(self, eid: str) -> str:
        """Marks an event as published by its client-made id: a retry or a flush never sends it twice."""
        return self._k("published", eid)

    # telegram bindings, the group's flood budget, and the auto loop
    def topics(self, kind: str) -> str:
        return self._k("topic", kind)

    def telegram_budget(self, chat: int) -> str:
        """What every bot process sent to one chat in the last minute (messages and edits), by time."""
        return self._k("telegram", "budget", str(chat))

    def dialog_message(self, thread: int | None, prompt_id: str) -> str:
        """Hash: the message that shows an agent's dialog in one topic (None: General) and the event that
        first told it, so a restarted bot edits that message instead of telling the dialog again."""
        return self._k("telegram", "dialog", "general" if thread is None else str(thread), prompt_id)

    @property
    def approvals_followed(self) -> str:
        """Hash: agent -> the Approve note a bot follows through the merge queue (JSON), so a restarted bot
        follows it on to the end (bot.review.approval_memory)."""
        return self._k("telegram", "approvals")

    def auto(self, project: str) -> str:
        return self._k("auto", project)

    @property
    def autos(self) -> str:
        return self._k("autos")
