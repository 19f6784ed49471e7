"""Events and streams: the envelope (`envelope`, pure and light; `event_model`, its pydantic model;
`event_options`), streams and consumer groups (`streams`), publishing from short-lived processes (`publish`,
`append_once`, the `spool` while Redis is away), writes that wait for replicas (`replication`,
`confirmed_call`), and what an agent is doing, folded from its output items (`activity`).

May import connection, settings, costs, wire, poll and errors. `envelope`, `publish`, `append_once`, `spool`
and `confirmed_call` are on the hooks' path: no redis-py, no pydantic.
"""
