"""Merges: `ib merge` (`land`: rebase the agent's branch onto the target, merge commit, tear the agent
down) and the worker's side of the per-project merge queue (`merge_queue`).

May import bus, worker.errors, worker.runtime, worker.git and worker.agents (a merged agent is torn down);
never the service, the front ends or the cli.
"""
