"""One agent's life on this machine: spawn it (worktree, prompt, Claude Code settings, tmux session),
talk to it (send, look, questions), pause and resume it, tear it down, and what the person reads about it.

Also the pure pieces every agent operation shares: where its files live (`layout`), its prompt, the
Claude Code settings it starts with, its transcript parser and tail, its log.
May import bus, worker.runtime (the context every operation takes), the layers under it (tmux, git,
permissions) and the small pure modules at the top of worker (errors, markers, ages, message_kinds,
terminal_text); never the service, hooks, merges, tasks, auto, the front ends or the cli.
"""
