"""Local front ends on the bus: the `ib watch` dashboard (shell, keys, and its pure rendering), the status
block kept in CLAUDE.md (`status_block` pure, `claude_md` the file on disk, `status_node` the consumer), and
the tmux window-name indicator's pure state machine (`tmux_indicator`).

May import bus, worker.errors, worker.agents (the dashboard answers dialogs and sends text) and
worker.service's runtime and stack state (what `ib up` runs); never the cli.
"""
