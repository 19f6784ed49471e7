"""The git layer and merges: the git binary behind a small API (`repo`: worktrees, branches, diffs,
rebase and merge that leave the repository clean), the pure parsing of what git prints (`parse`), an
agent's own repository and the fetches that carry branches between it and the person's (`agent_repo`),
`ib merge` (`merge`) and the worker's side of the per-project merge queue (`merge_queue`).

May import bus, worker.errors, worker.agents (a merged agent is torn down) and worker.runtime, the
context every operation takes; never the front ends or the cli.
"""
