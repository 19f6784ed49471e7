"""Which Redis a process talks to and how it reaches it: the embedded Valkey server under `.ib/redis/`
(`embedded`), `IB_REDIS_URL` or else that server (`redis_url`), redis-py clients for long-running processes
(`clients`), and waiting out a Redis restart (`reconnect`).

May import settings, costs, wire, poll and errors. `redis_url` and `embedded` are on the hooks' path
(`publish` finds the bus with them): no redis-py, no pydantic.
"""
