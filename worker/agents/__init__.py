"""One agent's life on this machine: spawn it (worktree, prompt, Claude Code settings, tmux session),
talk to it (send, look, questions), pause and resume it, tear it down, and what the person reads about it.

Also the pure pieces every agent operation shares: where its files live (`layout`), its prompt and the
completion markers, the Claude Code settings it starts with, its transcript parser and tail, its log.
May import bus, worker.errors and the other worker areas' pure or I/O layers (tmux, git, permissions),
worker.runtime (the context every operation takes) and the status block's pure rendering;
never the rest of the service, the front ends' I/O or the cli.
"""
