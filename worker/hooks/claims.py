"""The claims of an agent whose session ended, failed from its SessionEnd hook on the light client: the
attempt counts and the task is ready again while attempts remain, as when the pane watcher sees it first.
The task script refuses a claim already given back, so whichever notices second changes nothing."""

from __future__ import annotations

from bus.wire.keys import Keys

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from bus.settings.hotconf import HotConf
    from bus.wire.resp import Connection


def held_by(conn: Connection, keys: Keys, agent_id: str) -> list[str]:
    """The tasks `agent_id` holds a claim on now (as `TaskStore.held_by`)."""
    claimed = conn.call("ZRANGE", keys.task_claims, 0, -1)
    ids = [i.decode() for i in claimed if isinstance(i, bytes)] if isinstance(claimed, list) else []
    if not ids:
        return []
    holders = conn.pipeline([("HGET", keys.task(task_id), "claimed_by") for task_id in ids])
    mine = agent_id.encode()
    return [task_id for task_id, holder in zip(ids, holders, strict=True) if holder == mine]


def fail_claims(conn: Connection, conf: HotConf, agent_id: str) -> list[str]:
    """Fail each claim `agent_id` holds; the ids this call failed."""
    from bus.events.confirmed_call import confirmed_call
    from bus.tasks.task_lua import fail_call
    from bus.wire.resp import ServerError
    from worker.programs.hook_outcome import stopped_reason

    keys = Keys(conf.namespace)
    failed = []
    for task_id in held_by(conn, keys, agent_id):
        script, script_keys, args = fail_call(
            keys, conf.events_maxlen, task_id, agent_id, stopped_reason(agent_id)
        )
        try:  # waits for the replicas: a lost failure would leave the task claimed by a stopped agent
            command = ("EVAL", script, len(script_keys), *script_keys, *args)
            confirmed_call(conn, command, (conf.wait_replicas, conf.wait_ms), "the task change (fail)")
        except ServerError:
            continue  # the pane watcher (or the agent) gave it back in the meantime: nothing to do
        failed.append(task_id)
    return failed
