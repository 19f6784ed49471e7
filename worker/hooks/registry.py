"""The hooks `ib hook NAME` runs on the hot path: each name and the module whose `main(argv)` runs it.

Read by the console script (which dispatches them before anything heavy is imported) and by the typer
application (which gives them `--help`), so neither imports the other for it.
"""

HOT_HOOKS = {  # hook name → module with main(argv) -> exit code
    "post-tool-use": "worker.hooks.post_tool_use",
    "pre-tool-use": "worker.hooks.pre_tool_use",
    "primary-pre-tool-use": "worker.hooks.primary_guard",
    "stop": "worker.hooks.claude_stop",
    "session-start": "worker.hooks.session_start",
    "event": "worker.hooks.claude_event",
    "gemini": "worker.hooks.gemini_event",
    "tmux-status": "worker.hooks.tmux_status",
    "changes": "worker.hooks.changes",
    "codex": "worker.hooks.codex_hook",
    "codex-notify": "worker.hooks.codex_notify",
}
