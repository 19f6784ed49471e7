"""The agent's boundary: what `ib` may do when an agent runs it.

`identity` tells a person from an agent by the process ancestry (hot: `ib notify` and hooks use it),
`rules` is the pure per-role allow-list, `paths` keeps path arguments inside the agent's worktree, and
`guard` applies all three to a command of the CLI or of the worker's command stream, `reach` tells when `ib`
runs inside Claude Code's sandbox without a bus (or in the bubblewrap box of a Gemini CLI agent, which has
no bus address), `relay_client` then sends the command through Claude Code's proxy (from the box: directly)
to the worker's `relay`, which names the agent by the connection and runs it as that agent
(`relay_wire`: the pure wire and /proc parsing), `done_check_box` runs a task's test command for an agent
in bubblewrap.
May import bus, worker.errors, worker.permissions and worker.programs.claude.sandbox; the CLI and the service
import it, never the other way round.
"""
