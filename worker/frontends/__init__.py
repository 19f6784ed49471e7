"""Local front ends on the bus: the `ib watch` dashboard (shell, keys, its pure rendering, and `fleet_view`:
many agents paged or counted by project), the status block kept in CLAUDE.md (`status_block` pure,
`claude_md` the file on disk, `status_node` the consumer).
The tmux window-name indicator is worker.tmux's (`window_indicator`): the hooks drive it.

May import bus, worker.errors, worker.agents (the dashboard answers dialogs and sends text) and
worker.runtime, and worker.service's stack state (what `ib up` runs); never the cli. The worker starts
the status node (worker.service.process): the one import of the worker that runs up.
"""
