"""What reads the streams: the one blocking read loop every background reader runs on (`stream_reader`), and
for a person or a script `ib events` (`follow`), `ib listen` (`listener`),
the events after a cursor for `ib mcp` (`event_cursor`), the entries nobody can read (`dead_letters`), and an
acknowledgement a stop waits for (`uninterrupted`).

May import inbox, tasks, stores, events, connection, settings, costs, wire, poll and errors.
"""
