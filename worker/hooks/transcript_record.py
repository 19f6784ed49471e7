"""Recording where an agent program keeps its transcript (the `transcript_path` its hooks name) on the
agent's record, so the worker's tail reads its output and tokens from the start of its first turn, not
only once that turn ended. Light: it runs on the hooks' path."""

from __future__ import annotations


def record_transcript(path: str, agent_id: str, cwd: str) -> None:
    """Store the transcript's `path` on the agent's record. With the bus away it is left out: the turn's
    end records it again, and the event the hook was run for still goes out."""
    from bus.errors import BusError, ConfigError
    from bus.events.publish import open_bus
    from bus.settings.hotconf import read_hotconf
    from bus.wire.keys import Keys

    conf = read_hotconf(cwd=cwd)
    try:
        with open_bus(conf) as conn:
            conn.call("HSET", Keys(conf.namespace).agent(agent_id), "transcript_path", path)
    except ConfigError:
        raise  # a setting that is wrong is said (worker.hooks.trouble)
    except BusError:
        return
