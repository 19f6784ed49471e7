"""The git layer: the git binary behind a small API (`repo`: worktrees, branches, diffs, rebase and merge
that leave the repository clean), the crash-safe move of a branch and its checkout to a merge commit
(`landing`, `stale_locks`), the pure parsing of what git prints (`parse`), and an agent's own
repository with the fetches that carry branches between it and the person's (`agent_repo`).

May import bus and worker.errors only: merging an agent's branch (which tears the agent down) is
worker.merges'.
"""
