"""Budgets that act and the runaway watchdog: the worker's side of pausing an agent.

`keeper` adds each read of an agent's answers to what it, its task and the day spent, sends
`budget_warning` at 80 % and `budget_exceeded` at 100 %, and holds the agent (its PreToolUse hook then
refuses every call) while a budget stays used up. `runaway` is pure: the three signs of an agent going
round in circles. `watchdog` is the worker's thread that reads the hook's tool-call stream and holds an
agent with one `runaway` event when a sign shows.

May import bus, worker.errors and worker.runtime; the transcript tail in worker.agents calls the keeper.
"""
