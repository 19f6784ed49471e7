"""The task graph and what feeds it: tasks and their Lua scripts (`task_store`, `task_model`, `task_lua`,
`task_defaults`), the blocking claim (`task_wait`), claims that respect overlaps (`task_holds`, `touches`),
plans, scheduled tasks (`schedules`, `cron`) and the merge queue tasks wait on (`merges`, `merge_request`,
`merge_order`).

May import stores, events, connection, settings, costs, wire, poll and errors. `task_lua` is on the hooks'
path (the Stop hook finishes a task): stdlib and wire only.
"""
