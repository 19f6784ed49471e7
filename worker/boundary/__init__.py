"""The agent's boundary: what `ib` may do when an agent runs it.

`identity` tells a person from an agent by the process ancestry (hot: `ib notify` and hooks use it),
`rules` is the pure per-role allow-list, `paths` keeps path arguments inside the agent's worktree, and
`guard` applies all three to a command of the CLI or of the worker's command stream. May import bus and
worker.errors; the CLI and the service import it, never the other way round.
"""
