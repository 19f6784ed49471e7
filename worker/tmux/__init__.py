"""The tmux layer: the one module that runs the tmux binary (`client`), the pure argument building and
output parsing behind it (`parse`), the pane-state parser that reads Claude Code's screen (`pane_state`,
pure, with the screen's layout in `pane_screen`), and the pane watcher that runs it once a tick
(`pane_watch`).

May import bus and worker.errors; never agents, service or cli.
"""
