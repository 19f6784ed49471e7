"""The tmux layer: `client` (`Tmux`, sessions and panes by exact name, on libtmux's objects), `server`
(the libtmux `Server` whose `cmd` is the one place tmux runs: no secrets, a timeout, our errors), the pure
argument building and output parsing behind them (`parse`), the pane-state parser that reads Claude Code's
screen (`pane_state`, pure, with the screen's layout in `pane_screen`), the pane watcher that runs it once
a tick (`pane_watch`), and the painter of a screen's colours into a PNG (`screenshot`, pure: rich + Pillow).

May import bus, libtmux (`client` and `server` only; the hooks never load them), worker.errors,
worker.agents' environment and markers, worker.hooks' event fields and (the pane watcher)
worker.runtime, the context it runs in; never the cli.
"""
