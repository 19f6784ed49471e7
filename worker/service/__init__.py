"""The long-running processes on one machine: `ib worker` (`process`) with its one blocking read of
commands and events (`inbox`) and its heartbeat on a thread of its own (`pulse`), the operation it runs for
each type of command (`operations`), where a command runs (`route`: here, or on the agent's worker over the
bus), the pane watcher that runs the pane parser once a tick (`pane_watch`) and publishes the dialogs no
hook told (`dialog_events`); the `ib up` supervisor (`supervisor`, with its state as plain data in
`supervisor_state`); and clean stopping on signals (`signals`).

May import every other worker area; only worker.cli imports it.
"""
