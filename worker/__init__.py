"""Everything that touches tmux, git and Claude Code on one machine, and the `ib` command line.

Areas, one subpackage each: agents, permissions, tmux, git, tasks, auto, hooks (the hot path),
frontends, fake (the test stand-in for Claude Code), service (the worker process and `ib up`), cli, and
conflicts (conflicts predicted while agents write).
`runtime` is the context every operation takes (settings, Redis, stores, tmux): a module of its own
at the top of the package so that every area may import it. ARCHITECTURE.md draws the arrows between them.
"""
