"""The plain stores and their conversion: `hash_record` (every record kept as a Redis hash) and `hashes`
(typed reads), the agent records and each worker's index of its own (`agent_index`), /auto's state,
budgets, usage limits and usage records on Redis, and liveness keys (`heartbeat`).

May import events, connection, settings, costs, wire, poll and errors.
"""
