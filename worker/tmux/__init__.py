"""The tmux layer: `client` (`Tmux`, sessions and panes by exact name, on libtmux's objects), `server`
(the libtmux `Server` whose `cmd` is the one place tmux runs: no secrets, a timeout, our errors), the
control-mode client a long-running process keeps open for its reads (`control`, its framing pure in
`control_mode`), the pure argument building and output parsing behind them (`parse`), the pane-state
parser that reads Claude Code's screen (`pane_state`, pure, with the screen's layout in `pane_screen`),
the dialogs read from it (`dialogs`), the window-name indicator's state machine the hooks drive
(`window_indicator`, pure), and the painter of a screen's colours into a PNG (`screenshot`, pure: rich +
Pillow).

May import bus, libtmux (`client` and `server` only; the hooks never load them), worker.errors,
worker.markers and worker.secret_env; nothing else of the worker. The pane watcher that runs the parser
once a tick is worker.service's.
"""
