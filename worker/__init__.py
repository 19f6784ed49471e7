"""Everything that touches tmux, git and Claude Code on one machine, and the `ib` command line."""
