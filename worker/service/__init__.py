"""The long-running processes on one machine: `ib worker` (`process`) with its one blocking read of
commands and events (`inbox`), the operations it runs for commands from the bus (`operations`), everything
an operation needs (`runtime`); the `ib up` supervisor (`supervisor`, with its state as plain data in
`supervisor_state`); and clean stopping on signals (`signals`).

May import every other worker area; only worker.cli imports it.
"""
