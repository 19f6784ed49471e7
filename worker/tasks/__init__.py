"""The worker's side of the task queue: claiming a task for a new agent (`assign`), running a task's test
command before it is marked done (`done_check`), and what `ib task list / show / tree` print (`views`).

The task graph itself lives on the bus (bus.tasks.task_store, bus.tasks.task_model). May import bus,
worker.agents, worker.runtime and worker.errors.
"""
