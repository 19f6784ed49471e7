"""The tmux layer: the one module that runs the tmux binary (`client`), the pure argument building and
output parsing behind it (`parse`), the pane-state parser that reads Claude Code's screen (`pane_state`,
pure, with the screen's layout in `pane_screen`), the pane watcher that runs it once a tick
(`pane_watch`), and the painter of a screen's colours into a PNG (`screenshot`, pure: rich + Pillow).

May import bus, worker.errors, worker.agents' environment and markers, worker.hooks' event fields and
(the pane watcher) worker.service.runtime, the context it runs in; never the cli.
"""
